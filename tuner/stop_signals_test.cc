// StopOnSignals: signals sent to this very process.
#include "tuner/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

bool WaitForStop(const StopOnSignals& s) {
  for (int i = 0; i < 200 && !s.stop_requested(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return s.stop_requested();
}

TEST(StopOnSignalsTest, GivenNoSignal_WeShouldNotRequestAStop) {
  StopOnSignals s;
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(s.stop_requested());
  EXPECT_STREQ(s.signal_name(), "");
}

TEST(StopOnSignalsTest, GivenSigtermTwiceAtOnceAsTimeoutSendsIt_WeShouldStopOnceAndLive) {
  StopOnSignals s;
  kill(getpid(), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the first one be taken alone
  kill(getpid(), SIGTERM);
  ASSERT_TRUE(WaitForStop(s));
  EXPECT_STREQ(s.signal_name(), "SIGTERM");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the repeat is taken and ignored
}

TEST(StopOnSignalsDeathTest, GivenASecondSigintAfterTheGrace_WeShouldBeKilledByIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StopOnSignals s(std::chrono::milliseconds(50));
        kill(getpid(), SIGINT);
        WaitForStop(s);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        kill(getpid(), SIGINT);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace tunefleet
