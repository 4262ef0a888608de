// Search strategies: decide which configs to measure next. Deciding only; measuring is the dispatcher's job.
// Thread safety: one strategy per task, used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

class Template;

// One measured config as the strategy sees it.
struct Observation {
  uint64_t index = 0;
  bool ok = false;       // status 0
  double cost = 0;       // seconds (mean); meaningless when !ok
};

// A record of another task/device of the same template, for transfer learning.
struct HistoryRecord {
  std::string task_spec;
  std::string device_fingerprint;
  std::string config_json;
  bool ok = false;
  double cost = 0;      // seconds
  double flops = 0;     // of one run of that task
};

struct StrategyOptions {
  std::string name = "xgb";   // xgb | ga | random | grid
  uint64_t seed = 1;
  size_t plan_size = 64;      // configs per model refit (xgb)
  // xgb: auto (ndcg on the task's own results; rank and ndcg members while other tasks' history warm-starts it)
  // | rank | ndcg | reg
  std::string xgb_objective = "auto";
  double epsilon = 0.05;      // share of each xgb plan drawn at random instead of from the model
  int diversity_knobs = 2;    // xgb plan: picks should differ in at least this many knobs (relaxed if needed)
  double greedy_share = 0.5;  // xgb plan: this share of the model's picks is taken in predicted order, unfiltered
  bool early_refits = true;   // xgb: also fit at plan_size/4 and plan_size/2 own results (AutoTVM waits for a plan)
  bool frontier_picks = true;  // xgb: the epsilon share explores beyond the training data's feature ranges
  int xgb_ensemble = 5;        // xgb: bagged models (1 = one model on all rows, AutoTVM's choice)
  double xgb_kappa = 1.0;      // xgb: plans follow mean + kappa * spread of the ensemble's predictions
  // xgb without history: the first plan is the plan_size configs of prior_pool x plan_size random ones that the
  // device prior (tuner/device_prior.h) ranks best, in its order, and every model (with history too) starts from
  // the prior as its rows' base margin; 0 or 1 = a random first plan and models of the results alone.
  size_t prior_pool = 4;
};
// The largest prior_pool accepted (--xgb-prior-pool of tune and simulate, MakeStrategy).
inline constexpr size_t kMaxPriorPool = 64;
// The most models of an xgb ensemble (MakeStrategy; simulate's --xgb-ensemble, tunefleet-model-speed's --ensemble).
inline constexpr int kMaxXgbEnsemble = 64;

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Up to n distinct valid config indices never proposed before. Empty when the space is exhausted.
  virtual std::vector<uint64_t> NextBatch(size_t n) = 0;
  // Results of proposed (or resumed) configs. Also called before the first NextBatch with the records
  // already in the log (resume): those indices are never proposed.
  virtual void Update(const std::vector<Observation>& results) = 0;
  // Transfer learning from other tasks/devices of the same template; default: ignored. Called again, the new
  // history replaces what the strategy had (it holds what the log holds now, the old rows included).
  virtual void WarmStart(const std::vector<HistoryRecord>& /*history*/) {}
  // Whether WarmStart does anything, so that callers read and report history only for a strategy that learns from
  // it.
  virtual bool UsesHistory() const { return false; }
  // Whether fresher history would be used now: the strategy is about to make its next plan. A caller reads the
  // log again only then (other tasks of the run recorded more meanwhile) and calls WarmStart with all it holds.
  virtual bool WantsHistoryRefresh() const { return false; }
  // One line for the progress display (e.g. "model refit #3, rank corr 0.82"); empty if none.
  virtual std::string StatusLine() const { return {}; }
};

// The cost model objectives (CostModelOptions::objective, EnsembleOptions::objectives: member k fits the k-th,
// cyclically) that `opts.xgb_objective` means for an ensemble that is (`warm`) or is not warm-started from other
// tasks' history: `auto` is rank:ndcg without history and rank:pairwise and rank:ndcg members alternating with
// it (tuner/strategy_xgb.h says why); any other value is itself, for every member.
std::vector<std::string> XgbModelObjectives(const StrategyOptions& opts, bool warm);

// The names MakeStrategy knows (--tuner, simulate's --baseline): xgb, ga, random, grid.
const std::vector<std::string>& StrategyNames();

// `tmpl`, `task` and `space` must outlive the strategy.
Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyOptions& opts, const Template& tmpl, const Task& task,
                                               const Space& space, const DeviceLimits& limits);

// The same without a template (e.g. replaying a recorded space, tests): features are the knob values only.
// With `tmpl` set, `task` and `limits` must be set too. All pointees must outlive the strategy.
Result<std::unique_ptr<Strategy>> MakeStrategyForSpace(const StrategyOptions& opts, const Template* tmpl,
                                                       const Task* task, const Space& space,
                                                       const DeviceLimits* limits);

}  // namespace tunefleet
