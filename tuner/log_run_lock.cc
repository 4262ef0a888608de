#include "tuner/log_run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>
#include <thread>
#include <utility>

#include "common/fnv_hash.h"
#include "common/owned_fd.h"
#include "common/printable.h"
#include "common/still_linked.h"

namespace tunefleet {
namespace {

constexpr size_t kMaxNote = 512;

// What the holder wrote on its first line, "HOLDER since TIME"; "" when the file holds nothing readable yet.
std::string ReadNote(int fd) {
  char buf[kMaxNote];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string note = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  if (const size_t end = note.find('\n'); end != std::string::npos) note.resize(end);
  while (!note.empty() && note.back() == '\0') note.pop_back();
  return note.empty() ? std::string() : Printable(note, 300);
}

std::string Now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

// Raises the soft limit of open files to the hard one; true when it was raised. A run holds a descriptor per lock
// (per task on its key, and per task on each device model it leased), and the soft limit is often 1,024 where the
// hard one allows far more.
bool RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return false;
  limit.rlim_cur = limit.rlim_max;
  return ::setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

OwnedFd OpenLockFile(const std::string& path) {
  return OwnedFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

// One lock file, taken (fd valid) or held by another run (its note).
struct Attempt {
  OwnedFd fd;
  std::string holder;
};

// How often a take may find its file, or the folder, removed under it before it gives up. Each such turn is another
// run's release, so many turns mean a busy lock rather than a fault; a broken link is told apart at once (TakeOne).
constexpr int kMaxRemovedTurns = 1000;
// How many times a take may find a holder that has not written its note yet before it is refused; it waits 5 ms
// after each but the last.
constexpr int kMaxUnsaidTurns = 8;

// The folder is a symbolic link to nothing: mkdir says it exists, yet no file can be made in it.
bool BrokenLink(const std::string& folder) {
  struct stat link {}, target {};
  return ::lstat(folder.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && ::stat(folder.c_str(), &target) != 0;
}

Result<Attempt> TakeOne(const std::string& folder, const std::string& path, const std::string& text) {
  // The two kinds of turn are counted apart: a wait for a note is not a removal, and a run that had waited for
  // notes had few removals left (on a loaded machine it gave up on a lock that was only busy).
  int removed_turns = 0;
  int unsaid_turns = 0;
  while (removed_turns < kMaxRemovedTurns) {
    if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::IOError(folder + ": cannot create the folder of run locks: " + std::strerror(errno));
    OwnedFd fd = OpenLockFile(path);
    int err = fd.valid() ? 0 : errno;
    if (err == EMFILE && RaiseOpenFileLimit()) {
      fd = OpenLockFile(path);
      err = fd.valid() ? 0 : errno;
    }
    if (err == ENOENT) {  // the last holder removed the folder as we opened: make it again
      if (BrokenLink(folder))
        return Status::IOError(folder + ": cannot create the run lock: the folder of run locks is a link to nothing");
      ++removed_turns;
      continue;
    }
    if (err == EMFILE)
      return Status::IOError(path + ": cannot create the run lock: " + std::strerror(EMFILE) +
                             " (a run holds an open lock file per task on its key and one per task on each device " +
                             "model it leased, and this is past the hard limit: raise it, e.g. `ulimit -Hn` as root " +
                             "or LimitNOFILE= in a systemd unit, or tune fewer tasks per run)");
    if (!fd.valid()) return Status::IOError(path + ": cannot create the run lock: " + std::strerror(err));
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string note = err == EWOULDBLOCK ? ReadNote(fd.get()) : std::string();
      fd.reset();
      if (err != EWOULDBLOCK) return Status::IOError(path + ": cannot lock it: " + std::strerror(err));
      // A holder without a note is a run between its lock and its note, or another run testing whether the file
      // was abandoned (LogRunLock::Abandoned, which another run's start does for every session lock): both let go
      // or write within microseconds. The test had refused a starting run its own session lock.
      if (note.empty() && ++unsaid_turns < kMaxUnsaidTurns) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      return Attempt{OwnedFd(), note.empty() ? "another run (it has not said which yet)" : note};
    }
    if (!StillLinked(fd.get(), path)) {  // the previous holder removed it as we opened it: take the new file
      ++removed_turns;
      continue;
    }
    errno = 0;
    if (::ftruncate(fd.get(), 0) != 0 ||
        ::pwrite(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const std::string why = errno != 0 ? std::strerror(errno) : "a short write";
      // Let go as a release does (the file while locked, then the folder when no other run's file is in it): a full
      // disk left an empty lock file and its folder beside the log.
      ::unlink(path.c_str());
      fd.reset();
      ::rmdir(folder.c_str());
      return Status::IOError(path + ": cannot write the run lock: " + why);
    }
    return Attempt{std::move(fd), ""};
  }
  return Status::IOError(path + ": cannot take the run lock: it, or its folder, was removed as it was opened " +
                         std::to_string(kMaxRemovedTurns) + " times in a row");
}

}  // namespace

RunLockScope RunLockScope::Key(const std::string& key) { return {"key", key, "key " + key}; }

RunLockScope RunLockScope::Device(const std::string& fingerprint, const std::string& name) {
  return {"device", fingerprint,
          "device '" + Printable(name, 100) + "' (fingerprint " + Printable(fingerprint, 64) + ")"};
}

RunLockScope RunLockScope::Session(const std::string& token) { return {"session", token, "session " + token}; }

std::string LogRunLock::LockFolder(const std::string& log_path) {
  // Beside the file the path resolves to, so that a symlink to the log, or another spelling of its path, meets the
  // same locks.
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(log_path, ec);
  return (ec || resolved.empty() ? log_path : resolved.string()) + ".locks";
}

namespace {

// The lock file of (scope, task) in a lock folder. A session's lock is named apart (kSessionLockPrefix), so that
// one left by a run killed before its session row named it can be found (RunSession).
std::string LockFileIn(const std::string& folder, const RunLockScope& scope, const std::string& task_spec) {
  return folder + "/" + (scope.kind == "session" ? LogRunLock::kSessionLockPrefix : "") +
         FnvHash().Add(scope.kind).Add(scope.id).Add(task_spec).Hex() + ".lock";
}

}  // namespace

std::string LogRunLock::LockPath(const std::string& log_path, const RunLockScope& scope, const std::string& task_spec) {
  return LockFileIn(LockFolder(log_path), scope, task_spec);
}

Result<LogRunLock> LogRunLock::Acquire(const std::string& log_path, const RunLockScope& scope,
                                       const std::vector<std::string>& task_specs, const std::string& holder) {
  LogRunLock lock;  // releases what it took on every error return below
  lock.folder_ = LockFolder(log_path);
  const std::set<std::string> specs(task_specs.begin(), task_specs.end());
  const std::string since = holder + " since " + Now() + "\n";
  std::string first_refusal;
  size_t refused = 0;
  for (const std::string& spec : specs) {
    const std::string path = LockFileIn(lock.folder_, scope, spec);  // the folder resolved once, not per task
    Result<Attempt> taken = TakeOne(lock.folder_, path, since + "task " + spec + " on " + scope.label + "\n");
    if (!taken.ok()) return taken.status();
    if (taken->fd.valid()) {
      lock.held_.push_back({std::move(taken->fd), path});
      continue;
    }
    if (refused++ == 0)
      first_refusal = log_path + ": task " + spec + " on " + scope.label + " is being tuned by " + taken->holder +
                      " (its lock: " + path + ")";
  }
  if (refused == 0) return lock;
  if (refused > 1)
    first_refusal += ", and " + std::to_string(refused - 1) + " more of this run's " + std::to_string(specs.size()) +
                     " tasks";
  return Status::Unavailable(first_refusal +
                             "; one tune per task and device of a log at a time: wait for it, stop it, or give this "
                             "run another --db");
}

Result<bool> LogRunLock::Abandoned(const std::string& lock_path) {
  const OwnedFd fd(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid() && errno == ENOENT) return true;
  if (!fd.valid()) return Status::IOError(lock_path + ": cannot open the run lock: " + std::strerror(errno));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    return Status::IOError(lock_path + ": cannot test the run lock: " + std::strerror(errno));
  }
  if (StillLinked(fd.get(), lock_path)) ::unlink(lock_path.c_str());  // while locked; closed on return
  return true;
}

LogRunLock::LogRunLock(LogRunLock&& other) noexcept
    : folder_(std::move(other.folder_)), held_(std::exchange(other.held_, {})) {}

LogRunLock& LogRunLock::operator=(LogRunLock&& other) noexcept {
  if (this != &other) {
    Release();
    folder_ = std::move(other.folder_);
    held_ = std::exchange(other.held_, {});
  }
  return *this;
}

LogRunLock::~LogRunLock() { Release(); }

void LogRunLock::Release() {
  if (held_.empty()) return;
  // Each file is removed while still locked, so that a run that opens the name next creates a new one (StillLinked).
  for (Held& h : held_) {
    if (StillLinked(h.fd.get(), h.path)) ::unlink(h.path.c_str());
    h.fd.reset();
  }
  held_.clear();
  // The folder goes with the last holder's files; rmdir fails, as it should, while it holds others' files. A run
  // that made the folder again as it went finds its open failing (ENOENT) and makes it anew (TakeOne). Files of a
  // killed run are left for the next run of their task and scope, which takes them over: locking another run's file
  // to sweep it would make that run, trying it at the same moment, see a busy lock and be refused.
  ::rmdir(folder_.c_str());
}

}  // namespace tunefleet
