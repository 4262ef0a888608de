// StopOnSignals: signals sent to this very process.
#include "tuner/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

// Takes `sig` when it is pending (blocked in this thread): it, else -1.
int TakePending(int sig) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  const timespec now{0, 0};
  return sigtimedwait(&set, nullptr, &now);
}

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

// A closed terminal or ssh session (SIGHUP) stops the command as SIGTERM does: it killed it without cleaning up.
TEST(StopOnSignalsTest, GivenSighup_WeShouldStopAsForSigterm) {
  StopOnSignals s;
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(WaitForStop(s));
  EXPECT_STREQ(s.signal_name(), "SIGHUP");
}

// A write into a pipe whose reader is gone fails (EPIPE) instead of killing the process by SIGPIPE.
TEST(StopOnSignalsTest, GivenAPipeWithoutReader_AWriteShouldFailNotKill) {
  StopOnSignals s;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  errno = 0;
  EXPECT_EQ(write(fds[1], "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
  close(fds[1]);
  EXPECT_FALSE(s.stop_requested());
}

// Once the command's work is over, a signal is held back (it ended with the process) instead of saying "stopping".
TEST(StopOnSignalsTest, GivenFinish_ASignalShouldBeHeldBackNotTaken) {
  StopOnSignals s;
  s.Finish();
  kill(getpid(), SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(s.stop_requested());
  EXPECT_EQ(TakePending(SIGINT), SIGINT);  // pending, taken here so that no later test sees it
}

// Under nohup (SIGHUP ignored) the run is to outlive the terminal: SIGHUP is not taken (blocked, it would be queued
// even though ignored, and stop the run at logout).
TEST(StopOnSignalsTest, GivenSighupIgnoredAsNohupDoes_ItShouldNotStop) {
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &before), 0);
  {
    StopOnSignals s;
    kill(getpid(), SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    EXPECT_FALSE(s.stop_requested());
  }
  (void)TakePending(SIGHUP);  // held by an earlier test's mask, if so: taken here, not by a later test
  sigaction(SIGHUP, &before, nullptr);
}

}  // namespace
}  // namespace tunefleet
