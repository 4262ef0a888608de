// What every exporter reads from a tuning log: each record (or only the best per (task, template, device))
// with its task, template and device rows joined in, and the device description parsed back.
// Thread safety: free functions; the TuningLog is used by the calling thread only.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {

// A record with its rows, which it shares with the other records of its ExportItems: a copy of the task, template
// and device rows (a device's description is ~1.3 KB, parsed again as `info`) in each item held ~3.4 KB per record,
// and `export` of a log of 1.8 million records took 6.3 GB.
struct ExportItem {
  const TaskRow& task;
  const TemplateRow& tmpl;
  const DeviceRow& device;
  const proto::DeviceInfo& info;  // parsed from device.info_json (fingerprint, name, vendor at least)
  RecordRow record;
};

// The items and the rows they refer to (moving it keeps them where they are; a copy would refer to the original's).
struct ExportItems {
  ExportItems() = default;
  ExportItems(ExportItems&&) = default;
  ExportItems& operator=(ExportItems&&) = default;
  ExportItems(const ExportItems&) = delete;
  ExportItems& operator=(const ExportItems&) = delete;

  std::vector<TaskRow> tasks;
  std::vector<TemplateRow> templates;
  std::vector<DeviceRow> devices;
  std::map<int64_t, proto::DeviceInfo> infos;  // by device id
  std::vector<ExportItem> items;

  auto begin() const { return items.begin(); }
  auto end() const { return items.end(); }
  size_t size() const { return items.size(); }
};

// Records in id order; with `best_only`, only the fastest successful record of each (task, template, device) whose
// config is in its template's space (tuner/best_in_space.h, whose notes go to `notes`; `lookup` empty: FindTemplate).
// A device whose description in the log does not parse gets one note (UndescribedDeviceNote), where a record of it
// is exported.
Result<ExportItems> CollectExportItems(TuningLog& log, bool best_only, const TemplateLookup& lookup,
                                       std::ostream& notes);

// The device's description as the agent sent it (an empty one where the log's JSON does not parse), with the row's
// fingerprint, and its name and vendor where the JSON lacks them. `parsed`, when given, says whether the JSON parsed.
proto::DeviceInfo DeviceInfoOf(const DeviceRow& row, bool* parsed = nullptr);
// What the readers say of a device whose description does not parse, after its name.
inline constexpr const char* kUndescribedDevice = "does not parse as a device description (damaged)";
// The one note of the exporters and `best` about such a device: what it is, and what its missing limits mean.
std::string UndescribedDeviceNote(const DeviceRow& row);

// Why an item cannot be exported with this build's template of its name (of `built_version`): it was measured with
// another version, whose knobs may mean something else. Empty when the versions agree.
std::string OtherTemplateVersion(const ExportItem& item, int built_version);

}  // namespace tunefleet
