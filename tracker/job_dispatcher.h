// JobDispatcher: the per-lease job queues. Jobs of a Measure batch are queued on their lease and handed to
// the lease's agents one at a time per agent: whenever an agent of the lease is idle it gets the next job.
// Pure logic: it returns what to do (jobs to send to agents, events to stream to tuners); the caller does it.
//
// Every job of a batch ends in exactly one event: a result, or device_lost (its agent vanished, or the lease
// ended or lost all its agents). A result that arrives for a job whose batch already ended is dropped; the
// agent stays busy until its result arrives, so it is never sent two jobs at once.
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::tracker {

using BatchId = uint64_t;

struct Assignment {
  std::string agent_id;
  proto::Job job;
};

struct BatchEvent {
  BatchId batch = 0;
  proto::MeasureEvent event;
};

// A job an agent should stop: nobody waits for its result any more.
struct JobCancel {
  std::string agent_id;
  uint64_t job_id = 0;
  bool operator==(const JobCancel&) const = default;
};

struct DispatchActions {
  std::vector<Assignment> assignments;
  std::vector<BatchEvent> events;
  std::vector<JobCancel> cancels;
};

class JobDispatcher {
 public:
  JobDispatcher() = default;
  JobDispatcher(const JobDispatcher&) = delete;
  JobDispatcher& operator=(const JobDispatcher&) = delete;

  struct LeasedAgent {
    std::string agent_id;
    std::string fingerprint;
  };
  // A new lease (granted by the LeaseTable) and its agents.
  void OpenLease(const std::string& lease_id, const std::vector<LeasedAgent>& agents);
  // The lease ended (released or expired): every unfinished job of its batches ends as device_lost with
  // `message`; its batches are closed; the jobs its agents still run are to be cancelled.
  DispatchActions CloseLease(const std::string& lease_id, const std::string& message);

  // Queues `jobs` on the lease and dispatches to idle agents. InvalidArgument on an empty batch or a job id
  // that repeats within the batch; NotFound when the lease is unknown.
  Result<BatchId> Submit(const std::string& lease_id, std::vector<proto::MeasureJob> jobs, DispatchActions* out);
  // The caller of a batch stopped waiting for it: its queued jobs are dropped, late results are ignored, and the jobs
  // of the batch that agents are running are to be cancelled (once: CloseLease does not cancel them again).
  DispatchActions CancelBatch(BatchId batch);

  // Job id the agent is running, if any.
  std::optional<uint64_t> RunningJob(const std::string& agent_id) const;
  // A result from an agent for its running job (the caller checked RunningJob). The agent becomes idle and
  // gets its lease's next job. A result the agent marked not_measured ends the job as device_lost instead, and the
  // agent gets no more jobs of this lease (another agent of the lease measures the job when it comes again); when
  // no agent of the lease is left to take jobs, its queued jobs end as device_lost too. A job cancelled while it ran
  // (CancelBatch, CloseLease) ends with no event, whatever the answer; not_measured there is the agent's word that it
  // stopped the job, and the agent takes jobs still.
  DispatchActions OnResult(const std::string& agent_id, const proto::JobResult& result);
  // The agent vanished: its running job ends as device_lost with `message`, the lease loses the agent, and
  // when the lease has no agent left its queued jobs end as device_lost too.
  DispatchActions OnAgentLost(const std::string& agent_id, const std::string& message);

  size_t queued(const std::string& lease_id) const;

 private:
  struct Running {
    BatchId batch;
    uint64_t job_id;
    bool cancelled = false;  // its agent was told to stop it (batch cancelled, lease closed)
  };
  struct AgentState {
    std::string lease_id;  // "" once its lease ended (kept while a job is still running)
    std::string fingerprint;
    std::optional<Running> running;
    bool gave_back = false;  // it gave a job back (its device stayed locked): no more jobs of this lease
  };
  struct Queued {
    BatchId batch;
    proto::MeasureJob job;
  };
  struct LeaseState {
    std::vector<std::string> agent_ids;
    std::deque<Queued> queue;
  };
  struct BatchState {
    std::string lease_id;
    std::set<uint64_t> unfinished;
  };

  void Dispatch(const std::string& lease_id, DispatchActions* out);
  // True when an agent of the lease still takes jobs (one that gave a job back does not; a lease without agents has
  // none).
  bool TakesJobs(const LeaseState& lease) const;
  // Ends every queued job of the lease as device_lost with `message`.
  void EndQueued(LeaseState& lease, const std::string& message, DispatchActions* out);
  void EndJob(BatchId batch, uint64_t job_id, proto::MeasureEvent event, DispatchActions* out);
  proto::MeasureEvent LostEvent(uint64_t job_id, const std::string& agent_id, const std::string& message) const;

  BatchId next_batch_ = 1;
  std::map<std::string, AgentState> agents_;
  std::map<std::string, LeaseState> leases_;
  std::map<BatchId, BatchState> batches_;
};

}  // namespace tunefleet::tracker
