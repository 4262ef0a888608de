// TrackerState: the tracker's whole state behind one mutex: the agent registry, the lease table, the job
// dispatcher, and the write queues (mailboxes) of the open streams. It carries out what the pure-logic
// parts decide: jobs go into an agent's mailbox, events into a Measure call's mailbox; the gRPC handler
// threads drain those mailboxes onto the wire outside the lock.
//
// Thread safety: every public method may be called from any thread. Acquire blocks (up to the request's
// wait); nothing else blocks beyond the mutex.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "tracker/agent_registry.h"
#include "tracker/job_dispatcher.h"
#include "tracker/lease_table.h"
#include "tracker/mailbox.h"
#include "tracker/tracker_counters.h"
#include "tracker/warning_throttle.h"

namespace tunefleet::tracker {

using AgentMailbox = Mailbox<proto::TrackerMessage>;
using EventMailbox = Mailbox<proto::MeasureEvent>;

// Seconds an agent has to answer a job before the tracker drops it as wedged: the longest an honest agent can take,
// 12 timeouts and 6 minutes (the agent waits up to 10 timeouts or 5 minutes for a device lock another agent holds,
// then up to one timeout for the job). A job that names no timeout counts 10 minutes, above the agent's default.
double JobAnswerDeadline(const proto::TimingSpec& timing);

struct StateOptions {
  double lease_ttl = 30;          // seconds
  double heartbeat_timeout = 15;  // seconds without any message before an agent is dropped
  uint32_t max_agents = 1000;     // registered at once; each holds two handler threads of the tracker
};

class TrackerState {
 public:
  explicit TrackerState(const StateOptions& options);
  TrackerState(const TrackerState&) = delete;
  TrackerState& operator=(const TrackerState&) = delete;

  // --- agents ---
  // Registers an agent whose stream writes from `mailbox`; returns its id. When the agent is removed (stream end,
  // heartbeat timeout, misbehaviour) or on shutdown, the mailbox is closed and `cancel` (which ends the agent's
  // call; may be empty) is run, under the state's lock and never after the agent is removed. Unavailable when
  // max_agents are registered already (said in a warning at most once a minute, with the count refused since the
  // last one).
  Result<std::string> AddAgent(const proto::RegisterAgent& msg, const std::string& peer,
                               std::shared_ptr<AgentMailbox> mailbox, std::function<void()> cancel = {});
  // A heartbeat or result from a registered agent. A result for a job the agent is not running is a
  // protocol violation: the agent is removed and the error says why.
  Status OnAgentMessage(const std::string& agent_id, const proto::AgentMessage& msg);
  // Idempotent. Its running job ends as device_lost; its lease loses it.
  void RemoveAgent(const std::string& agent_id, const std::string& reason);

  // --- tuners ---
  // Waits up to request.wait() seconds for agents. `cancelled` is polled while waiting. The reply lists the lease's
  // agents still registered when the waiter takes its grant; a grant whose agents all went away meanwhile is given
  // back and the request waits on in its place. InvalidArgument when request.client() is over kMaxClientBytes.
  Result<proto::AcquireReply> Acquire(const proto::AcquireRequest& request, const std::function<bool()>& cancelled);
  // Queues the batch on its lease; its events arrive in `events`, one per job. Pins the lease.
  Result<BatchId> StartMeasure(const proto::MeasureBatch& batch, std::shared_ptr<EventMailbox> events);
  // Ends a StartMeasure (finished or abandoned): drops what is left of the batch, tells the agents running its
  // jobs to stop them, unpins and renews the lease.
  void EndMeasure(const std::string& lease_id, BatchId batch);
  struct Renewed {
    double ttl = 0;        // seconds
    uint32_t devices = 0;  // agents the lease still holds
  };
  Result<Renewed> Renew(const std::string& lease_id);
  Status Release(const std::string& lease_id);
  proto::SummaryReply Summary();

  // --- housekeeping ---
  // Drops silent agents, agents past a job's answer deadline (JobAnswerDeadline), and expires unrenewed leases.
  // Called periodically.
  void Tick(TimePoint now);
  // The tracker itself stalled for `stalled` (its host swapped or was suspended): the heartbeats and renewals sent
  // meanwhile are still unread, and Tick dropped every agent at once for the stall's silence. Every agent's silence
  // and every lease's renewal count from `now` instead; said in a warning.
  void ForgiveStall(TimePoint now, Clock::duration stalled);
  // Says the refusals of agents over --max-agents that the last minute's warning held back, once it is past.
  void SayHeldOver(TimePoint now) { refusals_.SayHeldOver(now); }
  // Shutdown: closes every mailbox, cancels every agent's call and wakes every waiting Acquire.
  void Stop();

  // Counters for the status page and metrics.
  TrackerCounters counters();

 private:
  // `left`: the agent said it was stopping (logged at info, not as a loss).
  void RemoveAgentLocked(const std::string& agent_id, const std::string& reason, bool left = false);
  void Execute(DispatchActions actions);
  void DeliverGrants(std::vector<Grant> grants);
  void CloseLeaseLocked(const std::string& lease_id, const std::string& message);

  const StateOptions options_;
  std::mutex mu_;
  std::condition_variable grant_cv_;  // notified when a waiter is granted or on Stop
  bool stopping_ = false;
  WarningThrottle refusals_{"agent sessions refused for --max-agents"};
  AgentRegistry registry_;
  LeaseTable leases_;
  JobDispatcher dispatcher_;
  struct AgentLine {
    std::shared_ptr<AgentMailbox> mailbox;
    std::function<void()> cancel;  // ends the agent's call; may be empty
    void End() const {
      mailbox->Close();
      if (cancel) cancel();
    }
  };
  std::map<std::string, AgentLine> agent_mail_;                     // by agent id
  std::map<BatchId, std::shared_ptr<EventMailbox>> event_mail_;     // by batch
  std::map<uint64_t, std::string> granted_;                         // waiter id -> its lease's id, until taken
  struct JobWatch {
    uint64_t job_id;
    TimePoint deadline;
    double seconds;  // the deadline's length, for the log line
  };
  std::map<std::string, JobWatch> job_watch_;  // by agent id: the job last sent to it, and when it must have answered
  TrackerCounters counters_;
};

}  // namespace tunefleet::tracker
