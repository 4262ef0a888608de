// The best record per (task, template, device) that its template can still build: a record whose config is not a
// config of the template's space on that device (a log edited by hand, or an import of another tool's records)
// is passed over for the group's next fastest, with one note per group. `best` and every export that takes the
// best record per workload read it, so that what `best` shows is what the kernel pack and the AutoTVM log hold.
// A record of a template this build lacks, of another template version, or whose task or space cannot be built
// here cannot be judged and stays the group's best (the exporters say why they skip it).
// Thread safety: a free function; the log is used by the calling thread only.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {

// Best rows in TuningLog::Best's order; a group whose every successful record is outside its space is left out.
// `lookup` empty: FindTemplate. `task_spec` non-empty: only that task's rows (and notes). Only a group whose best
// record is outside its space has its other records read.
Result<std::vector<BestRow>> BestInSpace(TuningLog& log, const TemplateLookup& lookup, std::ostream& notes,
                                         const std::string& task_spec = "");

}  // namespace tunefleet
