// Export of a tuning log as AutoTVM log lines (v0.2), one JSON object per line, so that
// `tvmc compile --tuning-records` and `autotvm.apply_history_best` can use what tunefleet measured:
//   {"input": [target, task_name, args, {}],
//    "config": {"index": i, "code_hash": null, "entity": [[knob, "sp"|"ot", value], ...]},
//    "result": [[costs in seconds] or [1e9] on error, error_no, all_cost, timestamp],
//    "version": 0.2, "tvm_version": "0.8.0"}
// Only templates that mirror TVM's knobs export; every other record is skipped with a note. A config measured more
// than once is written once, at its lower median result, so that TVM (which takes a workload's lowest cost over all
// lines) picks what `best` does, not a config's one lucky run; its failed results are written as they are.
// Thread safety: free functions; the log is used by the calling thread only.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/export_autotvm_workload.h"

namespace tunefleet {

struct AutotvmExportOptions {
  bool best_only = false;
  TemplateLookup lookup;  // empty: FindTemplate
};

struct ExportCounts {
  size_t written = 0;
  size_t skipped = 0;
  size_t repeats = 0;  // successful results of configs measured more than once, beside the median one written
};

// Writes the lines to `out`; one note per skipped (task, template) to `notes`.
Result<ExportCounts> ExportAutotvm(TuningLog& log, const AutotvmExportOptions& opts, std::ostream& out,
                                   std::ostream& notes);

}  // namespace tunefleet
