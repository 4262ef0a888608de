// Comparing a candidate's output with the reference output. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet::agent {

struct CompareResult {
  bool ok = true;
  double max_abs_error = 0;  // over the compared elements; infinity when a NaN/inf mismatch was seen
  int64_t first_bad = -1;    // index of the first element out of tolerance, -1 when none
  uint64_t compared = 0;     // elements compared
  std::string message;       // when !ok: what differs, e.g. "element 7: got 1.5, want 2 (max abs error 0.5)"
};

// Compares the first `count` elements (0 = all) of `got` with `want`: element i is good when
// |got - want| <= atol + rtol * |want|; NaN in either is bad. Lengths must cover the compared range, else !ok.
CompareResult CompareOutputs(const std::vector<float>& got, const std::vector<float>& want, uint64_t count,
                             double atol, double rtol);

}  // namespace tunefleet::agent
