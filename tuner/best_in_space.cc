#include "tuner/best_in_space.h"

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/printable.h"
#include "tuner/export_source.h"

namespace tunefleet {
namespace {

// Why `row`'s config is not one of its space's configs; empty when it is, or when that cannot be judged here.
std::string OutsideSpace(const BestRow& row, const TemplateLookup& lookup,
                         const std::map<std::string, proto::DeviceInfo>& info_by_fingerprint) {
  const Template* tmpl = lookup(row.template_name);
  if (!tmpl || tmpl->version() != row.template_version) return "";
  auto task = Task::Parse(row.task);
  auto info = info_by_fingerprint.find(row.device_fingerprint);
  if (!task.ok() || info == info_by_fingerprint.end()) return "";
  auto space = tmpl->MakeSpace(*task, DeviceLimits::From(info->second));
  if (!space.ok()) return "";
  const nlohmann::json j = nlohmann::json::parse(row.record.config, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "its config is not JSON";
  auto config = space->FromJson(j);
  if (!config.ok()) return config.status().message();
  return space->Check(*config);
}

bool SameGroup(const BestRow& a, const BestRow& b) {
  return a.record.task_id == b.record.task_id && a.record.template_id == b.record.template_id &&
         a.record.device_id == b.record.device_id;
}

}  // namespace

Result<std::vector<BestRow>> BestInSpace(TuningLog& log, const TemplateLookup& lookup_in, std::ostream& notes) {
  const TemplateLookup lookup = lookup_in ? lookup_in : [](const std::string& n) { return FindTemplate(n); };
  TF_ASSIGN_OR_RETURN(auto devices, log.Devices());
  std::map<std::string, proto::DeviceInfo> info_by_fingerprint;
  for (const DeviceRow& d : devices) info_by_fingerprint[d.fingerprint] = DeviceInfoOf(d);

  TF_ASSIGN_OR_RETURN(auto best, log.Best());
  bool all_in_space = true;
  for (const BestRow& b : best) all_in_space = all_in_space && OutsideSpace(b, lookup, info_by_fingerprint).empty();
  if (all_in_space) return best;  // the common case: no need to rank every record

  TF_ASSIGN_OR_RETURN(auto ranked, log.RankedSuccesses());
  std::vector<BestRow> out;
  for (size_t begin = 0; begin < ranked.size();) {
    size_t end = begin + 1;
    while (end < ranked.size() && SameGroup(ranked[begin], ranked[end])) ++end;
    size_t passed = 0;
    std::string first_why;
    for (size_t i = begin; i < end; ++i) {
      std::string why = OutsideSpace(ranked[i], lookup, info_by_fingerprint);
      if (why.empty()) {
        out.push_back(std::move(ranked[i]));
        break;
      }
      if (passed++ == 0) first_why = "record " + std::to_string(ranked[i].record.id) + ": " + why;
    }
    if (passed > 0) {
      const BestRow& g = ranked[begin];
      notes << Printable(g.task) << " (" << Printable(g.template_name) << ") on " << Printable(g.device_name) << ": "
            << passed << " faster record(s) passed over, their config not in the template's space ("
            << Printable(first_why) << ")" << (passed == end - begin ? "; no record of this workload is left" : "")
            << "\n";
    }
    begin = end;
  }
  return out;
}

}  // namespace tunefleet
