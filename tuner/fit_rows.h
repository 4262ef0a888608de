// Which of a task's own results a cost-model refit trains on. A refit costs time and memory linear in its rows (a
// task resumed with 512k recorded results refitted five models on all of them before its first job: 242 s,
// 2.35 GB), while past a few thousand results more rows of the same task add little to the ranking it learns.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace tunefleet {

// Own results a refit trains on at most (the warm-start history has a budget of its own).
inline constexpr size_t kMaxOwnFitRows = 8192;

// The rows of `scores` (one per result in arrival order, higher = faster, as RelativeScore gives them) that a fit
// of at most `budget` rows keeps, in ascending order: every row when they fit. Otherwise the newest quarter of the
// budget (the region the search is in now), then the fastest quarter of the rest (the order among the fastest is
// what the model must get right), then rows of the rest at an even stride until the budget is spent (the shape of
// the whole space). Deterministic: the same scores and budget give the same rows.
std::vector<size_t> RowsToFit(const std::vector<float>& scores, size_t budget);

}  // namespace tunefleet
