// Random search: uniform over valid configs never proposed or measured before.
// Thread safety: one instance per task, one thread.
#pragma once

#include <random>
#include <unordered_set>

#include "tuner/strategy.h"

namespace tunefleet {

class RandomStrategy final : public Strategy {
 public:
  // `space` must outlive the strategy.
  RandomStrategy(const Space& space, uint64_t seed) : space_(space), rng_(seed) {}
  std::vector<uint64_t> NextBatch(size_t n) override;
  void Update(const std::vector<Observation>& results) override;
  std::string StatusLine() const override;

 private:
  const Space& space_;
  std::mt19937_64 rng_;
  std::unordered_set<uint64_t> visited_;  // proposed or measured
  size_t results_ = 0;                    // results told to Update (a proposal abandoned at a stop has none)
};

}  // namespace tunefleet
