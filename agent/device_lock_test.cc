// The cross-process device lock: exclusive between openers, waits for the holder, and freed when the holder dies.
#include "agent/device_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace tunefleet::agent {
namespace {

std::string TempLockPath() {
  char path[] = "/tmp/tunefleet-lock-test-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  return path;
}

TEST(DeviceLockTest, GivenTheLockHeldThroughOneOpening_AnotherOpeningShouldNotGetItUntilItIsReleased) {
  const std::string path = TempLockPath();
  Result<DeviceLock> first = DeviceLock::Open(path);
  Result<DeviceLock> second = DeviceLock::Open(path);
  ASSERT_TRUE(first.ok() && second.ok());
  Result<DeviceLock::Guard> held = first->TryAcquire();
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->held());
  Result<DeviceLock::Guard> refused = second->TryAcquire();
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->held());
  held->Release();
  Result<DeviceLock::Guard> taken = second->TryAcquire();
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(taken->held());
  std::remove(path.c_str());
}

TEST(DeviceLockTest, GivenTheLockHeld_AcquireShouldWaitForTheRelease) {
  const std::string path = TempLockPath();
  Result<DeviceLock> holder = DeviceLock::Open(path);
  Result<DeviceLock> waiter = DeviceLock::Open(path);
  ASSERT_TRUE(holder.ok() && waiter.ok());
  Result<DeviceLock::Guard> held = holder->Acquire();
  ASSERT_TRUE(held.ok() && held->held());
  std::atomic<bool> acquired{false};
  std::thread thread([&] {
    Result<DeviceLock::Guard> taken = waiter->Acquire();
    acquired = taken.ok() && taken->held();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(acquired.load());
  held->Release();
  thread.join();
  EXPECT_TRUE(acquired.load());
  std::remove(path.c_str());
}

TEST(DeviceLockTest, GivenAHolderThatIsKilled_TheLockShouldBeFree) {
  const std::string path = TempLockPath();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<DeviceLock> lock = DeviceLock::Open(path);
    Result<DeviceLock::Guard> held = lock.ok() ? lock->Acquire() : Result<DeviceLock::Guard>(lock.status());
    const char byte = held.ok() && held->held() ? 1 : 0;
    (void)!write(ready[1], &byte, 1);
    for (;;) pause();
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  Result<DeviceLock> lock = DeviceLock::Open(path);
  ASSERT_TRUE(lock.ok());
  Result<DeviceLock::Guard> refused = lock->TryAcquire();
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->held());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  Result<DeviceLock::Guard> taken = lock->TryAcquire();
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(taken->held());
  close(ready[0]);
  close(ready[1]);
  std::remove(path.c_str());
}

TEST(DeviceLockTest, GivenALockFileWeMayOnlyRead_ItShouldStillLock) {
  // Another user's agent created the file (0644 under the usual umask); read access is all flock needs.
  const std::string path = TempLockPath();
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  Result<DeviceLock> lock = DeviceLock::Open(path);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  Result<DeviceLock::Guard> held = lock->TryAcquire();
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->held());
  std::remove(path.c_str());
}

TEST(DeviceLockTest, GivenADirectoryThatDoesNotExist_OpenShouldFailNamingThePath) {
  Result<DeviceLock> lock = DeviceLock::Open("/nonexistent-dir/x.lock");
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.status().message().find("/nonexistent-dir/x.lock"), std::string::npos);
}

TEST(DeviceLockTest, TheDefaultPathShouldNameTheDeviceAndItsIndices) {
  const std::string path = DeviceLock::DefaultPath("abc123", 1, 2);
  EXPECT_NE(path.find("tunefleet-device-abc123-p1-d2.lock"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet::agent
