#include "tuner/deferred_log.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"

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

}  // namespace
}  // namespace tunefleet
