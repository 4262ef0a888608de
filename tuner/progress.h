// Progress output for long tuning runs: trials, current and best GFLOPS, ETA. On a terminal one line is
// rewritten in place; otherwise (logs, CI) one line per batch is printed, and one at a trial when the last line is
// older than `quiet` (a slow batch is not silent for minutes).
// Thread safety: used by one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace tunefleet {

class Progress {
 public:
  // `total_trials`: the budget of this run (0 = unknown); `time_budget`: seconds (0 = none), which also bounds
  // the ETA; `out`: where to print (stderr by default).
  explicit Progress(uint64_t total_trials, double time_budget = 0, std::FILE* out = stderr,
                    std::chrono::milliseconds quiet = std::chrono::minutes(1));

  // What a step is called on the line: "trial" unless set ("repeat" for tune --confirm's round).
  void SetNoun(std::string noun) { noun_ = std::move(noun); }
  // One measured trial (or other step) of this run.
  void Trial() { ++done_; }
  // Rewrites the status line (terminal) or prints it when `force` (end of a batch) or the last line is older than
  // `quiet`. A negative `last_gflops` is a trial that failed: "current failed" (0.00 GFLOPS read as a slow config);
  // NaN is none yet: "current -". A `best_gflops` of 0 is no success yet: "best -".
  void Show(const std::string& task_label, double last_gflops, double best_gflops, const std::string& extra,
            bool force);
  // Ends the in-place line so that following output starts on a fresh line.
  void Finish();

  double elapsed_seconds() const;
  // Seconds left at the current rate, or -1 when unknown.
  double EtaSeconds() const;

 private:
  uint64_t total_;
  double time_budget_;
  uint64_t done_ = 0;
  std::string noun_ = "trial";
  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
  std::chrono::milliseconds quiet_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_line_;
};

// "1h02m", "3m05s", "12s".
std::string FormatDuration(double seconds);

// A duration the user gave (--time-budget): under a minute with its own digits ("0.05s", "2.5s", "4s"), where
// FormatDuration rounds to whole seconds ("0s"); from a minute on as FormatDuration.
std::string FormatGivenDuration(double seconds);

}  // namespace tunefleet
