#include "tuner/strategy_random.h"

#include "tuner/strategy_common.h"

namespace tunefleet {

std::vector<uint64_t> RandomStrategy::NextBatch(size_t n) { return SampleUnvisited(space_, visited_, n, rng_); }

void RandomStrategy::Update(const std::vector<Observation>& results) {
  for (const auto& r : results) visited_.insert(r.index);
  results_ += results.size();
}

// The results, as ga's line says: the proposals include jobs abandoned at a stop or a time budget's end.
std::string RandomStrategy::StatusLine() const { return "random: " + std::to_string(results_) + " results"; }

}  // namespace tunefleet
