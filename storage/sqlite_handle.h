// RAII wrappers for SQLite handles: SqliteDb owns a sqlite3*, SqliteStmt owns a sqlite3_stmt*.
// Both are move-only; destruction never fails (close/finalize errors are ignored by design: nothing can be
// done about them and every write has already committed or rolled back).
// Thread safety: one thread at a time per handle (SQLite's "multi-thread" mode contract).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tunefleet {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStmt();
  SqliteStmt(SqliteStmt&& o) noexcept;
  SqliteStmt& operator=(SqliteStmt&& o) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  // Parameters are 1-based, as in sqlite3_bind_*. Strings are copied (SQLITE_TRANSIENT).
  SqliteStmt& Bind(int i, int64_t v);
  SqliteStmt& Bind(int i, double v);
  SqliteStmt& Bind(int i, std::string_view v);
  SqliteStmt& BindNull(int i);

  // Steps once: true when a row is available, false when done; an error carries SQLite's message.
  Result<bool> Step();
  // Runs to completion, ignoring rows.
  Status Run();

  // Columns are 0-based. NULL reads as 0 / "".
  int64_t Int64(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;

 private:
  sqlite3* db_ = nullptr;  // not owned
  sqlite3_stmt* stmt_ = nullptr;
  Status bind_error_;  // first bind failure, reported by the next Step()
};

class SqliteDb {
 public:
  // Opens (creating when absent) a database file for reading and writing. Errors name the path.
  static Result<SqliteDb> Open(const std::string& path);
  // Opens an existing database file for reading only (nothing is created or written). Errors name the path.
  // A file this process cannot write (in a folder it cannot write, or another user's file) is read as it stands,
  // unless CheckWalReadable refuses it: no -wal or -shm file is made beside it.
  // A log on a full disk, whose first read cannot make its -shm file, is read as it stands when no -wal beside it
  // holds transactions; refused (IOError, saying so) when one does.
  static Result<SqliteDb> OpenReadOnly(const std::string& path);
  // PermissionDenied, naming the files, the folder and what to do, when `path` is a WAL database that no reader
  // in this process can read where it lies: its -wal file holds transactions not yet in the file, no -shm file is
  // beside it, and SQLite cannot create the -shm through which it reads the -wal (its folder cannot be written), or
  // must not (the file is another user's: a -shm of this user's would lock that user out of the log). Reading the
  // file without its -wal would lose those transactions. OK otherwise.
  static Status CheckWalReadable(const std::string& path);
  SqliteDb() = default;
  ~SqliteDb();
  SqliteDb(SqliteDb&& o) noexcept;
  SqliteDb& operator=(SqliteDb&& o) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // True when a -wal file beside the database held transactions not yet in it when it was opened (a writer that
  // was killed left it, or a writer is running). Such a connection does not fold the -wal into the file when it
  // closes last (SQLite's checkpoint on close) until FoldWalOnClose(): a -wal left beside a file that has been
  // replaced since (a copy restored, another log moved in place) is the old file's, and folding it would damage
  // the new one for good. The caller allows it once the database reads sound through the -wal (quick_check).
  bool wal_held_back() const { return wal_held_back_; }
  void FoldWalOnClose();

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs one or more statements without results.
  Status Exec(const std::string& sql);
  Result<SqliteStmt> Prepare(std::string_view sql);
  int64_t LastInsertId() const;
  // Rows changed by the last INSERT, UPDATE or DELETE of this connection.
  int64_t Changes() const;

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // OpenReadOnly, once CheckWalReadable let it: `frozen`, read as it stands (immutable).
  static Result<SqliteDb> OpenReadOnly(const std::string& path, bool frozen);
  // Holds back the checkpoint on close when a non-empty -wal lies beside the file (see wal_held_back()).
  Status HoldBackLeftoverWal();
  sqlite3* db_ = nullptr;
  std::string path_;
  bool wal_held_back_ = false;
};

// Runs a transaction: BEGIN IMMEDIATE (takes the write lock up front, so the busy timeout applies and two
// writers never deadlock on a lock upgrade), then COMMIT, or ROLLBACK when `body` fails.
template <typename Fn>
Status InTransaction(SqliteDb& db, Fn&& body) {
  TF_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (!s.ok()) {
    (void)db.Exec("ROLLBACK");
    return s;
  }
  s = db.Exec("COMMIT");
  if (!s.ok()) (void)db.Exec("ROLLBACK");
  return s;
}

}  // namespace tunefleet
