// Import of AutoTVM log lines (JSON lines of v0.2, and of v0.1 as TVM before 0.6 wrote them) into a tuning log:
// the reverse of export_autotvm.
// Each line becomes one record of a new session; its device is known only by its target string
// (fingerprint "autotvm:<target>"). Lines already imported (same task, template, device, config and
// timestamp) are not added twice. Lines of TVM tasks without a tunefleet template are skipped with a note.
// Thread safety: the log is used by the calling thread only.
#pragma once

#include <chrono>
#include <functional>
#include <istream>
#include <ostream>
#include <stop_token>
#include <string>

#include "common/status.h"
#include "storage/tuning_log.h"
#include "tuner/deferred_log.h"
#include "tuner/export_autotvm.h"

namespace tunefleet {

struct ImportCounts {
  size_t added = 0;
  size_t duplicate = 0;
  size_t skipped = 0;
  // Of `added`: configs the target's device cannot run by this build's rules (a CPU's records, whose export names a
  // GPU target): kept, but `best` and the exports pass them over, so the import says how many.
  size_t outside_space = 0;
  bool interrupted = false;  // `stop` was requested: the lines after it were not read
};

// Progress lines of a long import, for the person waiting on it: "SOURCE: N lines read (R a second): A records
// added, D already present, S skipped", at most one each `every`, the first once `every` has passed (a short import
// prints none).
struct ImportProgress {
  std::ostream* out = nullptr;  // null: no progress lines
  std::chrono::steady_clock::duration every = std::chrono::seconds(5);
  // The time now; empty: std::chrono::steady_clock::now. Tests step a clock of their own.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

// `source` names the input in notes and errors ("FILE:LINE: ..."). A line that is not JSON or not an
// AutoTVM record (or a result without error whose costs are not seconds above 0) is an error naming the line;
// nothing before it is lost (each record commits at once), and the import's session ends as "failed". A stop
// request (Ctrl-C) is honoured between lines: the session ends as "interrupted".
// A deferred `log` is created only when the import first writes to it (the device, task and template of the first
// line that has a template here): an import refused, or stopped, before then leaves no new log behind.
Result<ImportCounts> ImportAutotvm(std::istream& in, const std::string& source, DeferredLog& log,
                                   const TemplateLookup& lookup, std::ostream& notes, std::stop_token stop = {},
                                   const ImportProgress& progress = {});
// The same into a log that is open.
Result<ImportCounts> ImportAutotvm(std::istream& in, const std::string& source, TuningLog& log,
                                   const TemplateLookup& lookup, std::ostream& notes, std::stop_token stop = {},
                                   const ImportProgress& progress = {});

}  // namespace tunefleet
