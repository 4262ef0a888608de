#include "tracker/warning_throttle.h"

#include <gtest/gtest.h>

#include "common/spdlog_capture_testing.h"

namespace tunefleet::tracker {
namespace {

using std::chrono::seconds;

TEST(WarningThrottleTest, GivenAFloodTheFirstShouldBeSaidThenOneLinePerIntervalCountingTheHeldBack) {
  WarningThrottle throttle("calls refused", seconds(60));
  const auto t0 = WarningThrottle::Clock::now();
  EXPECT_EQ(throttle.Occurred(t0), 1u);
  for (int i = 1; i < 1000; ++i) EXPECT_FALSE(throttle.Occurred(t0 + std::chrono::milliseconds(i)).has_value());
  EXPECT_FALSE(throttle.Occurred(t0 + seconds(59)).has_value());
  EXPECT_EQ(throttle.Occurred(t0 + seconds(60)), 1001u);  // 999 + 1 held back, and this one
  EXPECT_FALSE(throttle.Occurred(t0 + seconds(61)).has_value());
  EXPECT_EQ(throttle.Occurred(t0 + seconds(3600)), 2u);
}

// A burst that ends: what it held back is said once the interval has passed, not only at a next occurrence.
TEST(WarningThrottleTest, GivenABurstThatEnds_WhatItHeldBackShouldBeSaidOnceTheIntervalHasPassed) {
  WarningThrottle throttle("calls refused", seconds(60));
  const auto t0 = WarningThrottle::Clock::now();
  EXPECT_FALSE(throttle.HeldOver(t0 + seconds(120)).has_value());  // nothing occurred
  EXPECT_EQ(throttle.Occurred(t0), 1u);
  EXPECT_FALSE(throttle.HeldOver(t0 + seconds(120)).has_value());  // said at once: nothing held
  WarningThrottle burst("calls refused", seconds(60));
  EXPECT_EQ(burst.Occurred(t0), 1u);
  EXPECT_FALSE(burst.Occurred(t0 + seconds(1)).has_value());
  EXPECT_FALSE(burst.Occurred(t0 + seconds(2)).has_value());
  EXPECT_FALSE(burst.HeldOver(t0 + seconds(30)).has_value());  // too soon
  testing::CapturedSpdlog log;
  burst.SayHeldOver(t0 + seconds(61));
  EXPECT_NE(log.text().find("calls refused: 2 more since the last such line"), std::string::npos) << log.text();
  EXPECT_FALSE(burst.HeldOver(t0 + seconds(200)).has_value());  // said
  EXPECT_FALSE(burst.Occurred(t0 + seconds(62)).has_value());    // within a minute of that line: held
  EXPECT_EQ(burst.HeldOver(t0 + seconds(122)), 1u);
}

}  // namespace
}  // namespace tunefleet::tracker
