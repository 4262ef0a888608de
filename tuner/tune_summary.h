// The end-of-run report of `tunefleet tune`: per task and template (a "unit"), its trials, best latency, GFLOPS and
// speed-up over the template's fallback config, the estimated model latency before and after, and one line per
// tried unit with its best config. Units that the budget never reached are counted in a closing line rather than
// reported as failures: "no successful measurement" is said only of a unit whose trials all failed.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet {

struct TunedTask {
  std::string spec;
  std::string template_name;
  int64_t count = 1;
  uint64_t trials = 0;         // recorded in the log, this run's and earlier runs'
  uint64_t tuning_trials = 0;  // of those, the ones beyond the fallback config
  double best_cost = 0;        // seconds, 0 when nothing succeeded
  double best_gflops = 0;
  double fallback_cost = 0;    // seconds of the template's fallback config (0 when not measured)
  std::string best_config;     // JSON
  bool exhausted = false;      // every config of the space was measured
};

struct TuneSummary {
  std::vector<TunedTask> tasks;
  bool interrupted = false;
  // After a stop, the log stayed locked by another process (LogLockWait gave up): results that arrived since the lock
  // was taken, and the session's end, are not in it.
  bool lock_gave_up = false;
};

// The table (columns as wide as their longest entry), the estimated model latency (Σ count × latency, best
// template per task) when the run has several tasks or one repeated, and a line counting the units without a trial.
std::string FormatTuneSummary(const TuneSummary& s);

// "best SPEC [TEMPLATE]: G GFLOPS, L ms, config JSON" per unit with a success, "no successful measurement in N
// trials" per unit whose trials all failed; units without a trial get no line.
std::string FormatBestLines(const TuneSummary& s);

}  // namespace tunefleet
