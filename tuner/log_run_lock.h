// LogRunLock: one `tune` per tuning log at a time. Resume is the default, so the same command started twice (a
// second terminal, a restart while the first run still goes on) would tune the same units from the same seed:
// every trial measured twice, the devices shared between two runs that do not know of each other. The lock is
// flock(2) on LOG.lock beside the log, which the kernel releases when its holder exits or is killed (kill -9
// included), so a stale lock cannot outlive its run; the holder writes who it is into the file for the refusal.
// Two runs of different models that should share one log can be run one after the other, or into two logs.
//
// Ownership: owns the lock file's descriptor; the destructor unlocks and removes the file.
// Thread safety: one owner; Acquire may be called from any thread.
#pragma once

#include <string>

#include "common/status.h"

namespace tunefleet {

class LogRunLock {
 public:
  // Takes the lock of `log_path` for this process, noting `holder` (e.g. "tunefleet tune pid 12@host") in it.
  // Errors: Unavailable "LOG is being tuned by HOLDER since TIME (its lock: LOG.lock)" when another run holds it;
  // IOError naming the lock file when it cannot be created or locked.
  static Result<LogRunLock> Acquire(const std::string& log_path, const std::string& holder);

  // The lock file beside `log_path`.
  static std::string LockPath(const std::string& log_path);

  LogRunLock(LogRunLock&& other) noexcept;
  LogRunLock& operator=(LogRunLock&& other) noexcept;
  LogRunLock(const LogRunLock&) = delete;
  LogRunLock& operator=(const LogRunLock&) = delete;
  ~LogRunLock();

 private:
  LogRunLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void Release();
  int fd_ = -1;
  std::string path_;
};

}  // namespace tunefleet
