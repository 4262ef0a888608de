// Pieces shared by the strategies: the set of configs already proposed or measured, and drawing valid configs
// outside it. Thread safety: none (owned by one strategy).
#pragma once

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "search-spaces/space.h"
#include "tuner/strategy.h"

namespace tunefleet {

// Up to `n` distinct valid indices not in `visited` (and added to it). Uniform rejection sampling first; when
// that keeps hitting visited configs (a nearly exhausted space) it scans the remaining valid configs in index
// order from a random start, so it returns fewer than `n` only when the space is exhausted.
std::vector<uint64_t> SampleUnvisited(const Space& space, std::unordered_set<uint64_t>& visited, size_t n,
                                      std::mt19937_64& rng);

// Score of a result relative to the best cost of its group: best/cost in (0, 1] when ok, 0 when failed (the
// worst), so higher is better and scores of different tasks are comparable.
inline float RelativeScore(bool ok, double cost, double best_cost) {
  return ok && cost > 0 && best_cost > 0 ? static_cast<float>(best_cost / cost) : 0.0f;
}

// The lower median of a non-empty list (with two values: the smaller one): a config measured several times is
// worth one real result of it, and one lucky or unlucky run neither makes nor breaks it.
double LowerMedian(std::vector<double> v);

// Lowest cost among ok observations; 0 when there is none.
double BestCost(const std::vector<Observation>& obs);

}  // namespace tunefleet
