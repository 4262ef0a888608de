#include "tracker/result_check.h"

#include <cmath>

namespace tunefleet::tracker {
namespace {

// 1 ps to 10^6 s: no kernel runs faster (an agent reports 1 ns / --number at the least) or longer than any timeout.
// Tuning logs leave out records outside this range as damaged (storage/sqlite_tuning_log.cc).
bool GoodSeconds(double s) { return std::isfinite(s) && s >= 1e-12 && s <= 1e6; }

}  // namespace

std::optional<std::string> ResultProblem(const proto::MeasureResult& result) {
  if (!proto::MeasureStatus_IsValid(result.status())) {
    return "has status " + std::to_string(result.status()) + ", which the protocol does not define";
  }
  if (result.message().size() > kMaxResultMessageBytes) {
    return "has a message of " + std::to_string(result.message().size()) + " bytes (at most " +
           std::to_string(kMaxResultMessageBytes) + ")";
  }
  if (result.status() != proto::OK) return std::nullopt;
  if (result.costs().empty()) return "is OK without a cost";
  for (double c : result.costs()) {
    if (!GoodSeconds(c)) return "is OK with a cost that is not a time between 1 ps and 10^6 s";
  }
  if (!GoodSeconds(result.mean_cost())) return "is OK with a mean cost that is not a time between 1 ps and 10^6 s";
  return std::nullopt;
}

}  // namespace tunefleet::tracker
