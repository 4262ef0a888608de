// TaskTuner: the state of tuning one (task, template) for the run's first device model — its space, its strategy,
// what the log already holds for that model (resume), and the best so far. A lease of several models records each
// result under its own model, and the best is ranked per (model, config), as TuningLog::Best ranks it. It decides
// and records; it never talks to the tracker.
// Thread safety: used by one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"
#include "search-spaces/template.h"
#include "tuner/strategy.h"

namespace tunefleet {

class TuningLog;

struct MeasureSettings {
  uint32_t warmup = 1;
  uint32_t number = 4;
  uint32_t repeat = 3;
  uint32_t min_repeat_ms = 0;
  uint32_t timeout_ms = 20000;  // whole job on the agent
};

struct TaskTunerOptions {
  StrategyOptions strategy;
  MeasureSettings measure;
  bool fresh = false;          // ignore what the log holds (records stay; they are not reused)
  bool transfer = true;        // warm-start the model from other tasks/devices of the template
  bool transfer_refresh = true;  // and read them again before each later plan, when they grew (WarmStartFromLog)
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t count = 1;           // occurrences of the task in the model
  std::string model;           // the model's file name ("" for a --task spec): its count in the log's workload
};

// One candidate ready to send.
struct CandidateJob {
  uint64_t index = 0;
  proto::KernelProgram program;
};

class TaskTuner {
 public:
  // Registers task/template in the log, builds the space, replays the unit's recorded results into the strategy.
  // Other tasks' and devices' records of the template warm-start it at the first Propose, and again before a later
  // plan when the run's other units recorded more (see WarmStartFromLog).
  static Result<std::unique_ptr<TaskTuner>> Create(const Task& task, const Template& tmpl,
                                                   const DeviceLimits& limits, const TaskTunerOptions& opts,
                                                   TuningLog* log);

  // Up to n new candidates. A config whose program cannot be generated is recorded at once as status 2 and
  // does not appear in the returned list (it still counts as a trial).
  Result<std::vector<CandidateJob>> Propose(size_t n);
  // The template's fallback config alone, when it is valid and not yet measured (empty otherwise; a fallback whose
  // program cannot be generated is recorded at once as status 2). Unlike Propose it does not read the log for
  // a warm start, so the unit's first batch still learns from everything recorded before it.
  Result<std::vector<CandidateJob>> ProposeFallback();
  // Jobs that measure the `configs` best configs so far (by the lower median of their results on one device model)
  // `times` more times each, for `tune --confirm`: a config's best run may have been lucky. Those that have
  // 1 + `times` results already are not measured again, a config among the best on two models is proposed once, and
  // a unit with fewer than two configs that ran has nothing to confirm. (The tracker may run a repeat on another
  // model of the lease: it then counts for that model.)
  Result<std::vector<CandidateJob>> ProposeRepeats(size_t configs, size_t times);
  // Records one measurement (commits at once) and tells the strategy; a `repeat` (of ProposeRepeats) is no trial
  // and is not told to the strategy, but moves its config's median and so maybe the best.
  // `device_id` 0 = the device given in the options.
  Status Record(uint64_t index, const proto::MeasureResult& result, int64_t device_id = 0, bool repeat = false);

  const Task& task() const { return task_; }
  const Template& tmpl() const { return tmpl_; }
  const Space& space() const { return space_; }
  uint64_t trials() const { return trials_; }              // records of this run and resumed ones
  // Trials beyond the fallback config: those that tuned.
  uint64_t tuning_trials() const { return trials_ - (fallback_recorded_ ? 1 : 0); }
  uint64_t resumed() const { return resumed_; }            // configs the log held at start (its trials)
  uint64_t resumed_repeats() const { return resumed_repeats_; }  // and their repeated results (tune --confirm)
  bool exhausted() const { return exhausted_; }
  bool has_best() const { return best_cost_ > 0; }
  // Successful results of the best config on its device model (0 while none ran): 1 until --confirm measured it.
  size_t best_results() const;
  // Seconds: the lowest over (device model, config) of the lower median of its results (one result: itself).
  double best_cost() const { return best_cost_; }
  double flops() const { return flops_; }  // of one run of the task's kernel
  double best_gflops() const { return has_best() ? flops_ / best_cost_ / 1e9 : 0; }
  uint64_t best_index() const { return best_index_; }
  // Of the last result: -1 when it failed, NaN before the first.
  double last_gflops() const { return last_gflops_; }
  uint64_t trials_since_best() const { return trials_ - best_trial_; }
  int64_t count() const { return opts_.count; }
  // Cost of the template's fallback config (seconds): the lower median of its successful results, as every config's;
  // 0 while it has none.
  double fallback_cost() const;
  // Whether the log or this run holds a result of the fallback config (a failure included).
  bool fallback_recorded() const { return fallback_recorded_; }
  std::string strategy_status() const { return strategy_->StatusLine(); }
  // Best cost after each trial in order, 0 while none succeeded (for the scheduler's improvement rate).
  const std::vector<double>& curve() const { return curve_; }

 private:
  TaskTuner(const Task& task, const Template& tmpl, Space space, const TaskTunerOptions& opts, TuningLog* log);
  Status ReplayOwn();
  // Reads the template's records of other tasks and devices and warm-starts the strategy from them. A refresh
  // (a later plan) does so only when they grew by a tenth, and at least 16 records, since the last read.
  Status WarmStartFromLog(bool refresh);
  // `record_id`: the log's id of the result, which breaks ties between equal costs as TuningLog::Best does;
  // `device_id`: the log's device row it is filed under (a lease can hold several device models).
  void Observe(uint64_t index, bool ok, double cost, bool repeat, int64_t record_id, int64_t device_id);
  void RankByMedians();
  proto::TimingSpec Timing() const;
  Status AddCandidate(uint64_t index, std::vector<CandidateJob>* jobs);

  Task task_;
  const Template& tmpl_;
  Space space_;
  DeviceLimits limits_;
  TaskTunerOptions opts_;
  TuningLog* log_;  // not owned
  std::unique_ptr<Strategy> strategy_;
  int64_t task_id_ = 0;
  int64_t template_id_ = 0;
  double flops_ = 0;
  uint64_t trials_ = 0;
  uint64_t resumed_ = 0;
  uint64_t resumed_repeats_ = 0;
  bool exhausted_ = false;
  bool warm_start_read_ = false;  // WarmStartFromLog ran (at the first Propose)
  size_t history_records_ = 0;    // other tasks' records behind the strategy's history, at the last warm start
  double best_cost_ = 0;
  uint64_t best_index_ = 0;
  uint64_t best_trial_ = 0;
  double last_gflops_ = std::numeric_limits<double>::quiet_NaN();  // NaN: no result yet
  std::vector<double> curve_;
  // (device row, config index) -> (mean cost, record id) of its successful results. A config ranks at its lower
  // median result on one device model, and equal costs rank by that result's record id: the order of
  // TuningLog::Best, so the run's best is the fastest of best's rows for the unit (one row per device model).
  std::map<std::pair<int64_t, uint64_t>, std::vector<std::pair<double, int64_t>>> ok_costs_;
  int64_t best_device_ = 0;  // the device row of the best config's results
  std::map<uint64_t, uint64_t> first_trial_;          // config index -> the trial that measured it first
  uint64_t fallback_index_ = 0;
  bool fallback_seen_ = false;  // proposed or measured (in this run or an earlier one)
  bool fallback_recorded_ = false;
};

}  // namespace tunefleet
