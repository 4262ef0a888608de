#include "tuner/trial_budget.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(TrialBudgetTest, GivenNeitherOptionTheBudgetShouldBeTheDefault) {
  Result<TrialBudget> b = ParseTrialBudget("", 0);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->trials, kDefaultTrials);
  EXPECT_FALSE(b->all);
}

TEST(TrialBudgetTest, GivenATimeBudgetAloneItShouldTuneUntilTheTimeIsUpNotStopAtTheDefault) {
  Result<TrialBudget> b = ParseTrialBudget("", 60);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_TRUE(b->all);
}

TEST(TrialBudgetTest, GivenTrialsTheyShouldBoundTheRunWithOrWithoutATimeBudget) {
  for (double time_budget : {0.0, 60.0}) {
    Result<TrialBudget> b = ParseTrialBudget("50", time_budget);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(b->trials, 50u);
    EXPECT_FALSE(b->all);
  }
  Result<TrialBudget> all = ParseTrialBudget("all", 0);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->all);
}

TEST(TrialBudgetTest, GivenABadCountItShouldSayWhatIsExpected) {
  for (const char* bad : {"0", "-3", "12x", "x", " 5", "1e3", "010", "00004", "-99999999999999999999999"}) {
    Result<TrialBudget> b = ParseTrialBudget(bad, 0);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().message(), std::string("--trials '") + bad + "': expected a positive number or 'all'");
  }
}

}  // namespace
// A count past what a run could measure is said so: the type's largest value was taken as a budget.
TEST(TrialBudgetTest, GivenMoreTrialsThanARunCouldMeasureItShouldSayTheMost) {
  for (const char* big : {"1000000001", "18446744073709551615", "99999999999999999999999"}) {
    Result<TrialBudget> b = ParseTrialBudget(big, 0);
    ASSERT_FALSE(b.ok()) << big;
    EXPECT_EQ(b.status().message(), std::string("--trials '") + big + "': at most 1000000000 (or 'all')");
  }
  Result<TrialBudget> most = ParseTrialBudget("1000000000", 0);
  ASSERT_TRUE(most.ok());
  EXPECT_EQ(most->trials, 1000000000u);
}

}  // namespace tunefleet
