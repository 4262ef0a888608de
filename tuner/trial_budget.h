// TrialBudget: what `tune --trials` and `--time-budget` together ask for. --trials counts every trial over all
// tasks, recorded ones included (so a resumed run measures exactly the rest); 'all' is every valid config of every
// space. Without --trials the budget is 200, or 'all' when --time-budget is given, so that a time budget alone
// tunes until the time is up instead of stopping at 200 trials.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tunefleet {

struct TrialBudget {
  uint64_t trials = 0;  // total over all tasks; 0 when `all`
  bool all = false;     // every valid config of every space
};

inline constexpr uint64_t kDefaultTrials = 200;
// The most --trials takes: a billion trials is years of measuring; 'all' names a whole space.
inline constexpr uint64_t kMaxTrials = 1000000000;

// `trials`: the option's text, empty when not given; `time_budget`: seconds, 0 when not given.
Result<TrialBudget> ParseTrialBudget(const std::string& trials, double time_budget);

}  // namespace tunefleet
