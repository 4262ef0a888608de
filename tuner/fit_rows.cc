#include "tuner/fit_rows.h"

#include <algorithm>
#include <numeric>

namespace tunefleet {

std::vector<size_t> RowsToFit(const std::vector<float>& scores, size_t budget) {
  const size_t n = scores.size();
  std::vector<size_t> rows;
  if (n <= budget) {
    rows.resize(n);
    std::iota(rows.begin(), rows.end(), size_t{0});
    return rows;
  }
  if (budget == 0) return rows;
  std::vector<bool> keep(n, false);
  const size_t newest = budget / 4;
  for (size_t r = n - newest; r < n; ++r) keep[r] = true;
  // The fastest of the older rows; ties go to the earlier row, so the choice does not depend on the sort.
  std::vector<size_t> older(n - newest);
  std::iota(older.begin(), older.end(), size_t{0});
  const size_t fastest = std::min(older.size(), budget / 4);
  std::partial_sort(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(fastest), older.end(),
                    [&](size_t a, size_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
  for (size_t i = 0; i < fastest; ++i) keep[older[i]] = true;
  // The rest of the budget at an even stride over the older rows not kept yet.
  const size_t left = budget - newest - fastest;
  const size_t pool = n - newest - fastest;
  if (left > 0 && pool > 0) {
    size_t seen = 0, taken = 0;
    for (size_t r = 0; r < n - newest && taken < left; ++r) {
      if (keep[r]) continue;
      // Row `seen` of the pool is taken where (seen - 1) * left < k * pool <= seen * left for a whole k: the first
      // row of each of `left` strides, evenly apart.
      if (seen * left % pool < left) {
        keep[r] = true;
        ++taken;
      }
      ++seen;
    }
  }
  for (size_t r = 0; r < n; ++r) {
    if (keep[r]) rows.push_back(r);
  }
  return rows;
}

}  // namespace tunefleet
