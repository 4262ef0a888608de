// What the tracker counts since it started, for /metrics: results by status, agents lost or refused, leases expired,
// and every key an agent registered with (so that a key whose agents are all gone is still written, at 0), up to
// kMaxKeysSeen: past it, the keys without an agent are forgotten.
// Thread safety: a value; TrackerState fills it under its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace tunefleet::tracker {

// A lab has a few keys (one per phone model); a peer that registers one-off keys must not grow /metrics for ever.
inline constexpr size_t kMaxKeysSeen = 256;

struct TrackerCounters {
  uint64_t jobs_done = 0;                      // results received (not jobs given back unmeasured)
  std::map<int, uint64_t> results_by_status;   // the same by MeasureStatus
  uint64_t jobs_cancelled = 0;                 // running jobs agents were told to stop (tuner stopped, lease ended)
  uint64_t agents_lost = 0;     // dropped: silent, past a job's deadline, a broken stream or message; not those that
                                // left, nor at shutdown
  uint64_t agents_refused = 0;  // over --max-agents
  uint64_t leases_expired = 0;  // not renewed within --lease-ttl
  std::set<std::string> keys_seen;
};

}  // namespace tunefleet::tracker
