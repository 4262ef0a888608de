#include "agent/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace tunefleet::agent {

CompareResult CompareOutputs(const std::vector<float>& got, const std::vector<float>& want, uint64_t count,
                             double atol, double rtol) {
  CompareResult result;
  if (count == 0) {
    if (got.size() != want.size()) {
      result.ok = false;
      result.message = "output has " + std::to_string(got.size()) + " elements, reference has " +
                       std::to_string(want.size());
      return result;
    }
    count = got.size();
  }
  if (count > got.size() || count > want.size()) {
    result.ok = false;
    result.message = "compare_count " + std::to_string(count) + " exceeds the output (" +
                     std::to_string(got.size()) + ") or reference (" + std::to_string(want.size()) + ") size";
    return result;
  }
  result.compared = count;
  for (uint64_t i = 0; i < count; ++i) {
    const double a = got[i];
    const double b = want[i];
    const double error = std::fabs(a - b);
    const bool good = !std::isnan(error) && error <= atol + rtol * std::fabs(b);
    if (std::isnan(error)) {
      result.max_abs_error = std::numeric_limits<double>::infinity();
    } else {
      result.max_abs_error = std::max(result.max_abs_error, error);
    }
    if (!good && result.first_bad < 0) result.first_bad = static_cast<int64_t>(i);
  }
  if (result.first_bad >= 0) {
    result.ok = false;
    std::ostringstream text;
    text << "wrong answer: element " << result.first_bad << " is " << got[result.first_bad] << ", reference "
         << want[result.first_bad] << " (max abs error " << result.max_abs_error << ", atol " << atol << ", rtol "
         << rtol << ", " << count << " elements compared)";
    result.message = text.str();
  }
  return result;
}

}  // namespace tunefleet::agent
