// RunTune: one `tunefleet tune` run. Locks its tasks in the log (tuner/log_run_lock.h: Unavailable when another
// run tunes one of them), leases devices, builds a TaskTuner per (task, template),
// lets the TaskScheduler spread the trial budget over the tasks, measures through the MeasureSession and
// records every result as it arrives. Resume is the default: records already in the log count towards the
// budget and are never measured again.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "common/status.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/task.h"
#include "tuner/deferred_log.h"
#include "tuner/measure_session.h"
#include "tuner/task_tuner.h"
#include "tuner/tune_summary.h"

namespace tunefleet {

struct TuneTask {
  Task task;
  int64_t count = 1;  // occurrences in the model
  std::string model;  // the model's file name, without its folder ("" for a --task spec)
};

// Results a confirmed config gets beyond its first: with 3, its lower median is a real middle one.
inline constexpr size_t kConfirmRepeats = 2;
// Rounds of --confirm at most: a round after the first measures again where a config with one result became the
// best (the confirmed configs' medians rose past it).
inline constexpr size_t kConfirmRounds = 4;

struct TuneOptions {
  SessionOptions session;
  std::string db;
  std::vector<TuneTask> tasks;
  std::string template_name;    // empty: every template that fits the task and the device
  uint64_t trials = 0;          // total over all tasks, recorded ones included; 0 with all_trials
  bool all_trials = false;      // --trials all: every valid config of every space
  double time_budget = 0;       // seconds of wall time; 0 = none. A batch still out at the end is abandoned
  uint64_t early_stopping = 0;  // per task: stop after this many trials without a new best; 0 = never
  size_t batch_size = 16;       // configs sent to the tracker at once
  // After tuning, each unit's `confirm` best configs are measured kConfirmRepeats more times (beyond --trials), and
  // a config's best is then the lower median of its results: a lucky run does not pick the kernel. Again (up to
  // kConfirmRounds rounds) where a config measured once became the best. 0 = off.
  size_t confirm = 0;
  TaskTunerOptions tuner;
  std::string args_json;        // the command line, stored with the session
  // A stop request (SIGINT/SIGTERM in `tune`) ends the run promptly, from any thread: no new batch is proposed,
  // the batch in flight is abandoned (its results that already arrived are recorded, the rest are left for
  // the next run), the lease is released and RunTune returns a summary with `interrupted` set.
  std::stop_token stop;
};

// The refusal when no template runs `task` on a device of `limits` (named `device_name` in it): "no template can run
// SPEC on DEVICE (TEMPLATE: why; ...)", with the reasons of the templates of the task's op. `tune` and `measure`
// say it alike.
Status NoTemplateRuns(const Task& task, const DeviceLimits& limits, const std::string& device_name);

// InvalidArgument when no task can be tuned on any device (with `template_name`, when not empty): a template
// that does not fit the task whatever the device. Needs no tracker; `tune` asks it before leasing a device.
Status CheckSomeDeviceRuns(const std::vector<TuneTask>& tasks, const std::string& template_name);

// Tunes into `log`, the tuning log at opts.db, which the caller opened as a DeferredLog (so that a bad log is said
// before the tracker is asked, and a new one is created only once the tracker has leased a device).
Result<TuneSummary> RunTune(const TuneOptions& opts, DeferredLog& log);

}  // namespace tunefleet
