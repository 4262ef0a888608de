// What every exporter reads from a tuning log: each record (or only the best per (task, template, device))
// with its task, template and device rows joined in, and the device description parsed back.
// Thread safety: free functions; the TuningLog is used by the calling thread only.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "storage/tuning_log.h"

namespace tunefleet {

struct ExportItem {
  TaskRow task;
  TemplateRow tmpl;
  DeviceRow device;
  proto::DeviceInfo info;  // parsed from device.info_json (fingerprint, name, vendor at least)
  RecordRow record;
};

// Records in id order; with `best_only`, only the fastest successful record of each (task, template, device).
Result<std::vector<ExportItem>> CollectExportItems(TuningLog& log, bool best_only);

// Why an item cannot be exported with this build's template of its name (of `built_version`): it was measured with
// another version, whose knobs may mean something else. Empty when the versions agree.
std::string OtherTemplateVersion(const ExportItem& item, int built_version);

}  // namespace tunefleet
