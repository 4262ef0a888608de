// LeaseTable: which agents of a key are free, which lease holds which agents, and the per-key queue of
// acquire requests waiting for agents. Pure logic: no gRPC, no clock (time is a parameter), no threads.
//
// Queue order: higher priority first, FIFO among equal priorities. The head of a key's queue blocks the
// requests behind it (no overtaking), so a request for many devices is never starved by small ones; a request
// whose min_count exceeds the agents registered for its key waits without blocking the others.
// A waiter is granted min(count, free) agents as soon as at least min_count agents of its key are free.
//
// Thread safety: none; the owner serialises calls (TrackerState holds it under its mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/printable.h"
#include "common/status.h"

namespace tunefleet::tracker {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Seconds = std::chrono::duration<double>;

struct AcquireSpec {
  std::string key;
  uint32_t count = 1;      // agents wanted; 0 is taken as 1
  uint32_t min_count = 1;  // grant as soon as this many are free; 0 is taken as 1; capped at count
  int32_t priority = 0;    // higher first
  std::string client;      // free text shown in summaries
  // When the client began to wait (AcquireRequest.queued_for before the request's arrival): FIFO among equal
  // priorities goes by it, then by the order of the requests. Unset: the time of the request itself.
  std::optional<TimePoint> waiting_since;
};

// How the tracker's log names a lease: its id without the random part ("lease-10" for "lease-10-6c22782c09cd8c44"),
// which only the client it was granted to may learn (whoever knows it can measure on, renew or release the lease).
inline std::string LeaseLogName(const std::string& lease_id) {
  const size_t dash = lease_id.rfind('-');
  return dash == std::string::npos || dash == 0 || lease_id.compare(0, 6, "lease-") != 0 ? "lease (malformed id)"
                                                                                          : lease_id.substr(0, dash);
}

// The error for a lease id the table does not hold. The id is the caller's, so it is shown as Printable shows text
// from a peer (at most 200 bytes, control bytes escaped): a client's 100 KB id came back whole in the reply.
inline Status NoLeaseError(const std::string& lease_id) {
  return Status::NotFound("no lease '" + Printable(lease_id) + "' (expired or released)");
}

struct Lease {
  std::string lease_id;
  std::string key;
  std::string client;
  std::vector<std::string> agent_ids;  // agents still held (an agent that vanished is taken out)
  TimePoint expiry;
  int pins = 0;  // running Measure calls; a pinned lease never expires
};

// A waiter that Pump() satisfied: the lease now exists in the table.
struct Grant {
  uint64_t waiter_id = 0;
  Lease lease;
};

struct KeyCounts {
  uint32_t registered = 0;
  uint32_t free = 0;
  uint32_t leased = 0;
  uint32_t waiting = 0;
};

class LeaseTable {
 public:
  explicit LeaseTable(Seconds ttl) : ttl_(ttl) {}
  LeaseTable(const LeaseTable&) = delete;
  LeaseTable& operator=(const LeaseTable&) = delete;

  // A new agent of `key`, free. Call Pump() afterwards: it may satisfy a waiter.
  void AddAgent(const std::string& agent_id, const std::string& key);
  // Forgets an agent. Returns the id of the lease that held it ("" when it was free or unknown); that lease
  // keeps running with its other agents.
  std::string RemoveAgent(const std::string& agent_id);

  // Queues an acquire request and returns its waiter id. Call Pump() afterwards.
  uint64_t Enqueue(AcquireSpec spec);
  // Takes a waiter out of its queue (timed out or caller gone). Unknown ids are ignored.
  void CancelWaiter(uint64_t waiter_id);
  // Puts a granted waiter back in its key's queue at the place it had (by priority, then the time it began to wait,
  // then its id; `spec` as it was queued, with that time): its lease came to nothing, every agent of it having gone
  // before the waiter took it. Call Pump() afterwards.
  void Requeue(uint64_t waiter_id, AcquireSpec spec);
  bool IsWaiting(uint64_t waiter_id) const { return waiter_key_.count(waiter_id) != 0; }

  // Grants waiters, per key in queue order, while the head of the queue can be satisfied.
  std::vector<Grant> Pump(TimePoint now);

  // Pushes the lease's expiry to now + ttl. NotFound when the lease is unknown or expired.
  Status Renew(const std::string& lease_id, TimePoint now);
  // Pushes every lease's expiry to now + ttl (the tracker stalled: renewals sent meanwhile are still unread).
  void RenewAll(TimePoint now);
  // Ends a lease, freeing its agents. NotFound when unknown. Call Pump() afterwards.
  Status Release(const std::string& lease_id);
  // Ends every unpinned lease whose expiry is <= now; returns the ended leases. Call Pump() afterwards.
  std::vector<Lease> Expire(TimePoint now);

  // A pinned lease does not expire (a Measure is running on it). Unpin renews it.
  Status Pin(const std::string& lease_id);
  void Unpin(const std::string& lease_id, TimePoint now);

  // nullptr when unknown. The pointer is valid until the next non-const call.
  const Lease* Find(const std::string& lease_id) const;
  // Lease id holding the agent, "" when free or unknown.
  std::string LeaseOf(const std::string& agent_id) const;
  KeyCounts Counts(const std::string& key) const;
  // The key's queue in the order Pump() serves it; each spec's waiting_since is set.
  std::vector<AcquireSpec> Queue(const std::string& key) const;
  std::vector<std::string> Keys() const;

 private:
  struct Waiter {
    int32_t priority;
    TimePoint since;  // AcquireSpec::waiting_since, or when it was queued
    uint64_t seq;     // also the waiter id
    AcquireSpec spec;
    bool operator<(const Waiter& o) const {
      if (priority != o.priority) return priority > o.priority;
      return since != o.since ? since < o.since : seq < o.seq;
    }
  };
  struct KeyState {
    std::vector<std::string> free;  // in the order they became free
    uint32_t registered = 0;
    std::set<Waiter> queue;
  };
  struct AgentSlot {
    std::string key;
    std::string lease_id;  // "" when free
  };

  void Insert(uint64_t waiter_id, AcquireSpec spec);
  void FreeAgents(const Lease& lease);
  // Erases the state of a key with no agent and no waiter: any client may ask for any key, and a tracker that kept
  // every key ever asked for grew without bound.
  void ForgetIfIdle(std::map<std::string, KeyState>::iterator key);

  Seconds ttl_;
  uint64_t next_seq_ = 1;
  uint64_t next_lease_ = 1;
  std::map<std::string, KeyState> keys_;
  std::map<std::string, AgentSlot> agents_;
  std::map<std::string, Lease> leases_;
  std::map<uint64_t, std::string> waiter_key_;  // waiter id -> key
};

}  // namespace tunefleet::tracker
