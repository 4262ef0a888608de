#include "tuner/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <numeric>

namespace tunefleet {

double TaskScheduler::Score(const TaskProgress& t, double group_best) const {
  // A unit with no success yet goes first for two batches (a few failures say little), then last: one whose every
  // config fails (a driver that gets every config wrong) took the whole remaining budget.
  if (t.best_cost <= 0) return t.trials < 2 * window_ ? std::numeric_limits<double>::max() / 2 : 0;
  if (group_best <= 0 || group_best > t.best_cost) group_best = t.best_cost;
  double improvement = 0;
  if (t.curve.size() > window_) {
    double before = t.curve[t.curve.size() - 1 - window_];
    double now = t.curve.back();
    if (before > 0 && now > 0) improvement = (before - now) / before;
  }
  const double exploration =
      t.trials > 0 ? 0.5 * std::sqrt(static_cast<double>(window_) / static_cast<double>(t.trials)) : 0.5;
  // Trials spent since the unit's best last improved by more than 0.5%: a unit stalled for four batches counts
  // half, for twelve a quarter, so a plateau hands the budget to other layers and to sibling templates.
  size_t stalled = 0;
  if (!t.curve.empty() && t.curve.back() > 0) {
    const double now = t.curve.back();
    for (size_t i = t.curve.size(); i-- > 0 && t.curve[i] > 0 && t.curve[i] <= now * 1.005;) ++stalled;
  }
  const double plateau = 1.0 / (1.0 + static_cast<double>(stalled) / (4.0 * static_cast<double>(window_)));
  return static_cast<double>(t.count) * group_best * (group_best / t.best_cost) * (1.0 + improvement + exploration) *
         plateau;
}

std::vector<size_t> TaskScheduler::FirstBatchOrder(const std::vector<TaskProgress>& tasks) {
  // FLOP/s of each measured fallback; none measured: weigh by FLOPs alone.
  std::vector<double> rates;
  bool fallbacks = false;
  for (const TaskProgress& t : tasks) {
    if (t.fallback_cost <= 0) continue;
    fallbacks = true;
    if (t.flops > 0) rates.push_back(t.flops / t.fallback_cost);
  }
  double rate = 0;
  if (!rates.empty()) {
    std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
    rate = rates[rates.size() / 2];
  }
  // Once fallbacks are measured, a unit's latency is the fastest it has run: its fallback, or the best its batches
  // reached (0: neither). A task runs its fastest template, so its latency is the fastest of its units'; a task
  // that one template has tuned then weighs what it runs now, and its other templates wait behind slower layers.
  auto latency_of = [&](const TaskProgress& t) {
    if (!fallbacks) return 0.0;
    if (t.best_cost > 0 && t.fallback_cost > 0) return std::min(t.best_cost, t.fallback_cost);
    return std::max(t.best_cost, t.fallback_cost);
  };
  std::map<int, double> group_latency;
  for (const TaskProgress& t : tasks) {
    const double latency = latency_of(t);
    if (latency <= 0 || t.group < 0) continue;
    auto [it, fresh] = group_latency.emplace(t.group, latency);
    if (!fresh && latency < it->second) it->second = latency;
  }
  std::vector<double> weight(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskProgress& t = tasks[i];
    double latency = latency_of(t);
    if (auto it = group_latency.find(t.group); it != group_latency.end()) latency = it->second;
    if (latency <= 0) latency = rate > 0 ? t.flops / rate : t.flops;
    weight[i] = static_cast<double>(t.count) * latency;
  }
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Stable: units of equal weight (a task's templates, or weights unknown) keep the run's order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  return order;
}

int TaskScheduler::Next(const std::vector<TaskProgress>& tasks) const {
  const std::vector<size_t> order = FirstBatchOrder(tasks);
  // Warm-up: every task that is not done gets its first batch. One with fewer trials than a batch has not had it:
  // a resumed unit whose log holds only its fallback (a round's) or the start of a batch that was stopped.
  for (size_t i : order)
    if (!tasks[i].done && tasks[i].trials < window_) return static_cast<int>(i);
  std::map<int, double> group_best;  // best cost per task over its templates
  std::map<int, int> group_size;
  for (const TaskProgress& t : tasks) {
    if (t.group < 0) continue;
    ++group_size[t.group];
    if (t.best_cost <= 0) continue;
    auto [it, fresh] = group_best.emplace(t.group, t.best_cost);
    if (!fresh && t.best_cost < it->second) it->second = t.best_cost;
  }
  // Then a template with siblings gets a second batch before it is weighed against them: a first batch is
  // mostly random picks (the model needs results first), a poor judge of what the template can reach.
  for (size_t i : order) {
    const TaskProgress& t = tasks[i];
    if (!t.done && t.group >= 0 && group_size[t.group] > 1 && t.trials < 2 * window_)
      return static_cast<int>(i);
  }
  int best = -1;
  double best_score = -1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].done) continue;
    auto found = group_best.find(tasks[i].group);
    double s = Score(tasks[i], found == group_best.end() ? 0 : found->second);
    if (s > best_score) {
      best_score = s;
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace tunefleet
