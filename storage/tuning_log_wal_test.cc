#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "storage/leftover_wal_testing.h"
#include "storage/tuning_log.h"
#include "storage/tuning_log_testing.h"

// The tuning log against what other processes do to its files: a killed run's -wal beside a log replaced since, and
// another process's write lock.
namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// The bytes of the file at `path`.
std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A run killed with -9 leaves a -wal; the log is then restored from a copy (or another log moved in place) while
// that -wal stays beside it. The -wal is the old file's: `best`, a reading command, folded it into the restored file
// when it closed and damaged it for good (then said it was damaged). No command folds a -wal into a log that does not
// read sound through it: the file stays byte for byte, the -wal is named, and without it the log reads as it stands.
TEST_F(TuningLogTest, GivenALogReplacedWhileAKilledRunsWalStayed_NoCommandShouldFoldItIn) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(log->AddRecord(Rec(i, 0, 1e-3)).ok());
  }
  // The killed run: its last transactions (every record rewritten larger, the file grown) only in the -wal.
  int changed = 0;
  ASSERT_NO_FATAL_FAILURE(
      WriteIntoLeftoverWal(path_, "UPDATE records SET message = printf('%.300c', 'x') || id", &changed));
  ASSERT_EQ(changed, 400);
  const std::string kept_wal = (dir_ / "wal.keep").string();
  fs::rename(path_ + "-wal", kept_wal);
  // The copy restored in its place: another log of a few records.
  const std::string other = (dir_ / "backup.db").string();
  {
    auto log = TuningLog::Open(other);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    MakeWorld(**log);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*log)->AddRecord(Rec(i, 0, 2e-3)).ok());
  }
  fs::rename(other, path_);
  fs::rename(kept_wal, path_ + "-wal");
  const std::string before = Bytes(path_);
  const auto wal_bytes = fs::file_size(path_ + "-wal");
  for (bool writing : {false, true}) {
    auto opened = writing ? TuningLog::Open(path_) : TuningLog::OpenExisting(path_);
    ASSERT_FALSE(opened.ok()) << (writing ? "writing" : "reading");
    EXPECT_EQ(opened.status().code(), Status::Code::kCorruption) << opened.status().ToString();
    EXPECT_NE(opened.status().message().find("as read through its write-ahead file " + path_ + "-wal"),
              std::string::npos)
        << opened.status().ToString();
    EXPECT_NE(opened.status().message().find("move " + path_ + "-wal and " + path_ + "-shm away"), std::string::npos)
        << opened.status().ToString();
    EXPECT_EQ(Bytes(path_), before) << (writing ? "writing" : "reading");
    ASSERT_TRUE(fs::exists(path_ + "-wal"));
    EXPECT_EQ(fs::file_size(path_ + "-wal"), wal_bytes);
  }
  // What the line says to do.
  fs::remove(path_ + "-wal");
  fs::remove(path_ + "-shm");
  auto restored = TuningLog::OpenExisting(path_);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ((*restored)->Records(0, 0, 0).value().size(), 3u);
}

// A -wal of the log's own (a killed run's) is folded in by any command that reads the log sound through it.
TEST_F(TuningLogTest, GivenAKilledRunsWalOfItsOwn_ReadingShouldSeeItAndFoldItIn) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    ASSERT_TRUE(log->AddRecord(Rec(1, 0, 1e-3)).ok());
  }
  int changed = 0;
  ASSERT_NO_FATAL_FAILURE(WriteIntoLeftoverWal(path_, "UPDATE records SET mean_cost = 0.0005", &changed));
  ASSERT_EQ(changed, 1);
  {
    auto read = TuningLog::OpenExisting(path_);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_DOUBLE_EQ((*read)->Records(0, 0, 0).value().at(0).mean_cost, 0.0005);
  }
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  EXPECT_EQ(QueryRaw("SELECT mean_cost FROM records"), "0.0005");
}


// A write that meets another process's write lock (a sqlite3 shell's open transaction, a VACUUM) waits 30 s and
// fails; a run lost its batch's results so. With SetLockWait it waits as long as it is told to, and gives up when told.
TEST_F(TuningLogTest, GivenAnotherProcessHoldingTheWriteLock_AWriteShouldWaitAsLongAsSetLockWaitSays) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &holder), SQLITE_OK);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> owned(holder, sqlite3_close);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  double longest = 0;
  log->SetLockWait([&longest](double waited) {
    longest = waited;
    return waited < 0.3;
  });
  Result<int64_t> given_up = log->AddRecord(Rec(1, 0, 1e-3));
  ASSERT_FALSE(given_up.ok());
  EXPECT_EQ(given_up.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(given_up.status().message().find("another process held a write lock on it"), std::string::npos)
      << given_up.status().ToString();
  EXPECT_GE(longest, 0.3);
  EXPECT_LT(longest, 10.0);
  // Released after a second: a write told to wait on gets in.
  log->SetLockWait([](double) { return true; });
  std::thread release([holder] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
  });
  const auto start = std::chrono::steady_clock::now();
  Result<int64_t> waited = log->AddRecord(Rec(2, 0, 1e-3));
  release.join();
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  log->SetLockWait(nullptr);
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 1u);
}

}  // namespace
}  // namespace tunefleet
