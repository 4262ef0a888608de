#include "common/file_limit.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(FileLimitTest, GivenASoftLimitBelowTheHardOne_ItShouldBeRaisedToIt) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max <= 256) GTEST_SKIP() << "the hard limit is " << saved.rlim_max;
  rlimit lowered = saved;
  lowered.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);

  EXPECT_EQ(RaiseFileLimit(), saved.rlim_max);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, saved.rlim_max);
  EXPECT_EQ(RaiseFileLimit(), saved.rlim_max);  // already there: unchanged
  setrlimit(RLIMIT_NOFILE, &saved);
}

}  // namespace
}  // namespace tunefleet
