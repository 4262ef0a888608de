// LogLockWait: how long a `tune` run's writes wait for another process's write lock on its log (a sqlite3 shell's open
// transaction, a VACUUM), as the log's busy handler asks it (TuningLog::SetLockWait).
//
// Until the run's session has begun (Unbound), 30 s as SQLite waits: a run that cannot start holds its devices for
// nothing. Then, until a stop, as long as the lock is held: a run that gave up after SQLite's 30 s failed and dropped
// its batch's results; it says so from 30 s on and then each minute. After a stop (Ctrl-C), a few seconds more from the
// stop (another run's record holds the lock for milliseconds), so that what arrived and the session's end are written
// when the lock is let go soon; then it gives up at once, and the run says in its own words what was not written
// (SQLite's "database is locked" spoke of a 30 s wait that had not happened).
//
// Thread safety: one thread at a time (the log's writer); the stop token may be set from any thread.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <utility>

namespace tunefleet {

class LogLockWait {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kGraceAfterStop{3};

  LogLockWait(std::string db, std::stop_token stop) : db_(std::move(db)), stop_(std::move(stop)) {}

  static constexpr double kStartBoundS = 30;

  // Whether a write that has waited `waited` seconds for the lock waits on, at `now`.
  bool KeepWaiting(double waited, Clock::time_point now);
  // From now on a write waits as long as the lock is held (until a stop): the run's session has begun.
  void Unbound() { bounded_ = false; }
  // Whether a write gave up on the lock after a stop: then what it was to write is not in the log.
  bool gave_up() const { return gave_up_; }

 private:
  const std::string db_;
  const std::stop_token stop_;
  double said_at_ = 0;             // the wait (s) at which the last "has been locked" line was said; 0: none yet
  Clock::time_point stop_seen_{};  // when a wait first saw the stop; epoch: not yet
  bool gave_up_ = false;
  bool bounded_ = true;
};

}  // namespace tunefleet
