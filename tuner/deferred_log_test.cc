#include "tuner/deferred_log.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"
#include "common/tmpfs_testing.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

TEST(DeferredLogTest, GivenNoFileAtThePath_TheLogShouldBeCreatedOnlyByTheFirstGet) {
  TempDir dir;
  const std::string path = dir.File("new.db");
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->IfOpen(), nullptr);
  EXPECT_FALSE(fs::exists(path));
  Result<TuningLog*> opened = log->Get();
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(log->IfOpen(), *opened);
  Result<TuningLog*> again = log->Get();  // the same log, not a second one
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *opened);
}

// An empty file made for the run (`touch tune.db`) is no log yet: it stays empty until the first Get makes one of it.
TEST(DeferredLogTest, GivenAnEmptyFile_TheLogShouldBeMadeOfItOnlyByTheFirstGet) {
  TempDir dir;
  const std::string path = dir.File("touched.db");
  { std::ofstream(path).flush(); }
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->IfOpen(), nullptr);
  EXPECT_EQ(fs::file_size(path), 0u);
  Result<TuningLog*> opened = log->Get();
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_GT(fs::file_size(path), 0u);
  EXPECT_TRUE((*opened)->Records(0, 0, 0).ok());
}

TEST(DeferredLogTest, GivenAnExistingLog_ItShouldBeOpenAtOnce) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  ASSERT_TRUE(TuningLog::Open(path).ok());
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_NE(log->IfOpen(), nullptr);
}

TEST(DeferredLogTest, GivenAFileThatIsNoTuningLog_OpenShouldRefuseItAtOnceAndLeaveItAsItIs) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << "not a database, just some notes that happen to be long enough\n";
  const auto size = fs::file_size(path);
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(path), std::string::npos) << log.status().message();
  EXPECT_EQ(fs::file_size(path), size);
}

TEST(DeferredLogTest, GivenAPathInAFolderThatDoesNotExist_OpenShouldRefuseItAtOnce) {
  TempDir dir;
  const std::string path = dir.File("no/such/folder/tune.db");
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("no/such/folder"), std::string::npos) << log.status().message();
  EXPECT_FALSE(fs::exists(dir.File("no")));
}

TEST(DeferredLogTest, GivenALinkToAFolderThatDoesNotExist_OpenShouldRefuseItAtOnce) {
  TempDir dir;
  const std::string path = dir.File("link.db");
  fs::create_symlink(dir.File("missing/target.db"), path);
  Result<DeferredLog> log = DeferredLog::Open(path);  // said now, not after the tracker leased a device
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(path), std::string::npos) << log.status().message();
}

// A folder that exists and that root may write to, but that holds no files of anyone's: said at once, by its cause,
// and nothing is left there (it was the folder of run locks beside the log that said so, after the tracker was asked).
TEST(DeferredLogTest, GivenAFolderThatRefusesNewFiles_OpenShouldRefuseThePathAtOnce) {
  const std::string path = "/proc/tunefleet-deferred-log-test.db";
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_FALSE(fs::exists(path));
  if (::access("/proc", W_OK) != 0) {  // not root: the folder's permissions refuse it first, in SQLite's words
    EXPECT_EQ(log.status().message().rfind(path + ": cannot open", 0), 0u) << log.status().message();
    return;
  }
  EXPECT_EQ(log.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(log.status().message().rfind(path + ": cannot create a tuning log there: ", 0), 0u)
      << log.status().message();
}

// A disk too full for a new log to start is said before anything is written: SQLite, let to try, left a log file
// that held no log and a -wal and -shm beside it, and a run failed on its lock file. An empty file made for the run
// is refused alike and stays as it was.
TEST(DeferredLogTest, GivenAFullDisk_OpenShouldRefuseANewLogAndWriteNothing) {
  TempDir dir;
  SmallTmpfs disk(dir.File("disk"), 1 << 20);
  if (!disk.why_not().empty()) GTEST_SKIP() << disk.why_not();
  const std::string touched = disk.File("touched.db");
  { std::ofstream(touched).flush(); }
  disk.Fill();
  for (const std::string& path : {disk.File("new.db"), touched}) {
    Result<DeferredLog> log = DeferredLog::Open(path);
    ASSERT_FALSE(log.ok()) << path;
    EXPECT_EQ(log.status().code(), Status::Code::kIOError);
    EXPECT_NE(log.status().message().find(path + ": cannot create a tuning log there: no space left on its disk: 0 "
                                                 "KiB free in " + dir.File("disk")),
              std::string::npos)
        << log.status().message();
  }
  // A link to a log not made yet is made through the link at once: its target's disk is the one that counts.
  const std::string link = dir.File("link.db");
  fs::create_symlink("disk/through-link.db", link);
  Result<DeferredLog> linked = DeferredLog::Open(link);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find(link + ": cannot create a tuning log there (at " + dir.File("disk") +
                                           "/through-link.db): no space left on its disk: 0 KiB free in " +
                                           dir.File("disk")),
            std::string::npos)
      << linked.status().message();
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir.File("disk"))) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"filler", "touched.db"}));
  EXPECT_EQ(fs::file_size(touched), 0u);
}

}  // namespace
}  // namespace tunefleet
