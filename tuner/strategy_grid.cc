#include "tuner/strategy_grid.h"

namespace tunefleet {

std::vector<uint64_t> GridStrategy::NextBatch(size_t n) {
  std::vector<uint64_t> out;
  const uint64_t raw = space_.RawSize();
  for (; cursor_ < raw && out.size() < n; ++cursor_) {
    if (visited_.count(cursor_) == 0 && space_.ValidIndex(cursor_)) {
      visited_.insert(cursor_);
      out.push_back(cursor_);
    }
  }
  return out;
}

void GridStrategy::Update(const std::vector<Observation>& results) {
  for (const auto& r : results) visited_.insert(r.index);
}

std::string GridStrategy::StatusLine() const {
  return "grid: at index " + std::to_string(cursor_) + " of " + std::to_string(space_.RawSize());
}

}  // namespace tunefleet
