// StopOnSignals: turns SIGINT/SIGTERM/SIGHUP (a closed terminal or ssh session; not under nohup) into a stop request
// (std::stop_source) for a long command such as `tune`, which then stops cleanly: releases its lease, keeps its
// results, exits with a clear line. SIGPIPE is ignored from then on: a closed pipe on standard output fails the write
// (EPIPE, said at the end) instead of killing the command before it cleans up.
//
// The signals are blocked in the constructing thread (threads created afterwards — gRPC's, OpenMP's — inherit
// the mask) and taken by a waiter thread with sigtimedwait, so the stop request runs as ordinary code, not in a
// signal handler. The first signal requests the stop. The same signal often arrives twice at once: coreutils
// `timeout` sends it to the child and again to its process group, and a terminal's Ctrl-C reaches every process
// of the foreground group; so repeats within `repeat_grace` of the first count as the same request. A signal
// after that kills the process at once with the signal's default action (the way out when stopping hangs).
//
// Thread safety: token() and signal_name() may be called from any thread. The signals stay blocked in the
// constructing thread after destruction, so that one arriving while the command finishes cannot cut it short.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

namespace tunefleet {

class StopOnSignals {
 public:
  // `stopping` says in the warning what stopping does ("results so far are kept, ..."), for the command at hand.
  explicit StopOnSignals(std::chrono::milliseconds repeat_grace = std::chrono::milliseconds(1000),
                         std::string stopping = "results so far are kept; a batch in flight is abandoned and a lease "
                                                "held is released");
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // Stops taking signals: the command's work is over (its session ended), and one arriving from now on is held
  // back and ends with the process. (It said "stopping (... a lease held is released)" after the summary.)
  // Idempotent; the destructor does it too.
  void Finish();

  std::stop_token token() const { return source_.get_token(); }
  bool stop_requested() const { return source_.stop_requested(); }
  // "SIGINT", "SIGTERM" or "SIGHUP" once a stop was requested, "" before.
  const char* signal_name() const;

 private:
  void Wait();

  const std::chrono::milliseconds repeat_grace_;
  const std::string stopping_;
  const sigset_t signals_;  // those taken (SIGHUP not where it is ignored: nohup)
  std::stop_source source_;
  std::atomic<int> first_signal_{0};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace tunefleet
