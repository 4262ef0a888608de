#include "tracker/warning_throttle.h"

#include <gtest/gtest.h>

namespace tunefleet::tracker {
namespace {

using std::chrono::seconds;

TEST(WarningThrottleTest, GivenAFloodTheFirstShouldBeSaidThenOneLinePerIntervalCountingTheHeldBack) {
  WarningThrottle throttle(seconds(60));
  const auto t0 = WarningThrottle::Clock::now();
  EXPECT_EQ(throttle.Occurred(t0), 1u);
  for (int i = 1; i < 1000; ++i) EXPECT_FALSE(throttle.Occurred(t0 + std::chrono::milliseconds(i)).has_value());
  EXPECT_FALSE(throttle.Occurred(t0 + seconds(59)).has_value());
  EXPECT_EQ(throttle.Occurred(t0 + seconds(60)), 1001u);  // 999 + 1 held back, and this one
  EXPECT_FALSE(throttle.Occurred(t0 + seconds(61)).has_value());
  EXPECT_EQ(throttle.Occurred(t0 + seconds(3600)), 2u);
}

}  // namespace
}  // namespace tunefleet::tracker
