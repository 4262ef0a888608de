#include "tuner/best_in_space.h"

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "common/printable.h"
#include "tuner/export_source.h"

namespace tunefleet {
namespace {

// Judges the configs of one (task, template, device): its space is built once. A group it cannot judge (a template
// this build lacks or of another version, a task or space that cannot be built here) passes every config.
class GroupJudge {
 public:
  GroupJudge(const BestRow& row, const TemplateLookup& lookup,
             const std::map<std::string, proto::DeviceInfo>& info_by_fingerprint) {
    const Template* tmpl = lookup(row.template_name);
    if (!tmpl || tmpl->version() != row.template_version) return;
    auto task = Task::Parse(row.task);
    auto info = info_by_fingerprint.find(row.device_fingerprint);
    if (!task.ok() || info == info_by_fingerprint.end()) return;
    auto space = tmpl->MakeSpace(*task, DeviceLimits::From(info->second));
    if (space.ok()) space_ = std::move(space).value();
  }

  // Why `config_json` is not one of the space's configs; empty when it is, or when that cannot be judged.
  std::string Outside(const std::string& config_json) const {
    if (!space_) return "";
    std::string why;
    const nlohmann::json j = ParseJson(config_json, &why);
    if (j.is_discarded()) return "its config is " + why;
    auto config = space_->FromJson(j);
    if (!config.ok()) return config.status().message();
    return space_->Check(*config);
  }

 private:
  std::optional<Space> space_;
};

}  // namespace

Result<std::vector<BestRow>> BestInSpace(TuningLog& log, const TemplateLookup& lookup_in, std::ostream& notes,
                                         const std::string& task_spec) {
  const TemplateLookup lookup = lookup_in ? lookup_in : [](const std::string& n) { return FindTemplate(n); };
  // One snapshot for every read below: `tune` or `import` may be writing the log meanwhile.
  TF_ASSIGN_OR_RETURN(ReadSnapshot snapshot, log.HoldReadSnapshot());
  TF_ASSIGN_OR_RETURN(auto devices, log.Devices());
  // A device whose description does not parse is not judged (its limits are unknown): its groups keep their best,
  // with one note where the first of them is read.
  std::map<std::string, proto::DeviceInfo> info_by_fingerprint;
  std::map<std::string, const DeviceRow*> undescribed;
  for (const DeviceRow& d : devices) {
    bool parsed = false;
    proto::DeviceInfo info = DeviceInfoOf(d, &parsed);
    if (parsed) {
      info_by_fingerprint[d.fingerprint] = std::move(info);
    } else {
      undescribed[d.fingerprint] = &d;
    }
  }

  TF_ASSIGN_OR_RETURN(auto best, log.Best(task_spec));
  std::vector<BestRow> out;
  for (BestRow& row : best) {
    if (auto u = undescribed.find(row.device_fingerprint); u != undescribed.end()) {
      notes << UndescribedDeviceNote(*u->second) << "\n";
      undescribed.erase(u);
    }
    const GroupJudge judge(row, lookup, info_by_fingerprint);
    std::string first_why = judge.Outside(row.record.config);
    if (first_why.empty()) {  // the common case: the group's other records are not read
      out.push_back(std::move(row));
      continue;
    }
    first_why = "record " + std::to_string(row.record.id) + ": " + first_why;
    size_t passed = 0;
    bool found = false;
    TF_RETURN_IF_ERROR(log.VisitRankedSuccesses(row.record.task_id, row.record.template_id, row.record.device_id,
                                                [&](BestRow&& candidate) {
                                                  if (!judge.Outside(candidate.record.config).empty()) {
                                                    ++passed;
                                                    return true;
                                                  }
                                                  out.push_back(std::move(candidate));
                                                  found = true;
                                                  return false;
                                                }));
    notes << Printable(row.task) << " (" << Printable(row.template_name) << ") on " << Printable(row.device_name)
          << " [" << Printable(row.device_fingerprint) << "]: ";
    if (found) {
      notes << passed << " faster config(s) passed over, not in the template's space ("
            << Printable(first_why) << ")\n";
    } else {
      notes << "left out: none of its " << passed << " successful config(s) is in the template's space ("
            << Printable(first_why) << ")\n";
    }
  }
  return out;
}

}  // namespace tunefleet
