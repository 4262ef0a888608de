#include "tuner/log_lock_wait.h"

#include <spdlog/spdlog.h>

namespace tunefleet {

bool LogLockWait::KeepWaiting(double waited, Clock::time_point now) {
  if (stop_.stop_requested()) {
    if (stop_seen_ == Clock::time_point{}) stop_seen_ = now;
    if (now - stop_seen_ < kGraceAfterStop) return true;
    gave_up_ = true;
    return false;
  }
  if (bounded_) return waited < kStartBoundS;
  if (waited < said_at_) said_at_ = 0;  // a new wait
  if (waited >= 30 && (said_at_ == 0 || waited - said_at_ >= 60)) {
    said_at_ = waited;
    spdlog::warn("{} has been locked by another process for {:.0f} s (a write transaction held open: a sqlite3 "
                 "shell, a VACUUM?); the run waits for it to record its results (Ctrl-C gives up on those not yet "
                 "recorded)",
                 db_, waited);
  }
  return true;
}

}  // namespace tunefleet
