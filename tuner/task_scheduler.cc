#include "tuner/task_scheduler.h"

#include <cstddef>
#include <limits>

namespace tunefleet {

double TaskScheduler::Score(const TaskProgress& t) const {
  if (t.best_cost <= 0) return std::numeric_limits<double>::max() / 2;
  double improvement = 0;
  if (t.curve.size() > window_) {
    double before = t.curve[t.curve.size() - 1 - window_];
    double now = t.curve.back();
    if (before > 0 && now > 0) improvement = (before - now) / before;
  }
  return static_cast<double>(t.count) * t.best_cost * (1.0 + improvement);
}

int TaskScheduler::Next(const std::vector<TaskProgress>& tasks) const {
  // Warm-up: every task that is not done gets its first batch in order.
  for (size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].done && tasks[i].trials_this_run == 0) return static_cast<int>(i);
  int best = -1;
  double best_score = -1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].done) continue;
    double s = Score(tasks[i]);
    if (s > best_score) {
      best_score = s;
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace tunefleet
