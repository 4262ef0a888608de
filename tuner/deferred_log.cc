#include "tuner/deferred_log.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace tunefleet {
namespace {

// Whether TuningLog::Open would create a new log at `path`: no file is there (not even a link), or an empty file
// this user may write (`touch`ed for the run: SQLite makes a log of it), in a folder that exists and that this user
// may write to. (Where it would refuse the path, it says so itself, creating nothing.)
bool WouldCreateLog(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return false;
  const fs::file_type type = fs::symlink_status(path, ec).type();
  const bool empty_file = type == fs::file_type::regular && fs::file_size(path, ec) == 0 && !ec &&
                          ::access(path.c_str(), R_OK | W_OK) == 0;
  if (type != fs::file_type::not_found && !empty_file) return false;
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  return fs::is_directory(folder, ec) && ::access(folder.c_str(), W_OK | X_OK) == 0;
}

// Whether a file can be made beside `path` (a folder this user may write to can still refuse files: /proc, /sys, a
// read-only mount), by making one of a name of this process's and removing it again: never the log's own name,
// which another run on the same log may be creating meanwhile. 0 when it can (or cannot be told), else errno.
int CreationError(const std::string& path) {
  const std::string probe = path + ".probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST || errno == ENAMETOOLONG ? 0 : errno;  // not told: TuningLog::Open will say
  ::close(fd);
  ::unlink(probe.c_str());
  return 0;
}

// Free bytes that a new log needs on its disk to be made at all: its schema (48 KiB) and the WAL and shared-memory
// files SQLite writes beside it while it creates the schema (about 100 KiB more; one record imported into a new
// log on a tmpfs needed 192 KiB), rounded up. With less, SQLite fails half-way and leaves a log file that holds no
// log, and a -wal and -shm beside it; a run failed on its lock file, named as the cause.
constexpr unsigned long long kNewLogBytes = 256 * 1024;

// Why a new log at `path` cannot be made for want of room ("no space left on its disk: 12 KiB free in DIR, ...");
// "" when there is room (or it cannot be told: TuningLog::Open then says what fails).
std::string NoRoomForNewLog(const std::string& path) {
  const std::filesystem::path folder =
      std::filesystem::path(path).has_parent_path() ? std::filesystem::path(path).parent_path() : ".";
  struct statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0) return "";
  const unsigned long long free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= kNewLogBytes) return "";
  return "no space left on its disk: " + std::to_string(free_bytes / 1024) + " KiB free in " + folder.string() +
         ", and a new tuning log needs about " + std::to_string(kNewLogBytes / 1024) + " KiB to start";
}

// Where a log at `path`, a symbolic link (through further links), would be made when it names no file yet or an
// empty one: SQLite makes the log there at once, through the link. Nullopt when `path` is no link, or names a file
// that holds something (a log, or what TuningLog::Open refuses).
std::optional<std::string> NewLogThroughLink(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path at = path;
  if (!fs::is_symlink(fs::symlink_status(at, ec))) return std::nullopt;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(at, ec)); ++hops) {
    const fs::path target = fs::read_symlink(at, ec);
    if (ec) return std::nullopt;
    at = target.is_absolute() ? target : at.parent_path() / target;
  }
  const fs::file_type type = fs::symlink_status(at, ec).type();
  if (type == fs::file_type::not_found || (type == fs::file_type::regular && fs::file_size(at, ec) == 0 && !ec))
    return at.string();
  return std::nullopt;
}

}  // namespace

Result<DeferredLog> DeferredLog::Open(const std::string& path) {
  DeferredLog log(path);
  if (path != ":memory:" && WouldCreateLog(path)) {  // TuningLog::Open refuses that name at once
    std::error_code ec;
    const bool absent = std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::not_found;
    if (const int err = absent ? CreationError(path) : 0; err != 0)
      return Status::InvalidArgument(path + ": cannot create a tuning log there: " + std::strerror(err));
    if (const std::string why = NoRoomForNewLog(path); !why.empty())
      return Status::IOError(path + ": cannot create a tuning log there: " + why);
    return log;
  }
  if (const std::optional<std::string> target = path == ":memory:" ? std::nullopt : NewLogThroughLink(path)) {
    if (const std::string why = NoRoomForNewLog(*target); !why.empty())
      return Status::IOError(path + ": cannot create a tuning log there (at " + *target + "): " + why);
  }
  TF_ASSIGN_OR_RETURN(log.log_, TuningLog::Open(path));
  return log;
}

Result<TuningLog*> DeferredLog::Get() {
  if (log_ == nullptr) {
    TF_ASSIGN_OR_RETURN(log_, TuningLog::Open(path_));
    if (keep_waiting_) log_->SetLockWait(keep_waiting_);
  }
  return log_.get();
}

void DeferredLog::SetLockWait(std::function<bool(double waited_s)> keep_waiting) {
  keep_waiting_ = std::move(keep_waiting);
  if (log_ != nullptr) log_->SetLockWait(keep_waiting_);
}

}  // namespace tunefleet
