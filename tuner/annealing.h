// Simulated annealing over a cost model's predictions: parallel chains walk the space one knob at a time and
// the best-scored configs they visit (excluding those already measured) become the next plan.
// Thread safety: free functions; the score function is called from the calling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "search-spaces/space.h"

namespace tunefleet {

struct ScoredIndex {
  uint64_t index = 0;
  float score = 0;  // higher = predicted faster
};

// Best first: higher score, then lower index (so equal scores keep a deterministic order).
inline bool BetterScored(const ScoredIndex& a, const ScoredIndex& b) {
  return a.score != b.score ? a.score > b.score : a.index < b.index;
}

struct AnnealingOptions {
  int chains = 128;       // walked in lockstep so each step is one batched prediction
  int max_steps = 400;
  int early_stop = 60;    // stop after this many steps without a change to the kept set
  double temp_start = 1.0;  // relative to the spread of the first scores; falls linearly to temp_end
  double temp_end = 0.0;
  uint64_t seed = 1;
};

// Scores of a batch of config indices, one per index.
using BatchScoreFn = std::function<Result<std::vector<float>>(const std::vector<uint64_t>&)>;

// Up to `keep` distinct valid indices not in `exclude`, best predicted first. Chains start at `starts` (e.g. the
// best measured configs), topped up with uniform valid samples. Deterministic for a given seed.
Result<std::vector<ScoredIndex>> Anneal(const Space& space, const BatchScoreFn& score,
                                        const std::unordered_set<uint64_t>& exclude,
                                        const std::vector<uint64_t>& starts, size_t keep,
                                        const AnnealingOptions& opts);

// Diversity filter: from `ranked` (best first) picks up to `n`, skipping a candidate that differs in fewer than
// `min_knob_diff` knobs from one already picked; the threshold is relaxed step by step when too few remain.
std::vector<uint64_t> PickDiverse(const Space& space, const std::vector<ScoredIndex>& ranked, size_t n,
                                  int min_knob_diff);

}  // namespace tunefleet
