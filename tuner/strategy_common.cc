#include "tuner/strategy_common.h"

#include <algorithm>

namespace tunefleet {

std::vector<uint64_t> SampleUnvisited(const Space& space, std::unordered_set<uint64_t>& visited, size_t n,
                                      std::mt19937_64& rng) {
  std::vector<uint64_t> out;
  constexpr int kMaxMisses = 64;  // consecutive draws of visited configs before switching to the scan
  int misses = 0;
  while (out.size() < n && misses < kMaxMisses) {
    std::optional<uint64_t> s = space.SampleValid(rng, 10000);
    if (!s) break;
    if (visited.insert(*s).second) {
      out.push_back(*s);
      misses = 0;
    } else {
      ++misses;
    }
  }
  const uint64_t raw = space.RawSize();
  if (out.size() < n && raw > 0) {
    const uint64_t start = std::uniform_int_distribution<uint64_t>(0, raw - 1)(rng);
    for (uint64_t k = 0; k < raw && out.size() < n; ++k) {
      const uint64_t idx = (start + k) % raw;
      if (visited.count(idx) == 0 && space.ValidIndex(idx)) {
        visited.insert(idx);
        out.push_back(idx);
      }
    }
  }
  return out;
}

double BestCost(const std::vector<Observation>& obs) {
  double best = 0;
  for (const auto& o : obs) {
    if (o.ok && o.cost > 0 && (best == 0 || o.cost < best)) best = o.cost;
  }
  return best;
}

double LowerMedian(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

}  // namespace tunefleet
