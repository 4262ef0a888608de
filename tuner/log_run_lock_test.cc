#include "tuner/log_run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"
#include "common/tmpfs_testing.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class LogRunLockTest : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string log_ = dir_.File("tune.db");
  const std::vector<std::string> model_ = {"gemm:64,64,64:float32", "conv2d:1,8,8,8,8,3,3,1,1:float32"};
  const RunLockScope pixel7_ = RunLockScope::Key("pixel7");
};

TEST_F(LogRunLockTest, GivenARunHoldingATask_ASecondRunOfItShouldBeRefusedNamingTheFirst) {
  auto first = LogRunLock::Acquire(log_, pixel7_, model_, "tunefleet tune pid 41@labhost");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string lock_file = LogRunLock::LockPath(log_, pixel7_, model_[0]);
  EXPECT_TRUE(fs::exists(lock_file));

  auto second = LogRunLock::Acquire(log_, pixel7_, {model_[0]}, "tunefleet tune pid 42@labhost");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  const std::string m = second.status().message();
  EXPECT_NE(m.find(log_ + ": task gemm:64,64,64:float32 on key pixel7 is being tuned by tunefleet tune pid "
                          "41@labhost since "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("(its lock: " + lock_file + ")"), std::string::npos) << m;
  EXPECT_EQ(m.find("more of this run's"), std::string::npos) << m;  // one task was refused
  EXPECT_NE(m.find("another --db"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_TRUE(fs::exists(lock_file));  // the refused run leaves the holder's file alone
}

TEST_F(LogRunLockTest, GivenTheSameModelTwice_TheRefusalShouldCountTheOtherTasksHeld) {
  auto first = LogRunLock::Acquire(log_, pixel7_, model_, "first");
  ASSERT_TRUE(first.ok());
  auto second = LogRunLock::Acquire(log_, pixel7_, {model_[1], model_[0], "gemm:8,8,8:float32"}, "second");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(", and 1 more of this run's 3 tasks; "), std::string::npos)
      << second.status().message();
  // All or none: the task nobody held was released by the refused run, so a third run takes it.
  EXPECT_TRUE(LogRunLock::Acquire(log_, pixel7_, {"gemm:8,8,8:float32"}, "third").ok());
}

TEST_F(LogRunLockTest, GivenOtherTasksOrAnotherKey_RunsShouldWriteOneLogAtOnce) {
  auto first = LogRunLock::Acquire(log_, pixel7_, model_, "first");
  ASSERT_TRUE(first.ok());
  auto other_key = LogRunLock::Acquire(log_, RunLockScope::Key("adreno740"), model_, "a tuner of another phone model");
  EXPECT_TRUE(other_key.ok()) << other_key.status().ToString();
  auto other_tasks = LogRunLock::Acquire(log_, pixel7_, {"gemm:8,8,8:float32"}, "a tuner of another model");
  EXPECT_TRUE(other_tasks.ok()) << other_tasks.status().ToString();
  // A task listed twice by one run is one lock, not a refusal by itself.
  auto repeated = LogRunLock::Acquire(log_, RunLockScope::Key("mali"), {model_[0], model_[0]}, "repeats");
  EXPECT_TRUE(repeated.ok()) << repeated.status().ToString();
}

TEST_F(LogRunLockTest, GivenADeviceModelHeld_ARunThroughAnotherKeyShouldBeRefusedNamingTheDevice) {
  const RunLockScope device = RunLockScope::Device("633b142aba6f8a7c", "Adreno (TM) 740");
  auto first = LogRunLock::Acquire(log_, device, model_, "tunefleet tune pid 41@labhost");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = LogRunLock::Acquire(log_, device, {model_[1]}, "tunefleet tune pid 42@labhost");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(": task conv2d:1,8,8,8,8,3,3,1,1:float32 on device 'Adreno (TM) 740' "
                                           "(fingerprint 633b142aba6f8a7c) is being tuned by tunefleet tune pid 41@"),
            std::string::npos)
      << second.status().message();
  // A key that happens to be spelled as the fingerprint is another lock.
  EXPECT_TRUE(LogRunLock::Acquire(log_, RunLockScope::Key("633b142aba6f8a7c"), model_, "a key").ok());
}

TEST_F(LogRunLockTest, GivenTheRunsEnded_TheNextShouldTakeTheLockAndNoFileBeLeft) {
  {
    auto first = LogRunLock::Acquire(log_, pixel7_, model_, "first");
    ASSERT_TRUE(first.ok());
    LogRunLock moved = std::move(first).value();  // the locks travel with their owner
    EXPECT_FALSE(LogRunLock::Acquire(log_, pixel7_, model_, "second").ok());
    {
      auto other = LogRunLock::Acquire(log_, RunLockScope::Key("mali"), model_, "other");
      ASSERT_TRUE(other.ok());
    }
    EXPECT_TRUE(fs::exists(LogRunLock::LockFolder(log_))) << "the first run still holds its locks";
  }
  EXPECT_FALSE(fs::exists(LogRunLock::LockFolder(log_)));
  auto next = LogRunLock::Acquire(log_, pixel7_, model_, "second");
  EXPECT_TRUE(next.ok()) << next.status().ToString();
}

TEST_F(LogRunLockTest, GivenAHolderKilledWithoutCleanUp_ItsLocksShouldBeFreeAtOnceAndTakenOverLater) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = LogRunLock::Acquire(log_, pixel7_, model_, "the child");
    if (!lock.ok()) _exit(3);
    _exit(0);  // no destructor runs: the files stay, as after kill -9
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::exists(LogRunLock::LockPath(log_, pixel7_, model_[1])));  // stale files, no lock on them
  {
    auto next = LogRunLock::Acquire(log_, pixel7_, {model_[0]}, "the parent");
    EXPECT_TRUE(next.ok()) << next.status().ToString();
  }
  // The killed run's file of the other task waits for the next run of that task, which takes it over.
  EXPECT_TRUE(fs::exists(LogRunLock::LockPath(log_, pixel7_, model_[1])));
  {
    auto other = LogRunLock::Acquire(log_, pixel7_, {model_[1]}, "the parent again");
    EXPECT_TRUE(other.ok()) << other.status().ToString();
  }
  EXPECT_FALSE(fs::exists(LogRunLock::LockFolder(log_)));
}

// Another run's start tests every session lock for abandonment (LogRunLock::Abandoned): it holds the file for a
// moment, writes no note, and removes it. A run taking that lock just then waits the moment out instead of being
// refused ("being tuned by another run").
TEST_F(LogRunLockTest, GivenTheLockHeldForAMomentWithoutANote_ItShouldBeTakenNotRefused) {
  const RunLockScope session = RunLockScope::Session("token-1");
  const std::string path = LogRunLock::LockPath(log_, session, "");
  fs::create_directories(LogRunLock::LockFolder(log_));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::thread prober([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::unlink(path.c_str());
    ::close(fd);
  });
  auto taken = LogRunLock::Acquire(log_, session, {""}, "the starting run");
  prober.join();
  EXPECT_TRUE(taken.ok()) << taken.status().ToString();
}

// Runs in processes of their own, taking and releasing locks as fast as they can, every exit code checked.
void RunChildren(const std::vector<std::function<int()>>& children) {
  std::vector<pid_t> pids;
  for (const auto& body : children) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(body());
    pids.push_back(pid);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << i << ": 1 = two holders at once, 2 = refused, 3 = error";
  }
}

TEST_F(LogRunLockTest, GivenRunsRacingForOneTask_NoTwoShouldHoldItAtOnce) {
  const std::string marker = dir_.File("holder");  // made by the holder, so a second holder cannot make it too
  std::vector<std::function<int()>> children(4, [&] {
    for (int i = 0; i < 3000; ++i) {
      auto lock = LogRunLock::Acquire(log_, pixel7_, {model_[0]}, "racer");
      if (!lock.ok()) {
        if (lock.status().code() == Status::Code::kUnavailable) continue;
        std::fprintf(stderr, "%s\n", lock.status().ToString().c_str());
        return 3;
      }
      const int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (fd < 0) return 1;
      ::close(fd);
      ::unlink(marker.c_str());
    }
    return 0;
  });
  RunChildren(children);
}

// A lock probed without end (each probe holds the file for a moment without a note and removes it, as another run's
// start does to every session lock: LogRunLock::Abandoned) makes a taking run wait for notes and find its file
// removed under it, turn after turn. It may be refused, the lock being busy, but never fail: counted together, the
// two kinds of turn had made a run on a loaded machine give up with "kept being removed".
TEST_F(LogRunLockTest, GivenALockProbedWithoutEnd_TakingItShouldSucceedOrBeRefusedNeverFail) {
  const RunLockScope session = RunLockScope::Session("token-1");
  const std::string path = LogRunLock::LockPath(log_, session, "");
  std::vector<std::function<int()>> children;
  children.push_back([&] {  // the prober
    for (int i = 0; i < 20000; ++i) {
      if (::mkdir(LogRunLock::LockFolder(log_).c_str(), 0755) != 0 && errno != EEXIST) return 3;
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);  // gone at once if the folder went
      if (fd >= 0) ::close(fd);
      auto abandoned = LogRunLock::Abandoned(path);
      if (!abandoned.ok()) {
        std::fprintf(stderr, "%s\n", abandoned.status().ToString().c_str());
        return 3;
      }
    }
    return 0;
  });
  children.push_back([&] {  // the taker
    int taken = 0;
    for (int i = 0; i < 300; ++i) {
      auto lock = LogRunLock::Acquire(log_, session, {""}, "the starting run");
      if (lock.ok()) ++taken;
      if (lock.ok() || lock.status().code() == Status::Code::kUnavailable) continue;
      std::fprintf(stderr, "%s\n", lock.status().ToString().c_str());
      return 3;
    }
    return taken > 0 ? 0 : 2;
  });
  RunChildren(children);
}

TEST_F(LogRunLockTest, GivenRunsOfOtherTasksTakingAndReleasingAtOnce_NoneShouldBeRefused) {
  std::vector<std::function<int()>> children;
  for (int c = 0; c < 4; ++c) {
    children.push_back([&, c] {
      for (int i = 0; i < 1000; ++i) {
        auto lock = LogRunLock::Acquire(log_, pixel7_, {"gemm:" + std::to_string(c + 1) + ",8,8:float32"}, "run");
        if (!lock.ok()) {
          std::fprintf(stderr, "%s\n", lock.status().ToString().c_str());
          return lock.status().code() == Status::Code::kUnavailable ? 2 : 3;
        }
      }
      return 0;
    });
  }
  RunChildren(children);
}

// A run of `tasks` tasks in a process of its own whose open files are limited to `soft` (and `hard`): 0 when it took
// them all, 2 when it failed with the error that names the limit and left no lock file, 4 when the limits could not
// be set, 3 otherwise.
int AcquireUnderLimit(const std::string& log, size_t tasks, rlim_t soft, rlim_t hard) {
  rlimit limit{soft, hard};
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return 4;
  std::vector<std::string> specs;
  for (size_t i = 0; i < tasks; ++i) specs.push_back("gemm:" + std::to_string(i + 1) + ",8,8:float32");
  auto lock = LogRunLock::Acquire(log, RunLockScope::Key("pixel7"), specs, "a big model");
  if (lock.ok()) return fs::exists(LogRunLock::LockPath(log, RunLockScope::Key("pixel7"), specs.back())) ? 0 : 3;
  const std::string m = lock.status().message();  // a copy: status() returns a temporary
  const bool named = m.find("Too many open files") != std::string::npos && m.find("ulimit -Hn") != std::string::npos;
  return named && !fs::exists(LogRunLock::LockFolder(log)) ? 2 : 3;
}

int ExitCodeOf(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST_F(LogRunLockTest, GivenMoreTasksThanTheSoftLimitOfOpenFiles_ItShouldBeRaisedToTheHardOne) {
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  if (now.rlim_max < 256) GTEST_SKIP() << "the hard limit of open files here is " << now.rlim_max;
  EXPECT_EQ(ExitCodeOf([&] { return AcquireUnderLimit(log_, 100, 64, 256); }), 0);
}

TEST_F(LogRunLockTest, GivenMoreTasksThanTheHardLimitOfOpenFiles_TheErrorShouldSaySoAndNoLockBeLeft) {
  EXPECT_EQ(ExitCodeOf([&] { return AcquireUnderLimit(log_, 100, 64, 64); }), 2);
}

TEST_F(LogRunLockTest, GivenTheLogThroughASymlinkOrAnotherSpelling_ItsLocksShouldBeTheSame) {
  { std::ofstream(log_) << ""; }
  const std::string link = dir_.File("link.db");
  fs::create_symlink(log_, link);
  auto first = LogRunLock::Acquire(log_, pixel7_, model_, "tunefleet tune pid 41@labhost");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  for (const std::string& other : {link, dir_.File("./sub/../tune.db")}) {
    fs::create_directories(dir_.File("sub"));
    auto second = LogRunLock::Acquire(other, pixel7_, {model_[1]}, "tunefleet tune pid 42@labhost");
    ASSERT_FALSE(second.ok()) << other;
    EXPECT_NE(second.status().message().find("is being tuned by tunefleet tune pid 41@labhost"), std::string::npos)
        << second.status().message();
  }
}

TEST_F(LogRunLockTest, GivenAFolderThatCannotHoldTheLock_TheErrorShouldNameIt) {
  const std::string nowhere = dir_.File("no/such/tune.db");
  auto lock = LogRunLock::Acquire(nowhere, pixel7_, model_, "x");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Status::Code::kIOError);
  EXPECT_NE(lock.status().message().find(nowhere + ".locks"), std::string::npos) << lock.status().message();
}

TEST_F(LogRunLockTest, GivenALockFolderThatIsALinkToNothing_TheErrorShouldSaySoAtOnce) {
  fs::create_symlink(dir_.File("gone"), LogRunLock::LockFolder(log_));
  auto lock = LogRunLock::Acquire(log_, pixel7_, model_, "x");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Status::Code::kIOError);
  EXPECT_NE(lock.status().message().find(LogRunLock::LockFolder(log_) + ": cannot create the run lock: the folder "
                                         "of run locks is a link to nothing"),
            std::string::npos)
      << lock.status().message();
}

// A lock whose note cannot be written (a full disk) is let go of as a release does: its empty file, and the folder
// when it holds no other run's lock, were left beside the log. Another run's lock in the folder stays.
TEST_F(LogRunLockTest, GivenAFullDisk_ATakeThatCannotWriteItsNoteShouldLeaveNothingBehind) {
  SmallTmpfs disk(dir_.File("disk"), 1 << 20);
  if (!disk.why_not().empty()) GTEST_SKIP() << disk.why_not();
  const std::string log = disk.File("tune.db");
  auto held = LogRunLock::Acquire(log, RunLockScope::Key("other"), {model_[0]}, "tunefleet tune pid 40@labhost");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  disk.Fill();
  for (const std::string& spec : model_) {
    auto lock = LogRunLock::Acquire(log, pixel7_, {spec}, "tunefleet tune pid 41@labhost");
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.status().code(), Status::Code::kIOError);
    EXPECT_NE(lock.status().message().find(LogRunLock::LockPath(log, pixel7_, spec) +
                                           ": cannot write the run lock: No space left on device"),
              std::string::npos)
        << lock.status().message();
  }
  std::vector<std::string> left;
  for (const fs::directory_entry& e : fs::directory_iterator(LogRunLock::LockFolder(log))) left.push_back(e.path());
  EXPECT_EQ(left, (std::vector<std::string>{LogRunLock::LockPath(log, RunLockScope::Key("other"), model_[0])}));
  auto alone = LogRunLock::Acquire(disk.File("alone.db"), pixel7_, model_, "tunefleet tune pid 42@labhost");
  ASSERT_FALSE(alone.ok());
  EXPECT_FALSE(fs::exists(LogRunLock::LockFolder(disk.File("alone.db"))));
}

}  // namespace
}  // namespace tunefleet
