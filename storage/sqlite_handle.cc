#include "storage/sqlite_handle.h"

#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

namespace tunefleet {
namespace {

Status ErrorFor(int rc, std::string msg) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::Corruption(std::move(msg));
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::PermissionDenied(std::move(msg));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(msg));
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(std::move(msg));
    default:
      return Status::IOError(std::move(msg));
  }
}

// ErrorFor, with what is known of a failed read or write's cause: the system's reason when SQLite kept it, and a
// file-size limit (`ulimit -f`) when one is set, which SQLite's own message ("disk I/O error") never names.
Status DbError(sqlite3* db, int rc, std::string msg) {
  const int primary = rc & 0xff;
  // A log read as it stands (immutable: this process cannot write it) that a run of its owner's began to write
  // meanwhile: its pages changed under the read. The log is not damaged; the read is to be done again. Such a run
  // has made a -shm beside it, which was not there when the log was opened (FrozenInPlace reads a log as it stands
  // only without one; an empty leftover -wal alone does not count).
  if ((primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) && db != nullptr) {
    const char* file = sqlite3_db_filename(db, "main");
    std::error_code ec;
    if (file != nullptr && *file != '\0' && sqlite3_uri_boolean(file, "immutable", 0) &&
        std::filesystem::exists(std::string(file) + "-shm", ec)) {
      return Status::Unavailable(msg + ": a run began to write the log while this command read it as it stood " +
                                 "(it is not writable here, so it is read without a lock); run the command again");
    }
  }
  // A page damaged after it was written: SQLite's "database disk image is malformed" said nothing of what to do, where
  // tune and import, which check the log before they write, explain it.
  if (primary == SQLITE_CORRUPT) {
    msg += " (the log is damaged: give a copy of it from before the damage; sqlite3's .recover may save the records "
           "still readable)";
  }
  if (primary == SQLITE_BUSY) {
    msg += " (another process held a write lock on it for longer than this one waits: a run writing its records "
           "waits up to 30 s; a sqlite3 shell's open transaction or a VACUUM can hold it longer)";
  }
  if ((primary == SQLITE_IOERR || primary == SQLITE_FULL) && db != nullptr) {
    if (const int err = sqlite3_system_errno(db); err != 0) msg += std::string(": ") + std::strerror(err);
    if (struct rlimit limit {}; ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      msg += " (this process may write files of at most " + std::to_string(limit.rlim_cur) + " bytes: ulimit -f)";
  }
  return ErrorFor(rc, std::move(msg));
}

}  // namespace

SqliteStmt::~SqliteStmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

SqliteStmt::SqliteStmt(SqliteStmt&& o) noexcept
    : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)), bind_error_(std::move(o.bind_error_)) {}

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& o) noexcept {
  if (this != &o) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = std::exchange(o.stmt_, nullptr);
    bind_error_ = std::move(o.bind_error_);
  }
  return *this;
}

namespace {
Status BindResult(sqlite3* db, int rc, int i) {
  if (rc == SQLITE_OK) return Status::OK();
  return ErrorFor(rc, "bind parameter " + std::to_string(i) + ": " + sqlite3_errmsg(db));
}
}  // namespace

SqliteStmt& SqliteStmt::Bind(int i, int64_t v) {
  if (bind_error_.ok()) bind_error_ = BindResult(db_, sqlite3_bind_int64(stmt_, i, v), i);
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int i, double v) {
  if (bind_error_.ok()) bind_error_ = BindResult(db_, sqlite3_bind_double(stmt_, i, v), i);
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int i, std::string_view v) {
  if (bind_error_.ok()) {
    bind_error_ = BindResult(
        db_, sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8), i);
  }
  return *this;
}

SqliteStmt& SqliteStmt::BindNull(int i) {
  if (bind_error_.ok()) bind_error_ = BindResult(db_, sqlite3_bind_null(stmt_, i), i);
  return *this;
}

Result<bool> SqliteStmt::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return DbError(db_, rc, sqlite3_errmsg(db_));
}

Status SqliteStmt::Run() {
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
  }
}

int64_t SqliteStmt::Int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double SqliteStmt::Double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string SqliteStmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

namespace {

// The name SQLite is given for a file path: a path that begins with "file:" would be read as a URI where the library
// allows them (Debian's does), so it goes as "./file:...", the same file.
std::string LiteralName(const std::string& path) { return path.rfind("file:", 0) == 0 ? "./" + path : path; }

// A read-only URI for `path` with immutable=1: SQLite then takes no lock and needs no -shm file beside a WAL log.
std::string ImmutableUri(const std::string& path) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  std::string uri = "file:";
  for (unsigned char c : ec ? path : absolute) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?immutable=1";
}

// The folder of `path`, when this process cannot create files in it.
std::optional<std::filesystem::path> UnwritableFolder(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
  if (ec || ::access(folder.c_str(), W_OK) == 0) return std::nullopt;
  return folder;
}

// Why this process cannot create files in `folder`, as the system says it ("is on a read-only file system", "is not
// writable by this user", "does not exist"); empty when it can.
std::string FolderNotWritable(const std::filesystem::path& folder) {
  if (::access((folder / ".").c_str(), W_OK) == 0) return "";
  switch (const int err = errno) {
    case EROFS:
      return "is on a read-only file system";
    case EACCES:
    case EPERM:
      return "is not writable by this user";
    case ENOENT:
      return "does not exist";
    default:
      return std::string(": ") + std::strerror(err);
  }
}

// Why SQLite could not open or create the file `path` for writing, in the terms of the file system (its folder is
// missing, or not a folder, or on a read-only file system, or not writable by this user; the path is a folder), or
// SQLite's own words when none of these holds.
std::string WhyNotWritable(const std::string& path, const std::string& sqlite_says) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "it is a folder, not a file";
  const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
  if (ec) return sqlite_says;
  const bool exists = std::filesystem::exists(path, ec);
  if (exists && ::access(path.c_str(), R_OK) != 0 && (errno == EACCES || errno == EPERM)) {
    return "the file is not readable by this user";
  }
  if (exists ? ::access(path.c_str(), W_OK) == 0 : ::access((folder / ".").c_str(), W_OK) == 0) return sqlite_says;
  const int err = errno;
  const std::string what = exists ? "the file" : "its folder " + folder.string();
  switch (err) {
    case ENOENT:
      return "its folder " + folder.string() + " does not exist (create it first)";
    case ENOTDIR:
      return "a part of " + folder.string() + " is not a folder";
    case EROFS:
      return what + " is on a read-only file system";
    case EACCES:
    case EPERM:
      return what + " is not writable by this user";
    default:
      return what + ": " + std::strerror(err);
  }
}

// True when this process can write the existing file `path`.
bool FileWritable(const std::string& path) { return ::access(path.c_str(), W_OK) == 0; }

// `path` with its symbolic links resolved (itself when that fails): SQLite keeps a log's -wal and -shm files beside
// the file a link names, not beside the link.
std::string Resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

// To be read as it stands (immutable): this process cannot write `path` (its folder, where a writer must create a
// journal or WAL file beside it, or the file itself, which is another user's), and no WAL file beside it holds
// content that the file lacks or is used by an open connection: there is none, or an empty one without a -shm.
// Read otherwise, a file this process cannot write is opened read-only, and SQLite creates the -wal and -shm files
// as this process's own and cannot remove them: in a shared folder they locked the log's owner out of the log.
// Read so, the file is read as it stands, without a lock or a snapshot: a run of the owner's that starts meanwhile
// may change pages under the read, which then fails (DbError says why) or sees rows written after it began.
bool FrozenInPlace(const std::string& given) {
  const std::string path = Resolved(given);
  if (!UnwritableFolder(path) && FileWritable(path)) return false;
  std::error_code ec;
  if (!std::filesystem::exists(path + "-wal", ec)) return !ec;
  return std::filesystem::file_size(path + "-wal", ec) == 0 && !ec && !std::filesystem::exists(path + "-shm", ec) &&
         !ec;
}

}  // namespace

Result<SqliteDb> SqliteDb::Open(const std::string& path) {
  // A -wal or -shm file of another user's that this process cannot write (an older tunefleet's reader left them)
  // makes every write fail as "attempt to write a readonly database", which names neither of them. (A read-only
  // file system is said below, as before.)
  const std::string real = Resolved(path);
  for (const std::string& beside : {real + "-wal", real + "-shm"}) {
    struct stat st {};
    if (::stat(beside.c_str(), &st) != 0 || st.st_uid == ::geteuid() || FileWritable(beside) || errno != EACCES)
      continue;
    const bool empty = st.st_size == 0 || beside.ends_with("-shm");
    return Status::PermissionDenied(
        path + ": cannot write it: " + beside + " beside it is not writable by this user (it belongs to uid " +
        std::to_string(st.st_uid) + "); " +
        (empty ? "it holds no records: remove it (as its owner or root) while no tunefleet command uses the log"
               : "it holds transactions not yet in the log: its owner folds them in by running any tunefleet "
                 "command on the log"));
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(LiteralName(path).c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteDb db(raw, path);  // owns the handle even on failure (sqlite3_open_v2 allocates one anyway)
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_CANTOPEN) msg = WhyNotWritable(path, msg);
    return DbError(raw, rc, path + ": cannot open: " + msg);
  }
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return Status::PermissionDenied(path + ": cannot open for writing: " +
                                    WhyNotWritable(path, "read-only file or directory"));
  }
  // A log this user can write in a folder it cannot: SQLite makes its -wal and -shm beside it (unless a run holds
  // them open), and every write failed as "attempt to write a readonly database", which names neither.
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(real, ec).parent_path();
  if (const std::string why = ec || path == ":memory:" || path.empty() ? "" : FolderNotWritable(folder);
      !why.empty() && !std::filesystem::exists(real + "-wal", ec)) {
    return Status::PermissionDenied(path + ": cannot write it: its folder " + folder.string() + " " + why +
                                    " (SQLite writes a -wal and a -shm file beside the log)");
  }
  sqlite3_extended_result_codes(raw, 0);
  TF_RETURN_IF_ERROR(db.HoldBackLeftoverWal());
  return db;
}

Status SqliteDb::HoldBackLeftoverWal() {
  std::error_code ec;
  const std::uintmax_t wal_bytes = std::filesystem::file_size(Resolved(path_) + "-wal", ec);
  if (ec || wal_bytes == 0) return Status::OK();
  // Set before anything is read: SQLite reads the -wal in at the first statement, and any close after that folds it.
  if (const int rc = sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr); rc != SQLITE_OK) {
    return Status::IOError(path_ + ": cannot hold back its -wal: " + sqlite3_errstr(rc));
  }
  wal_held_back_ = true;
  return Status::OK();
}

void SqliteDb::FoldWalOnClose() {
  if (!wal_held_back_) return;
  if (sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr) == SQLITE_OK) wal_held_back_ = false;
}

Status SqliteDb::CheckWalReadable(const std::string& path) {
  const std::string real = Resolved(path);
  const std::optional<std::filesystem::path> folder = UnwritableFolder(real);
  std::error_code ec;
  if (!folder && (FileWritable(real) || !std::filesystem::exists(real, ec))) return Status::OK();
  const std::string wal = real + "-wal", shm = real + "-shm";
  const std::uintmax_t wal_bytes = std::filesystem::file_size(wal, ec);
  if (ec || wal_bytes == 0) return Status::OK();  // no -wal, or nothing in it: FrozenInPlace reads the file alone
  if (std::filesystem::exists(shm, ec) || ec) return Status::OK();  // SQLite reads the -wal through this -shm
  const std::string folder_why = folder ? FolderNotWritable(*folder) : "";
  const bool read_only_fs = folder_why == "is on a read-only file system";
  const std::string why = folder ? ", which it cannot create: " + folder->string() + " " +
                                       (folder_why.empty() ? "is not writable by this user" : folder_why)
                                 : ", which it would create as this user's, not writable by the log's owner, who " +
                                       std::string("could then no longer write the log: the log is not writable by ") +
                                       "this user";
  return Status::PermissionDenied(
      path + ": cannot be read here: its write-ahead file " + wal + " holds transactions not yet in it, and SQLite " +
      "reads them only through a " + shm + " file" + why + " (" +
      (read_only_fs ? "" : "the log's owner folds the -wal into the log by running any tunefleet command on it; or ") +
      "copy both files to a folder you can write and read the copy)");
}

Result<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path) {
  TF_RETURN_IF_ERROR(CheckWalReadable(path));
  return OpenReadOnly(path, FrozenInPlace(path));
}

Result<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path, bool frozen) {
  sqlite3* raw = nullptr;
  // A log this process cannot write (in a read-only share, or another user's file) is read as immutable when no
  // run writes it (FrozenInPlace): reading a WAL log otherwise needs its -shm file, which SQLite could not create
  // in the share, and would create as this user's beside another user's log.
  // Elsewhere the connection may write (never create) the file but its statements may not (query_only): a
  // connection opened SQLITE_OPEN_READONLY cannot remove the -wal and -shm files that reading a WAL log creates,
  // and left them behind, empty, after every reading command; the last connection to close removes them.
  const int flags = frozen ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE;
  int rc = sqlite3_open_v2(frozen ? ImmutableUri(Resolved(path)).c_str() : LiteralName(path).c_str(), &raw,
                           flags | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteDb db(raw, path);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    return DbError(raw, rc, path + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(raw, 0);
  if (frozen) {
    TF_RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON").WithContext(path));
    return db;
  }
  TF_RETURN_IF_ERROR(db.HoldBackLeftoverWal());  // immutable: the file is read alone, nothing folded
  TF_RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON").WithContext(path));
  // The first read of a WAL log makes its -shm file (32 KiB), which a full disk refuses: every reading command
  // failed with "disk I/O error: No space left on device", the moment a run had filled the disk. Without a -wal
  // that holds transactions the file alone is the whole log, read as it stands; with one, it cannot be read here.
  const Status first_read = db.Exec("SELECT count(*) FROM sqlite_schema");
  if (first_read.ok()) return db;
  if (sqlite3_system_errno(raw) != ENOSPC && sqlite3_errcode(raw) != SQLITE_FULL) return first_read.WithContext(path);
  db = SqliteDb();  // closed before the file is opened again
  std::error_code ec;
  const std::string wal = Resolved(path) + "-wal";
  if (std::filesystem::file_size(wal, ec) == 0 || !std::filesystem::exists(wal, ec)) return OpenReadOnly(path, true);
  return Status::IOError(path + ": cannot be read while its disk is full: " + wal + " holds transactions not yet " +
                         "in it, and SQLite reads them only through a -shm file beside it (32 KiB), which the full " +
                         "disk refuses; free some space on it");
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close_v2(db_);
}

SqliteDb::SqliteDb(SqliteDb&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)), wal_held_back_(o.wal_held_back_) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
    path_ = std::move(o.path_);
    wal_held_back_ = o.wal_held_back_;
  }
  return *this;
}

Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::OK();
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return DbError(db_, rc, msg);
}

Result<SqliteStmt> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return DbError(db_, rc, std::string(sqlite3_errmsg(db_)));
  return SqliteStmt(db_, stmt);
}

int64_t SqliteDb::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }

}  // namespace tunefleet
