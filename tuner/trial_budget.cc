#include "tuner/trial_budget.h"

#include <charconv>

namespace tunefleet {

Result<TrialBudget> ParseTrialBudget(const std::string& trials, double time_budget) {
  if (trials == "all" || (trials.empty() && time_budget > 0)) return TrialBudget{0, true};
  if (trials.empty()) return TrialBudget{kDefaultTrials, false};
  uint64_t n = 0;
  const char* end = trials.data() + trials.size();
  auto [ptr, ec] = std::from_chars(trials.data(), end, n);
  if (ec != std::errc() || ptr != end || n == 0 || trials[0] == '0')  // "010": not read as 10, nor as octal 8
    return Status::InvalidArgument("--trials '" + trials + "': expected a positive number or 'all'");
  return TrialBudget{n, false};
}

}  // namespace tunefleet
