// TaskScheduler: decides which task of a model gets the next batch of trials (deciding only).
// The budget goes where it pays, in the spirit of Ansor's task scheduler: every unit (a task under one template)
// first gets one batch, and a unit with sibling templates a second one (its first batch is mostly random picks,
// made before the model had results). Trials count whatever the log holds: a resumed run gives its first batches to
// the units with less than a batch in the log, not again to the ones the runs before it tuned. These first batches
// go in order of weight, the largest first: a run cut short by --trials, --time-budget or a stop has then tuned the
// layers that matter most. When the run's round has measured
// the fallback configs (on a short budget, tune_run.cc), or a resumed run's log holds every unit's fallback or best,
// a unit's weight is its task's count × the task's latency so far: the fastest its templates have run, fallback or
// tuned. So once one template has tuned a task, the task's other templates wait behind the layers that are still
// slower. A task with neither is estimated from its FLOPs at the median rate of the fallbacks measured. Without
// them, count × FLOPs alone orders them. (On a short budget
// the order mattered, on a full one it made little difference: bench/results/h200-pocl-2026-12-01-first-batch-
// order.md, h200-pocl-2026-12-01-fallback-round.md and h200-2026-12-01-template-order.md.)
// Then the unit with the largest
//   count × task's best latency × (task's best / unit's best) × (1 + recent relative improvement + exploration)
//   × plateau
// goes next, so heavy layers and layers still improving get more trials. Units of one task (its templates) are
// alternatives: the model runs only the fastest, so a template far behind the task's best weighs less (it would
// have to overtake it to matter), while the exploration term (½·sqrt(window / trials so far)) keeps giving
// little-tried units and templates a chance to show their potential. plateau = 1 / (1 + s / (4 × window)) where s
// is the number of trials since the unit's best last improved by more than 0.5%: a unit stuck on a plateau
// gives way to other layers and to its sibling templates. A unit with no success yet goes first for its first two
// batches, then last (it gets trials only when every other unit is done).
// Thread safety: stateless, pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tunefleet {

struct TaskProgress {
  int64_t count = 1;            // occurrences in the model
  double best_cost = 0;         // seconds, 0 while nothing succeeded
  uint64_t trials = 0;          // the unit's trials in the log: earlier runs' (resumed) and this run's
  bool done = false;            // exhausted or early-stopped
  std::vector<double> curve;    // best cost after each trial (0 before the first success)
  int group = -1;               // units with the same group ≥ 0 are one task under different templates
  double flops = 0;             // of one run of the task's kernel (0: unknown)
  double fallback_cost = 0;     // seconds: the unit's fallback config as measured, 0 while unknown or failed
};

class TaskScheduler {
 public:
  // `window`: number of recent trials over which improvement is measured (one batch, typically).
  explicit TaskScheduler(uint64_t window) : window_(window) {}

  // Index of the task that gets the next batch, or -1 when every task is done.
  int Next(const std::vector<TaskProgress>& tasks) const;
  // The order in which units get their first (and second) batches: by weight (see above), the largest first;
  // units of equal weight (a task's templates) keep the run's order.
  static std::vector<size_t> FirstBatchOrder(const std::vector<TaskProgress>& tasks);
  // The unit's score (see above); `group_best` is the best cost among the units of its task (0: its own).
  // Units without a success score highest.
  double Score(const TaskProgress& t, double group_best = 0) const;

 private:
  uint64_t window_;
};

}  // namespace tunefleet
