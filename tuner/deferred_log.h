// DeferredLog: the tuning log of a `tune` run, created only once the tracker has leased the run a device. A run the
// tracker refuses (a wrong token, no agent of the key, every agent leased past --wait), one that cannot reach it,
// and one interrupted while it waits, leave no new, empty log behind (an empty file given as the log stays empty). A
// log that exists is opened at once, so that a file that is no tuning log (or one of a newer schema) is said before
// the tracker is asked; so is a path where no log could be created (no such folder, one this user may not write to,
// a dangling link, a folder that takes no files such as /proc: Open makes a file beside it and removes it; a disk with
// less room than a new log needs to start, where SQLite would leave a log file holding no log): Open says why. `import`
// uses it too: a new log is created at its first write, so that a file refused at its first line leaves no log behind.
//
// Ownership: owns the log once it is open.
// Thread safety: one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "storage/tuning_log.h"

namespace tunefleet {

class DeferredLog {
 public:
  // Opens the log at `path` now when one is there (or none could be created there), else notes the path for Get.
  // Errors: those of TuningLog::Open.
  static Result<DeferredLog> Open(const std::string& path);

  // The log, created by the first call when it was deferred. Errors: those of TuningLog::Open.
  Result<TuningLog*> Get();
  // The log when it is open (it existed, or Get created it); null while deferred.
  TuningLog* IfOpen() const { return log_.get(); }
  // TuningLog::SetLockWait on the log, now when it is open, else once Get has created it (an empty one: SQLite's).
  void SetLockWait(std::function<bool(double waited_s)> keep_waiting);

 private:
  explicit DeferredLog(std::string path) : path_(std::move(path)) {}

  std::string path_;
  std::unique_ptr<TuningLog> log_;
  std::function<bool(double waited_s)> keep_waiting_;
};

}  // namespace tunefleet
