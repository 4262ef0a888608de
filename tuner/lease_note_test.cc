#include "tuner/lease_note.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class LeaseNoteTest : public ::testing::Test {
 protected:
  // The pid of a process that has ended (and been reaped).
  static pid_t DeadPid() {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    return child;
  }
  void WriteNote(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
  }
  std::string Host() const {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
  }

  TempDir dir_;
  std::string prefix_ = dir_.File("tune.db");
};

TEST_F(LeaseNoteTest, GivenThisRunsNote_ItShouldBeWrittenAndRemovedButNeverListedAsDead) {
  ASSERT_TRUE(WriteLeaseNote(prefix_, "lease-1-00ff", "127.0.0.1:9190").ok());
  EXPECT_TRUE(fs::exists(LeaseNotePath(prefix_)));
  EXPECT_TRUE(FindDeadRunLeases(prefix_).empty());  // this process runs
  RemoveLeaseNote(prefix_);
  EXPECT_FALSE(fs::exists(LeaseNotePath(prefix_)));
}

TEST_F(LeaseNoteTest, GivenNotesOfAKilledRunAnotherHostAndGarbage_OnlyTheKilledRunsLeaseShouldBeListed) {
  const pid_t dead = DeadPid();
  WriteNote("tune.db.lease." + std::to_string(dead), R"({"lease_id":"lease-7-abc","tracker":"h:1","pid":)" +
                                                         std::to_string(dead) + R"(,"host":")" + Host() + "\"}");
  WriteNote("tune.db.lease.1", R"({"lease_id":"lease-8-abc","tracker":"h:1","pid":1,"host":")" + Host() + "\"}");
  WriteNote("tune.db.lease.2", R"({"lease_id":"lease-9-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                   R"(,"host":"another-host"})");
  WriteNote("tune.db.lease.3", "not json");
  WriteNote("tune.db.lease.5", R"({"lease_id":"lease-11-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                   R"(,"host":5})");  // threw a type error, which failed every tune on the log
  WriteNote("other.db.lease.4", R"({"lease_id":"lease-10-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                    R"(,"host":")" + Host() + "\"}");
  const std::vector<NotedLease> dead_runs = FindDeadRunLeases(prefix_);
  ASSERT_EQ(dead_runs.size(), 1u);  // pid 1 runs; another host's pid says nothing here; other.db is another log
  EXPECT_EQ(dead_runs[0].lease_id, "lease-7-abc");
  EXPECT_EQ(dead_runs[0].tracker, "h:1");
  EXPECT_EQ(dead_runs[0].pid, dead);
}

}  // namespace
}  // namespace tunefleet
