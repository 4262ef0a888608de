#include "tuner/export_best.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/json_parse.h"
#include "common/printable.h"
#include "tuner/milliseconds.h"

namespace tunefleet {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// The config as compact JSON; a config that is not JSON (should not happen) is shown as stored.
nlohmann::json ConfigJson(const std::string& text) {
  auto j = ParseJson(text);
  return j.is_discarded() ? nlohmann::json(text) : j;
}

}  // namespace

std::string FormatBestTable(const std::vector<BestRow>& rows, const std::set<std::string>& shared_names) {
  std::vector<std::vector<std::string>> cells = {
      {"task", "template", "device", "best_ms", "gflops", "record", "config"}};
  // Two device models of one name (one phone model on two drivers) are told apart by their fingerprints, as the
  // report tells them.
  auto shared_name = [&rows, &shared_names](const BestRow& r) {
    return shared_names.count(r.device_name) > 0 || std::any_of(rows.begin(), rows.end(), [&r](const BestRow& o) {
      return o.device_name == r.device_name && o.device_fingerprint != r.device_fingerprint;
    });
  };
  for (const auto& r : rows) {
    const std::string device =
        Printable(r.device_name) + (shared_name(r) ? " (" + Printable(r.device_fingerprint) + ")" : "");
    cells.push_back({Printable(r.task), Printable(r.template_name) + "@" + std::to_string(r.template_version), device,
                     FormatMilliseconds(r.record.mean_cost * 1e3), Fixed(r.gflops(), 2), std::to_string(r.record.id),
                     ConfigJson(r.record.config).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::json BestToJson(const std::vector<BestRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"task", r.task},
                   {"template", r.template_name},
                   {"template_version", r.template_version},
                   {"device", r.device_name},
                   {"device_fingerprint", r.device_fingerprint},
                   {"best_ms", r.record.mean_cost * 1e3},
                   {"gflops", r.gflops()},
                   {"record_id", r.record.id},
                   {"config", ConfigJson(r.record.config)}});
  }
  return out;
}

}  // namespace tunefleet
