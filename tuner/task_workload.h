// A task's workload JSON in the tuning log (tasks.workload): its op, params and precision, and how often the models
// tuned into the log run it. `count` is the sum over the models of `models` (model file name -> occurrences), so a
// log holding several models' tasks gives each shared task the runs of all of them, and the report's
// sum of count x latency is the time of running each model once. The tune run of a model adds or replaces its own
// entry; a --task spec names no model and adds nothing (its count is 1 until a model names the task).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "search-spaces/task.h"

namespace tunefleet {

// The workload JSON of a task first recorded by a run; `model` is "" for a task not from a model.
std::string LogWorkloadJson(const Task& task, int64_t count, const std::string& model);

// `stored` with `model`'s occurrences set to `count` and its count the sum again; nothing when it already says so
// or when `model` is "". A workload written before counts were kept by model (no "models") counted one model's
// occurrences, most likely the same model's (a resumed run): it is replaced. Text that is not a JSON object is
// replaced by a fresh workload of `task`.
std::optional<std::string> WithModelCount(const std::string& stored, const Task& task, int64_t count,
                                          const std::string& model);

// The occurrences by model a stored workload lists (empty for none or text that is not such JSON).
std::map<std::string, int64_t> ModelCounts(const std::string& stored);

}  // namespace tunefleet
