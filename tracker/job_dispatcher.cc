#include "tracker/job_dispatcher.h"

#include <algorithm>

#include "tracker/lease_table.h"  // NoLeaseError

namespace tunefleet::tracker {

void JobDispatcher::OpenLease(const std::string& lease_id, const std::vector<LeasedAgent>& agents) {
  LeaseState& ls = leases_[lease_id];
  for (const auto& a : agents) {
    ls.agent_ids.push_back(a.agent_id);
    AgentState& st = agents_[a.agent_id];  // may still be running a job of an ended lease
    st.lease_id = lease_id;
    st.fingerprint = a.fingerprint;
    st.gave_back = false;
  }
}

proto::MeasureEvent JobDispatcher::LostEvent(uint64_t job_id, const std::string& agent_id,
                                             const std::string& message) const {
  proto::MeasureEvent ev;
  ev.set_job_id(job_id);
  ev.set_agent_id(agent_id);
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) ev.set_device_fingerprint(it->second.fingerprint);
  ev.set_device_lost(true);
  ev.set_message(message);
  return ev;
}

void JobDispatcher::EndJob(BatchId batch, uint64_t job_id, proto::MeasureEvent event, DispatchActions* out) {
  auto it = batches_.find(batch);
  if (it == batches_.end() || it->second.unfinished.erase(job_id) == 0) return;  // batch gone: drop
  out->events.push_back(BatchEvent{batch, std::move(event)});
  if (it->second.unfinished.empty()) batches_.erase(it);
}

DispatchActions JobDispatcher::CloseLease(const std::string& lease_id, const std::string& message) {
  DispatchActions out;
  auto lit = leases_.find(lease_id);
  if (lit == leases_.end()) return out;
  for (const auto& a : lit->second.agent_ids) {
    auto ait = agents_.find(a);
    if (ait == agents_.end()) continue;
    if (ait->second.running && !ait->second.running->cancelled) {  // once: its batch may have been cancelled
      ait->second.running->cancelled = true;
      out.cancels.push_back({a, ait->second.running->job_id});
    }
    ait->second.lease_id.clear();
    if (!ait->second.running) agents_.erase(ait);
  }
  leases_.erase(lit);
  for (auto bit = batches_.begin(); bit != batches_.end();) {
    if (bit->second.lease_id != lease_id) {
      ++bit;
      continue;
    }
    for (uint64_t job : bit->second.unfinished) {
      out.events.push_back(BatchEvent{bit->first, LostEvent(job, "", message)});
    }
    bit = batches_.erase(bit);
  }
  return out;
}

Result<BatchId> JobDispatcher::Submit(const std::string& lease_id, std::vector<proto::MeasureJob> jobs,
                                      DispatchActions* out) {
  auto lit = leases_.find(lease_id);
  if (lit == leases_.end()) return NoLeaseError(lease_id);
  if (jobs.empty()) return Status::InvalidArgument("empty measure batch");
  BatchState batch{lease_id, {}};
  for (const auto& j : jobs) {
    if (!batch.unfinished.insert(j.job_id()).second) {
      return Status::InvalidArgument("job id " + std::to_string(j.job_id()) + " appears twice in the batch");
    }
  }
  const BatchId id = next_batch_++;
  batches_[id] = std::move(batch);
  if (!TakesJobs(lit->second)) {
    const std::string why = lit->second.agent_ids.empty() ? "lease has no agent left"
                                                          : "no agent of the lease takes jobs: each gave one back";
    for (const auto& j : jobs) EndJob(id, j.job_id(), LostEvent(j.job_id(), "", why), out);
    return id;
  }
  for (auto& j : jobs) lit->second.queue.push_back(Queued{id, std::move(j)});
  Dispatch(lease_id, out);
  return id;
}

DispatchActions JobDispatcher::CancelBatch(BatchId batch) {
  DispatchActions out;
  auto bit = batches_.find(batch);
  if (bit == batches_.end()) return out;
  auto lit = leases_.find(bit->second.lease_id);
  if (lit != leases_.end()) {
    std::erase_if(lit->second.queue, [&](const Queued& q) { return q.batch == batch; });
  }
  for (auto& [agent_id, st] : agents_) {
    if (st.running && st.running->batch == batch) {
      st.running->cancelled = true;
      out.cancels.push_back({agent_id, st.running->job_id});
    }
  }
  batches_.erase(bit);
  return out;
}

void JobDispatcher::Dispatch(const std::string& lease_id, DispatchActions* out) {
  LeaseState& ls = leases_[lease_id];
  for (const auto& a : ls.agent_ids) {
    if (ls.queue.empty()) return;
    AgentState& st = agents_[a];
    if (st.running || st.gave_back) continue;
    Queued q = std::move(ls.queue.front());
    ls.queue.pop_front();
    st.running = Running{q.batch, q.job.job_id()};
    Assignment as;
    as.agent_id = a;
    as.job.set_job_id(q.job.job_id());
    *as.job.mutable_program() = std::move(*q.job.mutable_program());
    out->assignments.push_back(std::move(as));
  }
}

bool JobDispatcher::TakesJobs(const LeaseState& lease) const {
  return std::any_of(lease.agent_ids.begin(), lease.agent_ids.end(), [&](const std::string& a) {
    auto it = agents_.find(a);
    return it != agents_.end() && !it->second.gave_back;
  });
}

void JobDispatcher::EndQueued(LeaseState& lease, const std::string& message, DispatchActions* out) {
  for (auto& q : lease.queue) EndJob(q.batch, q.job.job_id(), LostEvent(q.job.job_id(), "", message), out);
  lease.queue.clear();
}

std::optional<uint64_t> JobDispatcher::RunningJob(const std::string& agent_id) const {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || !it->second.running) return std::nullopt;
  return it->second.running->job_id;
}

DispatchActions JobDispatcher::OnResult(const std::string& agent_id, const proto::JobResult& result) {
  DispatchActions out;
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || !it->second.running) return out;
  const Running run = *it->second.running;
  it->second.running.reset();
  proto::MeasureEvent ev;
  ev.set_job_id(run.job_id);
  ev.set_agent_id(agent_id);
  ev.set_device_fingerprint(it->second.fingerprint);
  // A cancelled job answered unmeasured was stopped on the tracker's word, not given back: its agent takes jobs still.
  const bool given_back = result.result().not_measured() && !run.cancelled;
  if (given_back) {
    ev = LostEvent(run.job_id, agent_id, result.result().message());  // measured again
    it->second.gave_back = true;
  } else {
    *ev.mutable_result() = result.result();
  }
  EndJob(run.batch, run.job_id, std::move(ev), &out);
  const std::string lease_id = it->second.lease_id;
  if (lease_id.empty()) {
    agents_.erase(it);  // its lease ended while it ran
  } else if (LeaseState& lease = leases_[lease_id]; !TakesJobs(lease)) {
    EndQueued(lease, "no agent of the lease takes jobs: " + result.result().message(), &out);
  } else {
    Dispatch(lease_id, &out);
  }
  return out;
}

DispatchActions JobDispatcher::OnAgentLost(const std::string& agent_id, const std::string& message) {
  DispatchActions out;
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return out;
  if (it->second.running) {
    EndJob(it->second.running->batch, it->second.running->job_id,
           LostEvent(it->second.running->job_id, agent_id, message), &out);
  }
  const std::string lease_id = it->second.lease_id;
  agents_.erase(it);
  auto lit = leases_.find(lease_id);
  if (lit == leases_.end()) return out;
  std::erase(lit->second.agent_ids, agent_id);
  if (!TakesJobs(lit->second)) {
    const std::string why =
        lit->second.agent_ids.empty() ? "lease has no agent left: " : "no agent of the lease takes jobs: ";
    EndQueued(lit->second, why + message, &out);
  }
  return out;
}

size_t JobDispatcher::queued(const std::string& lease_id) const {
  auto it = leases_.find(lease_id);
  return it == leases_.end() ? 0 : it->second.queue.size();
}

}  // namespace tunefleet::tracker
