// Offline replay of a fully recorded search space: strategies propose configs, the recorded results answer
// them instantly, and we count how many trials each strategy needs to reach a target share of the best
// recorded performance. No device needed. Used by `tunefleet simulate` to compare strategies honestly.
// Thread safety: free functions over caller-owned values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"
#include "storage/tuning_log.h"
#include "tuner/strategy.h"

namespace tunefleet {

class Template;

// The recorded outcome of every config of one (task, template, device).
struct ReplayTable {
  std::unordered_map<uint64_t, Observation> by_index;  // ok at the lower median of its ok results, if any
  // Every successful result of each config, in record order (what `--observe pass` draws from).
  std::unordered_map<uint64_t, std::vector<double>> ok_costs;
  double best_cost = 0;                                // seconds; 0 when nothing ran
  size_t unmapped = 0;                                 // records whose config is not in the space
  // Records of configs the space holds but rejects on the replayed device (another template version, other device
  // limits): no strategy proposes them, so they are left out, also of the best.
  size_t invalid = 0;
  // Configs with a failed record beside their successful ones: replayed at their successful results alone.
  size_t mixed = 0;
  // Configs whose number of records differs from the most common number, `usual_records` (a pass that was
  // interrupted, or --confirm): each is replayed at the lower median of its own results, of a different count.
  size_t uneven = 0;
  size_t usual_records = 0;
};

// Keys records by their config JSON mapped through `space` (tuner/recorded_config.h; the stored config_index only
// where a record holds no config text); a record whose config is not in the space or not valid there is counted
// (unmapped, invalid) and left out.
ReplayTable BuildReplayTable(const Space& space, const std::vector<RecordRow>& records);

// The most seeds (runs per strategy) a replay takes. One seed of xgb on a space of 10^5 configs takes seconds, so
// 10,000 seeds of two strategies are hours already; and the median of so many runs no longer moves by a trial.
// A larger --seeds (2147483647 ran for ever, silent) is a typo, refused at once.
inline constexpr int kMaxSimulateSeeds = 10000;

struct SimulateOptions {
  std::string tuner = "xgb";
  std::string baseline = "random";
  int seeds = 5;                  // runs per strategy, seeds 1..seeds, at most kMaxSimulateSeeds
  double target = 0.95;           // share of the best recorded performance (best_cost / cost)
  size_t batch = 16;              // configs per NextBatch, as a tuner with 16 devices would ask
  size_t plan_size = 64;
  std::string xgb_objective = "auto";
  int xgb_ensemble = 5;    // StrategyOptions::xgb_ensemble
  double xgb_kappa = 1.0;  // StrategyOptions::xgb_kappa
  size_t prior_pool = StrategyOptions{}.prior_pool;  // StrategyOptions::prior_pool
  // What a strategy is told of a replayed config: "median", its lower median (what the target is judged by), or
  // "pass", one of its recorded results drawn at random per trial, as a live run sees one measurement and not the
  // median of several passes. Reaching the target is judged by the lower median either way.
  std::string observe = "median";
  // In what order a batch's trials count: "plan", the order the strategy proposed them, or "shuffled", an order
  // drawn at random per batch, as a fleet records a batch in the order its devices finish the configs.
  std::string arrival = "plan";
  // With a sibling (ReplayWorld::sibling): 0 warm-starts the tuner from the sibling's whole recorded space; N > 0
  // from the first N trials of the tuner's own replay on the sibling (same seed, no history of its own), which is
  // what a run's earlier task of the template leaves for the next one (RunTune reads it at the unit's first batch).
  uint64_t transfer_trials = 0;
};

struct StrategyRuns {
  std::string name;
  std::vector<uint64_t> trials;  // per seed: trials until the target was first reached
  double median = 0;
};

struct SimulationReport {
  StrategyRuns tuner;
  StrategyRuns baseline;
  uint64_t unrecorded = 0;  // proposals of valid configs with no record (replayed as failures), all runs
  // A stop was requested (SimulateControl::stop): the runs hold the seeds finished before it, their medians those
  // seeds' (the tuner's seeds run first, so the baseline may have none).
  bool interrupted = false;
  double ratio() const { return tuner.median > 0 ? baseline.median / tuner.median : 0; }
};

// Everything a replay needs. `tmpl` may be null (knob features only); `task` and `limits` are used with it.
struct ReplayWorld {
  const Template* tmpl = nullptr;
  Task task;
  DeviceLimits limits;
  Space space;
  ReplayTable table;
  std::vector<HistoryRecord> history;  // for warm start (transfer learning); may be empty
  std::string device;  // the replayed device as "NAME [FINGERPRINT]"
  // What the loading found worth a warning (another template version, the device's limits unknown, records of
  // other devices), one line each.
  std::vector<std::string> notes;
  // The --transfer-from task as a world of its own (its space and records on the replayed device), for
  // SimulateOptions::transfer_trials; null when there is none or it is the replayed task itself.
  std::shared_ptr<const ReplayWorld> sibling;
};

// Called once per replayed trial, in order: trial counts from 1 within a run; `result` is what the recording
// answered (a failure for a config with no record).
using TrialObserver = std::function<void(uint64_t trial, const Observation& result)>;

// How far a replay imitates a live fleet; null members keep it exact.
struct ReplayDraws {
  // Tell the strategy one of a config's recorded results, drawn with it (SimulateOptions::observe "pass"), instead
  // of the lower median; `on_trial` and the target always see the lower median.
  std::mt19937_64* pass = nullptr;
  // Count each batch's trials in an order drawn with it (SimulateOptions::arrival "shuffled"), not as proposed.
  std::mt19937_64* arrival = nullptr;
};

// Trials one strategy needs to reach the target; FailedPrecondition-like error when nothing recorded ran. A stop
// requested through `stop` ends it before the next batch with Unavailable.
Result<uint64_t> TrialsToTarget(Strategy& strategy, const ReplayTable& table, double target, size_t batch,
                                uint64_t* unrecorded, const TrialObserver& on_trial = {},
                                const ReplayDraws& draws = {}, std::stop_token stop = {});

// The history a run's earlier task leaves: the first `trials` trials of strategy `so` replayed on `sibling` (no
// target; an unrecorded config counts as failed), each as the HistoryRecord `tune` would read from the log.
Result<std::vector<HistoryRecord>> SiblingRunHistory(const ReplayWorld& sibling, const StrategyOptions& so,
                                                     uint64_t trials, size_t batch);

// One replayed trial of one run, for `simulate --trace`: which strategy and seed, and the trial's result.
struct TraceRow {
  std::string strategy;
  int seed = 0;
  uint64_t trial = 0;
  Observation result;
};
using TraceObserver = std::function<void(const TraceRow& row)>;

// One finished run of one strategy, for progress: `done` runs of `total` (both strategies, the tuner's first).
struct SeedDone {
  std::string strategy;
  int seed = 0;
  uint64_t trials = 0;  // to reach the target
  int done = 0;
  int total = 0;
};
using SeedObserver = std::function<void(const SeedDone& seed)>;

// How a caller follows a replay and ends it early; every member may be left empty.
struct SimulateControl {
  SeedObserver on_seed;  // after each run, in order
  // A stop request ends the replay before the next batch of trials; Simulate then returns the seeds finished so far
  // with SimulationReport::interrupted set.
  std::stop_token stop;
};

// One InvalidArgument naming the first option that `world` and `opts` cannot replay with; Simulate checks it first.
Status CheckSimulateOptions(const ReplayWorld& world, const SimulateOptions& opts);
// InvalidArgument when the replayed space (or, with transfer_trials, the sibling's) is less than half recorded, or
// transfer_trials is more than the sibling's valid configs; Simulate checks it after CheckSimulateOptions.
Status CheckRecorded(const ReplayWorld& world, const SimulateOptions& opts);

// Runs both strategies over seeds 1..opts.seeds; warm-starts each run with world.history when it is set.
// `on_trial`, when set, sees every trial of every run (the tuner's seeds first, then the baseline's).
Result<SimulationReport> Simulate(const ReplayWorld& world, const SimulateOptions& opts,
                                  const TraceObserver& on_trial = {}, const SimulateControl& control = {});

// "trials-to-95%: <tuner> <median> <baseline> <median> ratio <r>", ratio = baseline median / tuner median.
std::string SummaryLine(const SimulateOptions& opts, const SimulationReport& report);

// Which recorded space to replay. Empty strings mean "the only one in the log".
struct ReplaySelection {
  std::string task_spec;
  std::string template_name;
  std::string device;          // fingerprint or devices.id; empty = the device with the most records
  std::string transfer_from;   // task spec whose records (same template) warm-start the tuner; may equal the
                               // replayed task, then only other devices' records are used
};

// Resolves the selection against the log, builds the template's space for the task and device limits, and
// loads the records. Errors name what is ambiguous or missing ("several tasks in the log: ...; pick one
// with --task").
Result<std::unique_ptr<ReplayWorld>> LoadReplayWorld(TuningLog& log, const ReplaySelection& sel);

}  // namespace tunefleet
