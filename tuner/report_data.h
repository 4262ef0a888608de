// Fills the report's data struct (report_html.h) from a tuning log: one series per (task, template, device) that
// has records, in order of first record; devices with their details; the occurrence count of a task from its
// workload JSON's "count" and "models" (written by the tuner when the task comes from a model: tuner/task_workload.h).
// Thread safety: uses `log` from the calling thread only.
#pragma once

#include <ostream>
#include <string>

#include "common/status.h"
#include "storage/tuning_log.h"
#include "tuner/report_html.h"

namespace tunefleet {

// Each series' best as `best` judges it (BestInSpace), whose notes go to `notes`.
Result<ReportData> LoadReportData(TuningLog& log, std::ostream& notes);

}  // namespace tunefleet
