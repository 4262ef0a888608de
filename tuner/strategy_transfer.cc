#include "tuner/strategy_transfer.h"

#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "tuner/strategy_common.h"

namespace tunefleet {
namespace {

// The values of one knob as written in JSON: a number, or an array of numbers (split factors).
std::optional<std::vector<int64_t>> Values(const nlohmann::json& v) {
  if (v.is_number_integer()) return std::vector<int64_t>{v.get<int64_t>()};
  if (v.is_boolean()) return std::vector<int64_t>{v.get<bool>() ? 1 : 0};
  if (!v.is_array()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer()) return std::nullopt;
    out.push_back(e.get<int64_t>());
  }
  return out;
}

double LogDistance(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // Values <= 0 (e.g. "off" flags or negative list values) compare linearly on a log-like scale.
    auto lg = [](int64_t x) { return x > 0 ? std::log2(static_cast<double>(x)) : static_cast<double>(x) - 1; };
    d += std::abs(lg(a[i]) - lg(b[i]));
  }
  return d;
}

}  // namespace

std::optional<MappedConfig> MapConfigJson(const Space& space, const std::string& config_json) {
  const nlohmann::json j = ParseJson(config_json);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Result<Config> exact = space.FromJson(j);
  if (exact.ok()) return MappedConfig{std::move(exact).value(), true};

  MappedConfig m;
  m.exact = true;
  for (const Knob& k : space.knobs()) {
    auto it = j.find(k.name);
    if (it == j.end()) return std::nullopt;
    std::optional<std::vector<int64_t>> vals = Values(*it);
    if (!vals) return std::nullopt;
    size_t best = k.choices.size();
    double best_d = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < k.choices.size(); ++c) {
      const double d = LogDistance(k.choices[c], *vals);
      if (d < best_d) {
        best_d = d;
        best = c;
      }
    }
    if (best == k.choices.size()) return std::nullopt;
    if (best_d > 0) m.exact = false;
    m.config.push_back(static_cast<uint32_t>(best));
  }
  return m;
}

std::vector<HistoryRecord> CollapseHistory(const std::vector<HistoryRecord>& records) {
  std::vector<HistoryRecord> out;
  std::vector<std::vector<double>> ok_costs;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> row_of;
  for (const HistoryRecord& r : records) {
    auto [it, inserted] = row_of.emplace(std::make_tuple(r.task_spec, r.device_fingerprint, r.config_json), out.size());
    if (inserted) {
      out.push_back(r);
      out.back().ok = false;
      out.back().cost = 0;
      ok_costs.emplace_back();
    }
    if (r.ok && r.cost > 0) ok_costs[it->second].push_back(r.cost);
  }
  std::map<std::pair<std::string, std::string>, size_t> configs;  // per (task, device)
  for (size_t i = 0; i < out.size(); ++i) {
    ++configs[{out[i].task_spec, out[i].device_fingerprint}];
    if (ok_costs[i].empty()) continue;
    out[i].ok = true;
    out[i].cost = LowerMedian(ok_costs[i]);
  }
  std::erase_if(out, [&](const HistoryRecord& r) { return configs[{r.task_spec, r.device_fingerprint}] < 2; });
  return out;
}

}  // namespace tunefleet
