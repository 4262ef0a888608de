#include "tuner/lease_note.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/host_name.h"
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
  // Runs `body` in a child process and returns its exit status (-1 when it did not exit).
  static int InChild(const std::function<int()>& body) {
    const pid_t child = fork();
    if (child == 0) _exit(body());
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void WriteNote(const std::string& name, const std::string& text) { std::ofstream(dir_.File(name)) << text; }
  static std::string Read(const std::string& path) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  }

  TempDir dir_;
  std::string prefix_ = dir_.File("tune.db");
};

TEST_F(LeaseNoteTest, GivenThisRunsNote_ItShouldBeWrittenLockedAndRemovedButNeverListedAsDead) {
  {
    Result<LeaseNote> note = LeaseNote::Write(prefix_, "lease-1-00ff", "127.0.0.1:9190");
    ASSERT_TRUE(note.ok()) << note.status().ToString();
    const std::string path = LeaseNote::PathFor(prefix_);
    EXPECT_NE(Read(path).find(R"("lease_id":"lease-1-00ff")"), std::string::npos) << Read(path);
    EXPECT_NE(Read(path).find(R"("flock":true)"), std::string::npos) << Read(path);
    EXPECT_TRUE(FindDeadRunLeases(prefix_).empty());  // this process's own note
    // Another process (another run) finds it locked: a live run's, whatever its pid and host say.
    EXPECT_EQ(InChild([&] { return static_cast<int>(FindDeadRunLeases(prefix_).size()); }), 0);
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(InChild([&] { return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 1 : 0; }), 0);
    ::close(fd);
  }
  EXPECT_FALSE(fs::exists(LeaseNote::PathFor(prefix_)));
}

TEST_F(LeaseNoteTest, GivenARunKilledWhileHoldingItsNote_TheNextRunShouldListItsLeaseOnceAndTakeTheNoteOver) {
  const pid_t killed = fork();
  if (killed == 0) {
    Result<LeaseNote> note = LeaseNote::Write(prefix_, "lease-2-abc", "h:1");
    if (note.ok()) raise(SIGKILL);  // killed while holding it: no destructor runs
    _exit(1);
  }
  int status = 0;
  waitpid(killed, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(fs::exists(prefix_ + ".lease." + std::to_string(killed)));
  const std::vector<NotedLease> dead = FindDeadRunLeases(prefix_);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].lease_id, "lease-2-abc");
  EXPECT_EQ(dead[0].tracker, "h:1");
  EXPECT_EQ(dead[0].pid, killed);
  EXPECT_EQ(dead[0].host, HostName());
  EXPECT_FALSE(fs::exists(prefix_ + ".lease." + std::to_string(killed)));  // taken over: no second run lists it
  EXPECT_TRUE(FindDeadRunLeases(prefix_).empty());
}

// A run on another host that shares the log's folder: its pid says nothing here, its note's lock does. (The other
// host is a process of this one whose note names another host: what a second host would write, as flocks are shared.)
TEST_F(LeaseNoteTest, GivenLockedNotesOfAnotherHostOrAReusedPid_TheDeadRunsShouldBeListedAndTheLiveOneNot) {
  const std::string other = R"(,"host":"another-host","flock":true})";
  WriteNote("tune.db.lease.41", R"({"lease_id":"lease-3-abc","tracker":"h:1","pid":1)" + other);  // nobody holds it
  WriteNote("tune.db.lease.42", R"({"lease_id":"lease-4-abc","tracker":"h:1","pid":1)" + other);
  // This host, pid 1: that pid runs, but pids are reused; nobody holds the note's lock, so its writer is gone.
  WriteNote("tune.db.lease.43", R"({"lease_id":"lease-5-abc","tracker":"h:1","pid":1,"host":")" + HostName() +
                                    R"(","flock":true})");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t live = fork();
  if (live == 0) {  // holds note 42's lock until killed
    const int fd = ::open(dir_.File("tune.db.lease.42").c_str(), O_RDWR);
    const char ok = (fd >= 0 && ::flock(fd, LOCK_EX) == 0) ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  const std::vector<NotedLease> dead = FindDeadRunLeases(prefix_);
  kill(live, SIGKILL);
  waitpid(live, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  std::set<std::string> dead_ids;
  for (const NotedLease& n : dead) dead_ids.insert(n.lease_id);
  EXPECT_EQ(dead_ids, (std::set<std::string>{"lease-3-abc", "lease-5-abc"}));
  EXPECT_TRUE(fs::exists(dir_.File("tune.db.lease.42")));
  // Once its run is gone, the other note is a dead run's too.
  const std::vector<NotedLease> later = FindDeadRunLeases(prefix_);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].lease_id, "lease-4-abc");
}

// Notes written before they were locked (no "flock" member) are judged by their pid, on this host only.
TEST_F(LeaseNoteTest, GivenUnlockedNotesOfBeforeAndGarbage_OnlyTheKilledRunsOfThisHostShouldBeListed) {
  const pid_t dead = DeadPid();
  const std::string host = HostName();
  WriteNote("tune.db.lease." + std::to_string(dead), R"({"lease_id":"lease-7-abc","tracker":"h:1","pid":)" +
                                                         std::to_string(dead) + R"(,"host":")" + host + "\"}");
  WriteNote("tune.db.lease.1", R"({"lease_id":"lease-8-abc","tracker":"h:1","pid":1,"host":")" + host + "\"}");
  WriteNote("tune.db.lease.2", R"({"lease_id":"lease-9-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                   R"(,"host":"another-host"})");
  WriteNote("tune.db.lease.3", "not json");
  WriteNote("tune.db.lease.6", "");  // a note being written: created, not yet locked
  WriteNote("tune.db.lease.5", R"({"lease_id":"lease-11-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                   R"(,"host":5})");  // threw a type error, which failed every tune on the log
  WriteNote("other.db.lease.4", R"({"lease_id":"lease-10-abc","tracker":"h:1","pid":)" + std::to_string(dead) +
                                    R"(,"host":")" + host + "\"}");
  const std::vector<NotedLease> dead_runs = FindDeadRunLeases(prefix_);
  ASSERT_EQ(dead_runs.size(), 1u);  // pid 1 runs; another host's pid says nothing here; other.db is another log
  EXPECT_EQ(dead_runs[0].lease_id, "lease-7-abc");
  EXPECT_EQ(dead_runs[0].pid, dead);
  for (const char* kept : {"tune.db.lease.1", "tune.db.lease.2", "tune.db.lease.3", "tune.db.lease.6"})
    EXPECT_TRUE(fs::exists(dir_.File(kept))) << kept;
}

}  // namespace
}  // namespace tunefleet
