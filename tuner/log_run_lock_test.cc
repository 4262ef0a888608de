#include "tuner/log_run_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class LogRunLockTest : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string log_ = dir_.File("tune.db");
};

TEST_F(LogRunLockTest, GivenARunHoldingTheLog_ASecondShouldBeRefusedNamingTheFirst) {
  auto first = LogRunLock::Acquire(log_, "tunefleet tune pid 41@labhost");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(fs::exists(LogRunLock::LockPath(log_)));

  auto second = LogRunLock::Acquire(log_, "tunefleet tune pid 42@labhost");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  const std::string m = second.status().message();
  EXPECT_NE(m.find(log_ + " is being tuned by tunefleet tune pid 41@labhost since "), std::string::npos) << m;
  EXPECT_NE(m.find("another --db"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_TRUE(fs::exists(LogRunLock::LockPath(log_)));  // the refused run leaves the holder's file alone
}

TEST_F(LogRunLockTest, GivenTheRunEnded_TheNextShouldTakeTheLockAndNoFileBeLeft) {
  {
    auto first = LogRunLock::Acquire(log_, "first");
    ASSERT_TRUE(first.ok());
    LogRunLock moved = std::move(first).value();  // the lock travels with its owner
    EXPECT_FALSE(LogRunLock::Acquire(log_, "second").ok());
  }
  EXPECT_FALSE(fs::exists(LogRunLock::LockPath(log_)));
  auto next = LogRunLock::Acquire(log_, "second");
  EXPECT_TRUE(next.ok()) << next.status().ToString();
}

TEST_F(LogRunLockTest, GivenAHolderKilledWithoutCleanUp_ItsLockShouldBeFreeAtOnce) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = LogRunLock::Acquire(log_, "the child");
    if (!lock.ok()) _exit(3);
    _exit(0);  // no destructor runs: the file stays, as after kill -9
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::exists(LogRunLock::LockPath(log_)));  // stale file, no lock on it
  auto next = LogRunLock::Acquire(log_, "the parent");
  EXPECT_TRUE(next.ok()) << next.status().ToString();
}

TEST_F(LogRunLockTest, GivenAFolderThatCannotHoldTheLock_TheErrorShouldNameTheLockFile) {
  const std::string nowhere = dir_.File("no/such/tune.db");
  auto lock = LogRunLock::Acquire(nowhere, "x");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Status::Code::kIOError);
  EXPECT_NE(lock.status().message().find(nowhere + ".lock"), std::string::npos) << lock.status().message();
}

}  // namespace
}  // namespace tunefleet
