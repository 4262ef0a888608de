#include "tuner/log_run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <utility>

#include "common/printable.h"

namespace tunefleet {
namespace {

constexpr size_t kMaxNote = 512;

// What the holder wrote: "HOLDER since TIME", or a plain phrase when the file holds nothing readable yet.
std::string ReadNote(int fd) {
  char buf[kMaxNote];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string note = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!note.empty() && (note.back() == '\n' || note.back() == '\0')) note.pop_back();
  return note.empty() ? "another run (it has not said which yet)" : Printable(note, 300);
}

std::string Now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

// The descriptor still names the file at `path`: another run did not remove it between our open and our lock.
bool StillLinked(int fd, const std::string& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

std::string LogRunLock::LockPath(const std::string& log_path) { return log_path + ".lock"; }

Result<LogRunLock> LogRunLock::Acquire(const std::string& log_path, const std::string& holder) {
  const std::string path = LockPath(log_path);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IOError(path + ": cannot create the run lock: " + std::strerror(errno));
    LogRunLock lock(fd, path);  // closes the descriptor on every return below
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK) return Status::IOError(path + ": cannot lock it: " + std::strerror(err));
      std::string note = ReadNote(fd);
      lock.path_.clear();  // not ours: keep the file
      return Status::Unavailable(log_path + " is being tuned by " + note + " (its lock: " + path +
                                 "); one tune per log at a time: wait for it, stop it, or give this run another --db");
    }
    if (!StillLinked(fd, path)) continue;  // the previous holder removed it as we opened it: take the new file
    const std::string text = holder + " since " + Now() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      return Status::IOError(path + ": cannot write the run lock: " + std::strerror(errno));
    }
    return lock;
  }
  return Status::IOError(path + ": the run lock kept being replaced while taking it");
}

LogRunLock::LogRunLock(LogRunLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

LogRunLock& LogRunLock::operator=(LogRunLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

LogRunLock::~LogRunLock() { Release(); }

void LogRunLock::Release() {
  if (fd_ < 0) return;
  // Removed while still locked, so that a run that opens the name next creates a new file (StillLinked).
  if (!path_.empty() && StillLinked(fd_, path_)) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tunefleet
