#include "tuner/export_source.h"

#include <map>
#include <set>

#include <google/protobuf/util/json_util.h>

#include "common/printable.h"
#include "tuner/best_in_space.h"

namespace tunefleet {

proto::DeviceInfo DeviceInfoOf(const DeviceRow& d, bool* parsed) {
  proto::DeviceInfo info;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  const bool ok = google::protobuf::util::JsonStringToMessage(d.info_json, &info, opts).ok();
  if (!ok) info.Clear();
  if (parsed) *parsed = ok;
  // The columns are authoritative for identity.
  info.set_fingerprint(d.fingerprint);
  if (info.name().empty()) info.set_name(d.name);
  if (info.vendor().empty()) info.set_vendor(d.vendor);
  return info;
}

Result<ExportItems> CollectExportItems(TuningLog& log, bool best_only, const TemplateLookup& lookup,
                                       std::ostream& notes) {
  // One snapshot for every read below: `tune` or `import` may be writing the log meanwhile.
  TF_ASSIGN_OR_RETURN(ReadSnapshot snapshot, log.HoldReadSnapshot());
  ExportItems out;
  TF_ASSIGN_OR_RETURN(out.tasks, log.Tasks());
  TF_ASSIGN_OR_RETURN(out.templates, log.Templates());
  TF_ASSIGN_OR_RETURN(out.devices, log.Devices());
  const auto& tasks = out.tasks;
  const auto& templates = out.templates;
  const auto& devices = out.devices;
  TF_ASSIGN_OR_RETURN(auto records, log.Records(0, 0, 0));
  std::set<int64_t> keep;
  if (best_only) {
    TF_ASSIGN_OR_RETURN(auto best, BestInSpace(log, lookup, notes));
    for (const auto& b : best) keep.insert(b.record.id);
  }
  std::map<int64_t, const TaskRow*> task_by_id;
  for (const auto& t : tasks) task_by_id[t.id] = &t;
  std::map<int64_t, const TemplateRow*> tmpl_by_id;
  for (const auto& t : templates) tmpl_by_id[t.id] = &t;
  std::map<int64_t, const DeviceRow*> dev_by_id;
  std::set<int64_t> undescribed;  // devices whose description in the log does not parse
  for (const auto& d : devices) {
    bool parsed = true;
    dev_by_id[d.id] = &d;
    out.infos[d.id] = DeviceInfoOf(d, &parsed);
    if (!parsed) undescribed.insert(d.id);
  }

  for (auto& r : records) {
    if (best_only && !keep.count(r.id)) continue;
    auto t = task_by_id.find(r.task_id);
    auto tp = tmpl_by_id.find(r.template_id);
    auto d = dev_by_id.find(r.device_id);
    if (t == task_by_id.end() || tp == tmpl_by_id.end() || d == dev_by_id.end()) {
      return Status::Corruption(log.path() + ": record " + std::to_string(r.id) + " refers to a missing row");
    }
    // Said once per device, where a record of it is exported (with --best-only, BestInSpace says it): its limits
    // (images, work-group size) and driver are unknown, which the exporters would otherwise report as the device's
    // ("device has no image support").
    if (undescribed.erase(r.device_id) != 0 && !best_only) {
      notes << UndescribedDeviceNote(*d->second) << "\n";
    }
    out.items.push_back({*t->second, *tp->second, *d->second, out.infos.at(r.device_id), std::move(r)});
  }
  return out;
}

std::string UndescribedDeviceNote(const DeviceRow& d) {
  return Printable(d.name) + " [" + Printable(d.fingerprint) + "]: the log's description of this device " +
         kUndescribedDevice + ": its limits and driver are unknown here, so what needs them is skipped or not " +
         "judged, and its driver fields are written empty";
}

std::string OtherTemplateVersion(const ExportItem& item, int built_version) {
  if (item.tmpl.version == built_version) return "";
  return "measured with template version " + std::to_string(item.tmpl.version) + ", this build has version " +
         std::to_string(built_version);
}

}  // namespace tunefleet
