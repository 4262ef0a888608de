#include "tuner/trial_budget.h"

#include <charconv>

namespace tunefleet {

Result<TrialBudget> ParseTrialBudget(const std::string& trials, double time_budget) {
  if (trials == "all" || (trials.empty() && time_budget > 0)) return TrialBudget{0, true};
  if (trials.empty()) return TrialBudget{kDefaultTrials, false};
  uint64_t n = 0;
  const char* end = trials.data() + trials.size();
  auto [ptr, ec] = std::from_chars(trials.data(), end, n);
  // Digits past what a run could measure (18446744073709551615 was taken: "18446744073709551583 to go") are said so.
  if (ptr == end && trials[0] != '0' && (ec == std::errc::result_out_of_range || (ec == std::errc() && n > kMaxTrials)))
    return Status::InvalidArgument("--trials '" + trials + "': at most " + std::to_string(kMaxTrials) + " (or 'all')");
  if (ec != std::errc() || ptr != end || n == 0 || trials[0] == '0')  // "010": not read as 10, nor as octal 8
    return Status::InvalidArgument("--trials '" + trials + "': expected a positive number or 'all'");
  return TrialBudget{n, false};
}

}  // namespace tunefleet
