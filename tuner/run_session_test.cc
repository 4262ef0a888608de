#include "tuner/run_session.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"
#include "common/tmpfs_testing.h"
#include "storage/sqlite_handle.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class RunSessionTest : public ::testing::Test {
 protected:
  std::unique_ptr<TuningLog> Open() {
    auto log = TuningLog::Open(log_);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  // sessions.state and sessions.run_lock of session `id`, read through a connection of its own.
  std::pair<std::string, std::string> Session(int64_t id) {
    auto db = SqliteDb::OpenReadOnly(log_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return {};
    auto st = db->Prepare("SELECT state, run_lock FROM sessions WHERE id = ?1");
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return {};
    st->Bind(1, id);
    auto row = st->Step();
    if (!row.ok() || !*row) return {"(none)", ""};
    return {st->Text(0), st->Text(1)};
  }

  std::string LockFile(int64_t id) { return LogRunLock::LockFolder(log_) + "/" + Session(id).second; }

  // Writes tasks into `log` until a write is refused (its disk full); the refusal, or OK when none came.
  static Status WriteUntilRefused(TuningLog& log) {
    const std::string workload = R"({"pad": ")" + std::string(500, 'x') + R"("})";
    Status refused;
    for (int i = 0; i < 10000 && refused.ok(); ++i)
      refused = log.UpsertTask("gemm:" + std::to_string(i) + ",8,8", "gemm", workload, 1).status();
    return refused;
  }

  // Forks a run that begins a session, writes a byte to `ready` (when >= 0), then, with `stay`, waits to be killed,
  // else exits at once without ending its session or releasing its lock (no destructor runs), as kill -9 would.
  pid_t ForkRun(bool stay, int ready) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    auto log = TuningLog::Open(log_);
    if (!log.ok()) _exit(2);
    auto run = RunSession::Begin(**log, "{}", "tunefleet tune pid " + std::to_string(getpid()) + "@test");
    if (!run.ok()) _exit(3);
    if (ready >= 0 && ::write(ready, "x", 1) != 1) _exit(4);
    while (stay) ::pause();
    _exit(0);
  }

  TempDir dir_;
  std::string log_ = dir_.File("tune.db");
};

TEST_F(RunSessionTest, GivenARunKilledWithoutEndingItsSession_TheNextRunShouldEndItAsKilledAndRemoveItsLock) {
  const pid_t dead = ForkRun(/*stay=*/false, -1);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(Session(1).first, "running");
  ASSERT_NE(Session(1).second, "");
  const std::string dead_lock = LockFile(1);
  ASSERT_TRUE(fs::exists(dead_lock));  // left behind, unlocked

  auto log = Open();
  ASSERT_NE(log, nullptr);
  std::string own_lock;
  {
    auto run = RunSession::Begin(*log, R"({"argv":["tune"]})", "tunefleet tune pid 2@test");
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->id(), 2);
    EXPECT_EQ(Session(1).first, "killed");
    EXPECT_FALSE(fs::exists(dead_lock));
    EXPECT_EQ(Session(2).first, "running");
    own_lock = LockFile(2);
    EXPECT_TRUE(fs::exists(own_lock));  // held while the run lives
    ASSERT_TRUE(run->End("done").ok());
    EXPECT_EQ(Session(2).first, "done");
  }
  EXPECT_FALSE(fs::exists(own_lock));   // the lock file went with the session
  EXPECT_EQ(Session(2).first, "done");  // ended once: the destructor left it
}

TEST_F(RunSessionTest, GivenARunStillAlive_ItsSessionShouldStayRunningUntilItIsKilled) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t alive = ForkRun(/*stay=*/true, pipe_fds[1]);
  char byte = 0;
  ASSERT_EQ(::read(pipe_fds[0], &byte, 1), 1);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);

  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 3@test");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(Session(1).first, "running");
  EXPECT_TRUE(fs::exists(LockFile(1)));

  ::kill(alive, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(alive, &status, 0), alive);
  auto ended = EndKilledSessions(*log, run->id());
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  EXPECT_EQ(*ended, 1);
  EXPECT_EQ(Session(1).first, "killed");
  EXPECT_EQ(Session(run->id()).first, "running");  // its own, left alone
}

TEST_F(RunSessionTest, GivenASessionDestroyedWithoutEnd_ItShouldEndAsFailed) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  {
    auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 4@test");
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    RunSession moved(std::move(*run));  // the moved-from session ends nothing
    EXPECT_EQ(Session(1).first, "running");
  }
  EXPECT_EQ(Session(1).first, "failed");
  EXPECT_FALSE(fs::exists(LogRunLock::LockFolder(log_)));  // the last lock file took the folder with it
}

// A run whose log's disk filled up failed, and the write that ends its session found no room either: the session
// stayed 'running', and the next run marked it 'killed'. The room the session holds back lets it end as 'failed'.
TEST_F(RunSessionTest, GivenTheLogsDiskFull_EndShouldStillRecordTheSessionAsFailed) {
  SmallTmpfs disk(dir_.File("small"), 2 << 20);
  if (!disk.why_not().empty()) GTEST_SKIP() << disk.why_not();
  log_ = disk.File("tune.db");
  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 9@test");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::string filler = disk.Fill();
  const Status refused = WriteUntilRefused(*log);
  ASSERT_FALSE(refused.ok()) << "the disk never filled up";
  EXPECT_NE(refused.message().find("full"), std::string::npos) << refused.ToString();

  EXPECT_TRUE(run->End("failed").ok());
  fs::remove(filler);
  EXPECT_EQ(Session(run->id()).first, "failed");
}

// The same when the disk is almost full before the run begins (128 KiB free, less than the 256 KiB the session holds
// back): the reserve could not be taken, the session stayed 'running', and the next run marked it 'killed'. It now
// holds back what there is, down to 16 KiB.
TEST_F(RunSessionTest, GivenTheLogsDiskAlmostFullAtTheStart_EndShouldStillRecordTheSessionAsFailed) {
  SmallTmpfs disk(dir_.File("small"), 2 << 20);
  if (!disk.why_not().empty()) GTEST_SKIP() << disk.why_not();
  log_ = disk.File("tune.db");
  auto log = Open();
  ASSERT_NE(log, nullptr);
  const std::string filler = disk.Fill();
  fs::resize_file(filler, fs::file_size(filler) - (128 << 10));
  auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 9@test");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  disk.Fill();  // the filler again, over what the session left (its reserve is a file of its own)
  ASSERT_FALSE(WriteUntilRefused(*log).ok()) << "the disk never filled up";

  EXPECT_TRUE(run->End("failed").ok());
  fs::remove(filler);
  EXPECT_EQ(Session(run->id()).first, "failed");
}

// A run killed after taking its lock and before its session row named it leaves a file no row names; the next run
// removes it once no one holds it, and keeps a live run's.
TEST_F(RunSessionTest, GivenASessionLockNoRowNames_TheNextRunShouldRemoveItUnlessItIsHeld) {
  const pid_t pid = fork();
  if (pid == 0) {
    auto lock = LogRunLock::Acquire(log_, RunLockScope::Session("killed before its row"), {""}, "pid 6@test");
    _exit(lock.ok() ? 0 : 3);  // no destructor runs: the file stays, unlocked, as after kill -9
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string orphan = LogRunLock::LockPath(log_, RunLockScope::Session("killed before its row"), "");
  ASSERT_TRUE(fs::exists(orphan));
  EXPECT_EQ(fs::path(orphan).filename().string().rfind(LogRunLock::kSessionLockPrefix, 0), 0u);
  auto held = LogRunLock::Acquire(log_, RunLockScope::Session("alive, before its row"), {""}, "pid 7@test");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  const std::string alive = LogRunLock::LockPath(log_, RunLockScope::Session("alive, before its row"), "");

  auto log = Open();
  ASSERT_NE(log, nullptr);
  auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 8@test");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(LockFile(run->id())));
}

// Sessions of older runs and of imports name no lock: nothing tells whether their run lives, so they are left.
TEST_F(RunSessionTest, GivenASessionWithoutARunLock_ANewRunShouldLeaveIt) {
  auto log = Open();
  ASSERT_NE(log, nullptr);
  ASSERT_TRUE(log->BeginSession(R"({"import":"x.log"})", "").ok());
  auto run = RunSession::Begin(*log, "{}", "tunefleet tune pid 5@test");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(Session(1).first, "running");
}

}  // namespace
}  // namespace tunefleet
