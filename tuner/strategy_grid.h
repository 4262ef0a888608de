// Grid search: valid configs in index order (knob 0 varies fastest), skipping those already measured.
// Thread safety: one instance per task, one thread.
#pragma once

#include <unordered_set>

#include "tuner/strategy.h"

namespace tunefleet {

class GridStrategy final : public Strategy {
 public:
  // `space` must outlive the strategy.
  explicit GridStrategy(const Space& space) : space_(space) {}
  std::vector<uint64_t> NextBatch(size_t n) override;
  void Update(const std::vector<Observation>& results) override;
  std::string StatusLine() const override;

 private:
  const Space& space_;
  uint64_t cursor_ = 0;  // next raw index to look at
  std::unordered_set<uint64_t> visited_;
};

}  // namespace tunefleet
