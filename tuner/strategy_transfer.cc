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
  HistoryCollapser c;
  for (const HistoryRecord& r : records) c.Add(r.task_spec, r.device_fingerprint, r.config_json, r.ok, r.cost, r.flops);
  return c.Rows();
}

uint32_t HistoryCollapser::Intern(std::map<std::string, uint32_t>& ids, std::vector<const std::string*>& names,
                                  const std::string& name) {
  auto [it, inserted] = ids.emplace(name, static_cast<uint32_t>(names.size()));
  if (inserted) names.push_back(&it->first);
  return it->second;
}

void HistoryCollapser::Add(const std::string& task_spec, const std::string& device_fingerprint,
                           std::string config_json, bool ok, double cost, double flops) {
  const uint32_t task = Intern(spec_ids_, specs_, task_spec);
  const uint32_t device = Intern(fingerprint_ids_, fingerprints_, device_fingerprint);
  auto [it, inserted] = row_of_.emplace(std::make_tuple(task, device, std::move(config_json)), rows_.size());
  if (inserted) {
    rows_.push_back({task, device, flops, 0, {}});
    configs_.push_back(&std::get<2>(it->first));
  }
  Row& row = rows_[it->second];
  ++row.records;
  if (ok && cost > 0) row.ok_costs.push_back(cost);
}

std::vector<HistoryRecord> HistoryCollapser::Rows(size_t* records) const {
  std::map<std::pair<uint32_t, uint32_t>, size_t> configs;  // per (task, device)
  for (const Row& r : rows_) ++configs[{r.task, r.device}];
  std::vector<HistoryRecord> out;
  if (records != nullptr) *records = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (configs[{r.task, r.device}] < 2) continue;
    if (records != nullptr) *records += r.records;
    HistoryRecord h{*specs_[r.task], *fingerprints_[r.device], *configs_[i], false, 0, r.flops};
    if (!r.ok_costs.empty()) {
      h.ok = true;
      h.cost = LowerMedian(r.ok_costs);
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace tunefleet
