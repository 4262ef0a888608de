// TaskScheduler: decides which task of a model gets the next batch of trials (deciding only).
// The budget goes where it pays, in the spirit of Ansor's task scheduler: every task first gets one batch;
// then the task with the largest count × best latency × (1 + recent relative improvement) goes next, so heavy
// layers and layers still improving get more trials.
// Thread safety: stateless, pure.
#pragma once

#include <cstdint>
#include <vector>

namespace tunefleet {

struct TaskProgress {
  int64_t count = 1;            // occurrences in the model
  double best_cost = 0;         // seconds, 0 while nothing succeeded
  uint64_t trials_this_run = 0; // trials measured by this run
  bool done = false;            // exhausted or early-stopped
  std::vector<double> curve;    // best cost after each trial (0 before the first success)
};

class TaskScheduler {
 public:
  // `window`: number of recent trials over which improvement is measured (one batch, typically).
  explicit TaskScheduler(uint64_t window) : window_(window) {}

  // Index of the task that gets the next batch, or -1 when every task is done.
  int Next(const std::vector<TaskProgress>& tasks) const;
  // count × best_cost × (1 + improvement over the window); tasks without a success score highest.
  double Score(const TaskProgress& t) const;

 private:
  uint64_t window_;
};

}  // namespace tunefleet
