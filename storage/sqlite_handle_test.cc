#include "storage/sqlite_handle.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir_testing.h"
#include "common/tmpfs_testing.h"
#include "storage/leftover_wal_testing.h"

namespace tunefleet {
namespace {

TEST(SqliteHandleTest, GivenAnInMemoryDb_WeShouldBindStepAndReadColumns) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(db->Exec("CREATE TABLE t (a INTEGER, b REAL, c TEXT)").ok());
  auto ins = db->Prepare("INSERT INTO t VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(ins.ok());
  ins->Bind(1, int64_t{7}).Bind(2, 0.5).Bind(3, std::string_view("x\0y", 3));
  ASSERT_TRUE(ins->Run().ok());
  auto sel = db->Prepare("SELECT a, b, c FROM t");
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(sel->Step().value());
  EXPECT_EQ(sel->Int64(0), 7);
  EXPECT_DOUBLE_EQ(sel->Double(1), 0.5);
  EXPECT_EQ(sel->Text(2), std::string("x\0y", 3));
  EXPECT_FALSE(sel->Step().value());
}

TEST(SqliteHandleTest, GivenAFailingBody_TransactionShouldRollBack) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("CREATE TABLE t (a INTEGER)").ok());
  Status s = InTransaction(*db, [&]() -> Status {
    TF_RETURN_IF_ERROR(db->Exec("INSERT INTO t VALUES (1)"));
    return Status::Internal("boom");
  });
  EXPECT_FALSE(s.ok());
  auto sel = db->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(sel->Step().value());
  EXPECT_EQ(sel->Int64(0), 0);
}

TEST(SqliteHandleTest, GivenBadSql_PrepareShouldReturnAnError) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok());
  auto st = db->Prepare("SELEKT 1");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("syntax"), std::string::npos);
}

// A database of one table `t` holding 3 rows, in WAL mode (as tuning logs are), closed.
void MakeWalDb(const std::string& path) {
  Result<SqliteDb> db = SqliteDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(
      db->Exec("PRAGMA journal_mode = WAL; CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3)").ok());
}

// A path that begins with "file:" is a file of that name, not an SQLite URI (Debian's SQLite allows URIs).
TEST(SqliteHandleTest, GivenARelativePathBeginningWithFile_ItShouldBeTheFileOfThatName) {
  TempDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.File(""));
  MakeWalDb("file:run.db?mode=memory");
  Result<SqliteDb> back = SqliteDb::OpenReadOnly("file:run.db?mode=memory");
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(std::filesystem::exists(dir.File("file:run.db?mode=memory")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("run.db")));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  auto st = back->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_TRUE(st->Step().ok());
  EXPECT_EQ(st->Int64(0), 3);
}

// Reading a WAL database creates its -wal and -shm files; a reader that closes last removes them (a connection
// opened SQLITE_OPEN_READONLY could not, and every reading command left them behind), and it writes nothing.
TEST(SqliteHandleTest, GivenAWalDbReadAndClosed_ItShouldLeaveNoWalOrShmFileAndRefuseWrites) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  MakeWalDb(path);
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  {
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto st = db->Prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(st.ok() && st->Step().ok());
    EXPECT_EQ(st->Int64(0), 3);
    EXPECT_TRUE(std::filesystem::exists(path + "-shm"));
    EXPECT_FALSE(db->Exec("INSERT INTO t VALUES (4)").ok());
    EXPECT_FALSE(db->Exec("PRAGMA journal_mode = DELETE; CREATE TABLE u (b INTEGER)").ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  Result<SqliteDb> again = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(again.ok());
  auto st = again->Prepare("SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM sqlite_schema)");
  ASSERT_TRUE(st.ok() && st->Step().ok());
  EXPECT_EQ(st->Int64(0), 3);
  EXPECT_EQ(st->Int64(1), 1);
}

// A reader that closes while a writer still has the database open leaves the writer's WAL alone.
TEST(SqliteHandleTest, GivenAWriterStillOpen_AReaderClosingShouldLeaveItsWal) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  MakeWalDb(path);
  Result<SqliteDb> writer = SqliteDb::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Exec("PRAGMA wal_autocheckpoint = 0; INSERT INTO t VALUES (4)").ok());
  {
    Result<SqliteDb> reader = SqliteDb::OpenReadOnly(path);
    ASSERT_TRUE(reader.ok());
    auto st = reader->Prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(st.ok() && st->Step().ok());
    EXPECT_EQ(st->Int64(0), 4);
  }
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  EXPECT_GT(std::filesystem::file_size(path + "-wal"), 0u);
  ASSERT_TRUE(writer->Exec("INSERT INTO t VALUES (5)").ok());
}

// A WAL database in a folder this process cannot write (a read-only share) is still read: SQLite could not create its
// -shm file there. The reader runs in a child that, when the test runs as root, drops to an unprivileged user (root
// writes any folder).
TEST(SqliteHandleTest, GivenAWalDbInAFolderThatCannotBeWritten_ItShouldStillBeRead) {
  TempDir dir;
  const std::string folder = dir.File("share"), path = folder + "/odd ?#% name.db";
  std::filesystem::create_directories(folder);
  MakeWalDb(path);
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(4);
    if (::access(folder.c_str(), W_OK) == 0) _exit(5);
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    if (!db.ok()) _exit(2);
    auto st = db->Prepare("SELECT count(*) FROM t");
    if (!st.ok() || !st->Step().ok()) _exit(3);
    _exit(st->Int64(0) == 3 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ::chmod(folder.c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong count, 2: open failed, 3: read failed, 4/5: could not drop rights";
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

// MakeWalDb's database with a fourth row in its -wal file only, and no -shm beside it: what a writer killed before
// it closed leaves behind (a connection that closes last folds its -wal into the file).
void LeaveWalBehind(const std::string& path) {
  MakeWalDb(path);
  int changed = 0;
  ASSERT_NO_FATAL_FAILURE(WriteIntoLeftoverWal(path, "INSERT INTO t VALUES (4)", &changed));
  ASSERT_EQ(changed, 1);
}

// Runs `body` in a child process as a user that cannot write what the test made unwritable (when the test runs as
// root, as the unprivileged user 65534: root writes any file) and returns its exit code; 4 means it could not drop its
// rights.
template <typename Body>
int ExitOfUnprivilegedChild(Body body) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(4);
    _exit(body());
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Runs `read` as ExitOfUnprivilegedChild does, in a child that cannot write `folder`; 5 means it could write it.
template <typename Read>
int ExitOfReaderWithoutWriteAccess(const std::string& folder, Read read) {
  return ExitOfUnprivilegedChild([&] { return ::access(folder.c_str(), W_OK) == 0 ? 5 : read(); });
}

// The same folder, with a -wal file left by a writer that did not close: SQLite can read the -wal only through a
// -shm file, which it cannot create there, and the file alone lacks the -wal's rows. The reader is told so (it was
// told, by the tuning log, that it could not open the file for writing), and the files are left as they were.
TEST(SqliteHandleTest, GivenAWalDbWithALeftoverWalInAFolderThatCannotBeWritten_ItShouldSayWhyItCannotBeRead) {
  TempDir dir;
  const std::string folder = dir.File("share"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  LeaveWalBehind(path);
  const auto wal_bytes = std::filesystem::file_size(path + "-wal");
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(::chmod((path + "-wal").c_str(), 0644), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const int code = ExitOfReaderWithoutWriteAccess(folder, [&] {
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    if (db.ok()) return 1;
    const std::string m = db.status().message();
    if (db.status().code() != Status::Code::kPermissionDenied) return 2;
    const std::string cause = path + ": cannot be read here: its write-ahead file " + path + "-wal holds " +
                              "transactions not yet in it, and SQLite reads them only through a " + path + "-shm " +
                              "file, which it cannot create: " + folder + " is not writable by this user";
    return m.find(cause) != std::string::npos ? 0 : 3;
  });
  ::chmod(folder.c_str(), 0755);
  EXPECT_EQ(code, 0) << "1: it opened, 2: another error, 3: another message, 4/5: could not drop rights";
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_EQ(std::filesystem::file_size(path + "-wal"), wal_bytes);
  // Read where it can be written, the -wal's row is there: nothing was lost.
  Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto st = db->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(st.ok() && st->Step().ok());
  EXPECT_EQ(st->Int64(0), 4);
}

// An empty -wal beside the file, no -shm: the file holds every row, and it is read as it stands.
TEST(SqliteHandleTest, GivenAnEmptyLeftoverWalInAFolderThatCannotBeWritten_TheFileShouldBeReadAsItStands) {
  TempDir dir;
  const std::string folder = dir.File("share"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  MakeWalDb(path);
  { std::ofstream(path + "-wal").flush(); }
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const int code = ExitOfReaderWithoutWriteAccess(folder, [&] {
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    if (!db.ok()) return 2;
    auto st = db->Prepare("SELECT count(*) FROM t");
    if (!st.ok() || !st->Step().ok()) return 3;
    return st->Int64(0) == 3 ? 0 : 1;
  });
  ::chmod(folder.c_str(), 0755);
  EXPECT_EQ(code, 0) << "1: wrong count, 2: open failed, 3: read failed, 4/5: could not drop rights";
}

// Another user's log in a folder this user can write (a shared folder): read, it left a -wal and a -shm file of this
// user's beside it, which the reader could not remove and the log's owner could not write, so the owner's next run
// failed with "attempt to write a readonly database". It is now read as it stands, and nothing is left beside it.
TEST(SqliteHandleTest, GivenAWalDbThisUserCannotWriteInAFolderItCan_ItShouldBeReadWithoutLeavingFilesBeside) {
  TempDir dir;
  const std::string folder = dir.File("shared"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  MakeWalDb(path);
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  const int code = ExitOfUnprivilegedChild([&] {
    if (::access(path.c_str(), W_OK) == 0 || ::access(folder.c_str(), W_OK) != 0) return 5;
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    if (!db.ok()) return 2;
    auto st = db->Prepare("SELECT count(*) FROM t");
    if (!st.ok() || !st->Step().ok()) return 3;
    return st->Int64(0) == 3 ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: wrong count, 2: open failed, 3: read failed, 4/5: could not drop rights";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

// The same log with a -wal left by its owner's killed writer, and no -shm: reading the -wal needs a -shm, which would
// be this user's. Refused, saying why, and the files are left as they were.
TEST(SqliteHandleTest, GivenALeftoverWalOfALogThisUserCannotWrite_ItShouldSayWhyAndCreateNoShm) {
  TempDir dir;
  const std::string folder = dir.File("shared"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  LeaveWalBehind(path);
  const auto wal_bytes = std::filesystem::file_size(path + "-wal");
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(::chmod((path + "-wal").c_str(), 0444), 0);
  const int code = ExitOfUnprivilegedChild([&] {
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
    if (db.ok()) return 1;
    if (db.status().code() != Status::Code::kPermissionDenied) return 2;
    const std::string cause = path + ": cannot be read here: its write-ahead file " + path + "-wal holds " +
                              "transactions not yet in it, and SQLite reads them only through a " + path + "-shm " +
                              "file, which it would create as this user's";
    return db.status().message().find(cause) != std::string::npos ? 0 : 3;
  });
  EXPECT_EQ(code, 0) << "1: it opened, 2: another error, 3: another message, 4: could not drop rights";
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_EQ(std::filesystem::file_size(path + "-wal"), wal_bytes);
}

// A -shm beside the log that this user cannot write (left by another user's reader of an older tunefleet): the
// writer's error named neither file ("attempt to write a readonly database"); it now names the file and what to do.
TEST(SqliteHandleTest, GivenAShmBesideTheLogThisUserCannotWrite_OpenShouldNameIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to leave a file of another user's beside the log";
  TempDir dir;
  const std::string folder = dir.File("shared"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  MakeWalDb(path);
  { std::ofstream(path + "-shm").flush(); }
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ASSERT_EQ(::chmod((path + "-shm").c_str(), 0444), 0);
  const int code = ExitOfUnprivilegedChild([&] {
    Result<SqliteDb> db = SqliteDb::Open(path);
    if (db.ok()) return 1;
    if (db.status().code() != Status::Code::kPermissionDenied) return 2;
    const std::string says = path + ": cannot write it: " + path + "-shm beside it is not writable by this user";
    return db.status().message().find(says) != std::string::npos ? 0 : 3;
  });
  EXPECT_EQ(code, 0) << "1: it opened, 2: another error, 3: another message, 4: could not drop rights";
}

// A log that cannot be created said only SQLite's "unable to open database file"; it now says why, in the terms of
// the file system.
TEST(SqliteHandleTest, GivenALogThatCannotBeCreated_OpenShouldSayWhy) {
  TempDir dir;
  const auto says = [](const std::string& path) {
    Result<SqliteDb> db = SqliteDb::Open(path);
    EXPECT_FALSE(db.ok()) << path;
    return db.ok() ? std::string() : db.status().message();
  };
  const std::string missing = dir.File("no such folder/log.db");
  EXPECT_EQ(says(missing), missing + ": cannot open: its folder " + dir.File("no such folder") +
                               " does not exist (create it first)");
  EXPECT_EQ(says(dir.path()), dir.path() + ": cannot open: it is a folder, not a file");
  { std::ofstream(dir.File("plain")) << "x"; }
  EXPECT_EQ(says(dir.File("plain/log.db")),
            dir.File("plain/log.db") + ": cannot open: a part of " + dir.File("plain") + " is not a folder");
  EXPECT_FALSE(std::filesystem::exists(dir.File("no such folder")));

  const std::string folder = dir.File("locked");
  std::filesystem::create_directories(folder);
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const int code = ExitOfReaderWithoutWriteAccess(folder, [&] {
    Result<SqliteDb> db = SqliteDb::Open(folder + "/log.db");
    if (db.ok()) return 1;
    if (db.status().code() != Status::Code::kPermissionDenied) return 2;
    return db.status().message() == folder + "/log.db: cannot open: its folder " + folder +
                                        " is not writable by this user" ? 0 : 3;
  });
  EXPECT_EQ(code, 0) << "1: it opened, 2: another error, 3: another message, 4/5: could not drop rights";

  // A log this user can write in that folder: SQLite said "attempt to write a readonly database" at the first write
  // (it makes its -wal and -shm beside the log). And a log it cannot read was said to be not writable.
  ::chmod(folder.c_str(), 0755);
  MakeWalDb(folder + "/writable.db");
  MakeWalDb(folder + "/secret.db");
  ASSERT_EQ(::chmod((folder + "/writable.db").c_str(), 0666), 0);
  ASSERT_EQ(::chmod((folder + "/secret.db").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  const auto unprivileged_open = [&](const std::string& path, const std::string& expected) {
    return ExitOfReaderWithoutWriteAccess(folder, [&] {
      if (::access((folder + "/secret.db").c_str(), R_OK) == 0) return 6;
      Result<SqliteDb> db = SqliteDb::Open(path);
      if (db.ok()) return 1;
      if (db.status().code() != Status::Code::kPermissionDenied) return 2;
      return db.status().message() == expected ? 0 : 3;
    });
  };
  EXPECT_EQ(unprivileged_open(folder + "/writable.db", folder + "/writable.db: cannot write it: its folder " + folder +
                                              " is not writable by this user (SQLite writes a -wal and a -shm file "
                                              "beside the log)"),
            0)
      << "1: it opened, 2: another error, 3: another message, 4/5/6: could not drop rights";
  EXPECT_EQ(unprivileged_open(folder + "/secret.db",
                              folder + "/secret.db: cannot open: the file is not readable by this user"),
            0)
      << "1: it opened, 2: another error, 3: another message, 4/5/6: could not drop rights";
  ::chmod(folder.c_str(), 0755);
}

// A reading command on a full disk (a run that filled it has just failed) could not read the log: the first read of a
// WAL log makes its -shm file, and every reader failed with "disk I/O error: No space left on device". The file alone
// is the whole log when no -wal holds transactions, and is read as it stands; when one does, the reader says why it
// cannot read it and leaves the files as they were.
TEST(SqliteHandleTest, GivenALogOnAFullDisk_ItShouldBeReadOrSayWhyNot) {
  TempDir dir;
  SmallTmpfs disk(dir.File("disk"), 1 << 20);
  if (!disk.why_not().empty()) GTEST_SKIP() << disk.why_not();
  const std::string path = disk.File("log.db"), other = disk.File("left.db");
  MakeWalDb(path);
  ASSERT_NO_FATAL_FAILURE(LeaveWalBehind(other));
  const auto wal_bytes = std::filesystem::file_size(other + "-wal");
  const std::string filler = disk.Fill();

  Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Result<SqliteStmt> st = db->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_TRUE(st->Step().ok());
  EXPECT_EQ(st->Int64(0), 3);

  Result<SqliteDb> refused = SqliteDb::OpenReadOnly(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kIOError);
  EXPECT_EQ(refused.status().message().rfind(other + ": cannot be read while its disk is full: " + other + "-wal "
                                             "holds transactions not yet in it", 0),
            0u)
      << refused.status().message();
  EXPECT_EQ(std::filesystem::file_size(other + "-wal"), wal_bytes);

  // With room again, the -wal's rows are read and the files beside the logs go as usual.
  std::filesystem::remove(filler);
  db = SqliteDb();
  Result<SqliteDb> again = SqliteDb::OpenReadOnly(other);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  st = again->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(st.ok() && st->Step().ok());
  EXPECT_EQ(st->Int64(0), 4);
}

// A link in a shared folder to another user's log that a run is writing: SQLite keeps the -wal beside the file, not
// the link, and the reader looked for it beside the link, found none, and read the file as it stood, without the
// -wal's rows (a stale best, exit 0). It now looks beside the file the link names.
TEST(SqliteHandleTest, GivenALinkToAnotherUsersLogBeingWritten_TheReadShouldSeeWhatItsWalHolds) {
  TempDir dir;
  const std::string owner = dir.File("owner"), shared = dir.File("shared");
  const std::string path = owner + "/run.db", link = shared + "/latest.db";
  std::filesystem::create_directories(owner);
  std::filesystem::create_directories(shared);
  MakeWalDb(path);
  Result<SqliteDb> writer = SqliteDb::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE(writer->Exec("PRAGMA wal_autocheckpoint = 0; INSERT INTO t VALUES (4)").ok());  // in the -wal only
  std::filesystem::create_symlink(path, link);
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(owner.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  const int code = ExitOfUnprivilegedChild([&] {
    if (::access(path.c_str(), W_OK) == 0) return 5;
    Result<SqliteDb> db = SqliteDb::OpenReadOnly(link);
    if (!db.ok()) return 2;
    auto st = db->Prepare("SELECT count(*) FROM t");
    if (!st.ok() || !st->Step().ok()) return 3;
    return st->Int64(0) == 4 ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: the -wal's row was not read, 2: open failed, 3: read failed, 4/5: could not drop rights";
}

// A log read as it stands (this user cannot write it) whose pages change under the read, as when its owner's run
// begins to write it meanwhile: SQLite finds the pages malformed. With the -wal and -shm that such a run makes beside
// it after the open, the reader is told to read again, not that the log is damaged; a damaged log is still called
// damaged, also beside an empty leftover -wal that was there before.
TEST(SqliteHandleTest, GivenALogReadAsItStandsWhosePagesChangeUnderTheRead_ItShouldSayToReadAgain) {
  TempDir dir;
  const std::string folder = dir.File("shared"), path = folder + "/log.db";
  std::filesystem::create_directories(folder);
  MakeWalDb(path);
  {  // the table's page overwritten: what a read finds when a checkpoint rewrote it meanwhile
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string garbage(4096, '\xff');
    file.write(garbage.data(), garbage.size());
  }
  ASSERT_EQ(::chmod(dir.File("").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  // Opens the log, then (when `run_begins`) makes the files of a run that begins, then reads.
  auto read = [&](bool run_begins) {
    return ExitOfUnprivilegedChild([&] {
      Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
      if (!db.ok()) return 2;
      if (run_begins) {
        std::ofstream(path + "-wal").flush();
        std::ofstream(path + "-shm").flush();
      }
      auto st = db->Prepare("SELECT count(*) FROM t");
      Status failed = st.ok() ? st->Step().status() : st.status();
      if (run_begins) {
        std::filesystem::remove(path + "-wal");
        std::filesystem::remove(path + "-shm");
      }
      if (failed.ok()) return 1;
      if (failed.code() == Status::Code::kCorruption) return 10;
      const bool again = failed.message().find("a run began to write the log while this command read it as it "
                                               "stood") != std::string::npos;
      return failed.code() == Status::Code::kUnavailable && again ? 11 : 3;
    });
  };
  const char* codes = "1: read, 2: open failed, 3: another error, 4: could not drop rights, 10: 'damaged', 11: 'again'";
  EXPECT_EQ(read(false), 10) << codes;
  EXPECT_EQ(read(true), 11) << codes;
  { std::ofstream(path + "-wal").flush(); }  // an empty leftover -wal, there before the open
  EXPECT_EQ(read(false), 10) << codes;
}

}  // namespace
}  // namespace tunefleet
