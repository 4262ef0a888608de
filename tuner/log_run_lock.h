// LogRunLock: one `tune` at a time per task and device of a tuning log. Resume is the default, so the same command
// started twice (a second terminal, a restart while the first run still goes on) would tune the same units from the
// same seed: every trial measured twice, the devices shared between two runs that do not know of each other. Runs
// that tune other tasks, or the same tasks on another device model, may write one log at once (the storage is
// SQLite in WAL; DESIGN's "several tuners may write to one file at once"): a lab keeps one log, and a tuner per
// phone model, or per model, fills it. A run is refused whole when any one of its tasks is taken (two models that
// share a layer, on one device model, run one after the other), and a task's lock covers all its templates
// (--template too).
//
// A run takes two sets of locks. On the key, before the tracker is asked: the same command twice is refused at
// once, not after waiting for a device the first run holds. On each device model it leased (the fingerprint, the
// device part of a unit's identity in the log), once the lease is had: two keys of one device model would tune the
// same units; a lease taken again mid-run, after the devices were lost, locks the models it brings too (RunTune).
//
// A lock is flock(2) on LOG.locks/HASH.lock, one file per (scope, task spec), HASH being FNV-1a of the two, LOG
// being the file the log's path resolves to (a symlink to the log, or `./x/../tune.db`, meets the same locks; a hard
// link, a second name of the file, would not, but TuningLog::Open refuses a file with several names). The
// kernel releases it when its holder exits or is killed (kill -9 included), so a stale lock cannot outlive its run;
// the holder writes who it is into the file for the refusal, and removes its files (and the folder, when they were
// the last) on a clean exit. The files a killed run leaves hold no lock and stay until the next run of their task
// and scope takes them over (a session's lock, which no later run takes, is removed by the next run that begins a
// session: tuner/run_session.h). A lock file, not a lock on the log: SQLite's own locks on the log are fcntl locks,
// which a flock emulated over NFS would meet. Each held lock is an open descriptor (per task on the key, and per
// task on each device model): when they would pass the process's soft limit of open files, it is raised to the
// hard one (once), and past that the error says so.
//
// Ownership: owns the lock files' descriptors; the destructor unlocks and removes them.
// Thread safety: one owner; Acquire may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet {

// What a run's tasks are locked on: a device key, or a device model (fingerprint).
struct RunLockScope {
  static RunLockScope Key(const std::string& key);
  // `name`: the device's name as its agent reported it (escaped for the message).
  static RunLockScope Device(const std::string& fingerprint, const std::string& name);
  // A run's own lock, held while it lives (tuner/run_session.h); `token` is unique to the run.
  static RunLockScope Session(const std::string& token);
  std::string kind;   // "key" or "device": part of the lock's name, so a key and a fingerprint never meet
  std::string id;     // the key, or the fingerprint
  std::string label;  // in messages: "key pixel7", "device 'Adreno 740' (fingerprint 633b142aba6f8a7c)"
};

class LogRunLock {
 public:
  // Takes the locks of every task of `task_specs` (repeats allowed) on `scope` in `log_path` for this process,
  // noting `holder` (e.g. "tunefleet tune pid 12@host") in them. All or none: when another run holds one of them,
  // those this call took are released.
  // Errors: Unavailable "LOG: task SPEC on LABEL is being tuned by HOLDER since TIME (its lock: FILE)[, and N more
  // of this run's M tasks]; ..." when another run holds one; IOError naming the file or folder that cannot be
  // created or locked.
  static Result<LogRunLock> Acquire(const std::string& log_path, const RunLockScope& scope,
                                    const std::vector<std::string>& task_specs, const std::string& holder);

  // The folder beside `log_path` that holds its locks, and the lock file of one task on one scope.
  static std::string LockFolder(const std::string& log_path);
  static std::string LockPath(const std::string& log_path, const RunLockScope& scope, const std::string& task_spec);

  // The start of a session lock's file name (the rest: HASH.lock).
  static constexpr const char* kSessionLockPrefix = "session-";

  // True when no process holds the lock file at `lock_path`: it does not exist, or it is not locked, and then it is
  // removed. Only for a lock one run takes once (a session's): probing a task's lock could make its next run, taking
  // it at that moment, see it busy. (A session's owner that opened the file but has not locked it yet finds it
  // removed and takes a new one: TakeOne.) Errors: IOError when it cannot be opened or tested.
  static Result<bool> Abandoned(const std::string& lock_path);

  LogRunLock(LogRunLock&& other) noexcept;
  LogRunLock& operator=(LogRunLock&& other) noexcept;
  LogRunLock(const LogRunLock&) = delete;
  LogRunLock& operator=(const LogRunLock&) = delete;
  ~LogRunLock();

 private:
  struct Held {
    OwnedFd fd;
    std::string path;
  };
  LogRunLock() = default;
  void Release();
  std::string folder_;
  std::vector<Held> held_;
};

}  // namespace tunefleet
