#include "tuner/log_lock_wait.h"

#include <stop_token>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

using namespace std::chrono_literals;

TEST(LogLockWaitTest, GivenNoStop_AWriteShouldWaitAsLongAsTheLockIsHeld) {
  std::stop_source stop;
  LogLockWait wait("tune.db", stop.get_token());
  wait.Unbound();
  const auto t0 = LogLockWait::Clock::now();
  for (double waited : {0.0, 29.0, 31.0, 600.0, 86400.0}) {
    EXPECT_TRUE(wait.KeepWaiting(waited, t0 + std::chrono::seconds(static_cast<int64_t>(waited)))) << waited;
  }
  EXPECT_FALSE(wait.gave_up());
}

// After a stop, a lock let go of within the grace still lets the results and the session's end be written; past
// it, every wait gives up at once (the session's end included) and says so.
TEST(LogLockWaitTest, GivenAStop_AWriteShouldWaitTheGraceFromTheStopThenGiveUpAtOnce) {
  std::stop_source stop;
  LogLockWait wait("tune.db", stop.get_token());
  wait.Unbound();
  const auto t0 = LogLockWait::Clock::now();
  EXPECT_TRUE(wait.KeepWaiting(100, t0));
  stop.request_stop();
  EXPECT_TRUE(wait.KeepWaiting(100.5, t0 + 500ms));  // the stop is seen here: the grace counts from now
  EXPECT_TRUE(wait.KeepWaiting(103, t0 + 3s));
  EXPECT_FALSE(wait.gave_up());
  EXPECT_FALSE(wait.KeepWaiting(103.5, t0 + 3500ms));
  EXPECT_TRUE(wait.gave_up());
  EXPECT_FALSE(wait.KeepWaiting(0, t0 + 3600ms));  // a new wait (the session's end) after the grace
}

// Before the run's session begins, a write waits as SQLite did (30 s, then the start fails and the devices are let
// go), and a stop ends the wait within the grace: Ctrl-C waited out SQLite's 30 s at a locked log's start.
TEST(LogLockWaitTest, GivenTheStart_AWriteShouldWait30SecondsAndHonourAStop) {
  std::stop_source stop;
  LogLockWait wait("tune.db", stop.get_token());
  const auto t0 = LogLockWait::Clock::now();
  EXPECT_TRUE(wait.KeepWaiting(29.9, t0));
  EXPECT_FALSE(wait.KeepWaiting(30, t0));
  EXPECT_FALSE(wait.gave_up());  // not a stop: the start fails as the log's writer says
  stop.request_stop();
  EXPECT_TRUE(wait.KeepWaiting(1, t0));
  EXPECT_FALSE(wait.KeepWaiting(4, t0 + 3s));
  EXPECT_TRUE(wait.gave_up());
}

}  // namespace
}  // namespace tunefleet
