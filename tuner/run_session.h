// RunSession: a tune run's row in the log's `sessions` table, and the lock that says the run still lives. A run
// ends its session itself: `End` with its state (done, interrupted), or 'failed' when the session is destroyed
// without it (every error return of a run). A run killed without warning (kill -9, the OOM killer, a power cut)
// cannot, and its session would stay 'running' for ever. So a run holds a lock file of its own (LOG.locks/HASH.lock,
// a flock the kernel releases when the process dies) from before its row exists, names it in the row
// (sessions.run_lock), and once it has its devices and begins its session it ends every other 'running' session
// whose lock nobody holds as 'killed' (tuner/log_run_lock.h says why only such a lock may be probed), and removes
// session lock files nobody holds (a run killed before its row named its file). Sessions without a lock name (older
// runs) are left as they are. `tune` and `import` hold one each. A session is judged dead by its lock alone, whatever
// host it names: hosts that write one log must share its flocks (as the task locks already require). Deleting
// LOG.locks/ under a live run makes the next run mark its session 'killed', which the run's own end then overwrites. A
// run that fails because the log's disk is full can still end its session: it holds a little space back from its start
// (SpaceReserve) and gives it up when ending the session finds no room.
//
// Ownership: owns the lock (released by the destructor, or by the kernel when the process dies); borrows the log,
// which must outlive it.
// Thread safety: one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "storage/tuning_log.h"
#include "tuner/log_run_lock.h"
#include "tuner/space_reserve.h"

namespace tunefleet {

// Whether a run fails when its lock cannot be taken (LOG.locks/ not writable by this user, say). `tune` needs the
// folder for its task locks anyway; `import` needs none, so it goes on with a session that names no lock (one
// warning: a later run cannot tell it from one killed).
enum class SessionLock { kRequired, kBestEffort };

class RunSession {
 public:
  // Takes the run's lock beside `log` (`holder` says who, e.g. "tunefleet tune pid 12@host"), begins its session
  // with `args_json`, then ends the sessions of killed runs (one info line each; when that fails, one warning and
  // the run goes on). Errors: the lock's (IOError; with kBestEffort, a warning instead) or the log's.
  static Result<RunSession> Begin(TuningLog& log, const std::string& args_json, const std::string& holder,
                                  SessionLock need = SessionLock::kRequired);

  RunSession(RunSession&& other) noexcept;
  RunSession& operator=(RunSession&&) = delete;
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;
  // Ends the session as 'failed' unless End was called.
  ~RunSession();

  int64_t id() const { return id_; }
  // Ends the session with `state` ("done", "interrupted", "failed"); once.
  Status End(const std::string& state);

 private:
  RunSession(TuningLog& log, std::optional<LogRunLock> lock, int64_t id)
      : log_(&log), lock_(std::move(lock)), id_(id) {}
  TuningLog* log_ = nullptr;  // null once ended or moved from
  std::optional<LogRunLock> lock_;  // none: a best-effort lock that could not be taken
  int64_t id_ = 0;
  SpaceReserve reserve_;  // room for End on a full disk (empty where the file system cannot hold one)
};

// "tunefleet COMMAND pid N@HOST": who holds a run's lock and leases (shown by `tunefleet query`).
std::string RunHolder(const std::string& command);

// Ends as 'killed' every 'running' session of `log` but `own` whose run lock no process holds, and removes session
// lock files no process holds; returns how many sessions it ended.
Result<int> EndKilledSessions(TuningLog& log, int64_t own);

}  // namespace tunefleet
