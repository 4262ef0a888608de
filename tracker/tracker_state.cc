#include "tracker/tracker_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/printable.h"
#include "common/seconds.h"
#include "tracker/request_limits.h"
#include "tracker/result_check.h"

namespace tunefleet::tracker {

TrackerState::TrackerState(const StateOptions& options)
    : options_(options), leases_(Seconds(options.lease_ttl)) {}

Result<std::string> TrackerState::AddAgent(const proto::RegisterAgent& msg, const std::string& peer,
                                           std::shared_ptr<AgentMailbox> mailbox, std::function<void()> cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (registry_.agents().size() >= options_.max_agents) {
    const std::string why = "the tracker serves at most " + std::to_string(options_.max_agents) +
                            " agents at once (--max-agents)";
    ++counters_.agents_refused;
    if (const auto count = refusals_.Occurred()) {
      spdlog::warn("refused {} agent session(s), the latest from {}: {}", *count, peer, why);
    }
    return Status::Unavailable(why);
  }
  const Registration reg = registry_.Register(msg, peer, Clock::now());
  if (!reg.previous_agent_id.empty()) {
    spdlog::info("agent {} is device '{}' (key '{}') reconnecting from {}, previously {}", reg.agent_id,
                 Printable(msg.device().name()), msg.key(), peer, reg.previous_agent_id);
  } else {
    spdlog::info("agent {} registered: key '{}', device '{}', agent version '{}', from {}", reg.agent_id, msg.key(),
                 Printable(msg.device().name()), Printable(msg.agent_version()), peer);
  }
  if (counters_.keys_seen.insert(msg.key()).second && counters_.keys_seen.size() > kMaxKeysSeen) {
    // Keys whose agents are all gone are forgotten (their series leave /metrics): 5,000 agents of one-off keys grew
    // /metrics to 4 MB and the tracker's memory with it.
    std::set<std::string> live;
    for (const auto& [id, agent] : registry_.agents()) live.insert(agent.key);
    std::erase_if(counters_.keys_seen, [&live](const std::string& key) { return live.count(key) == 0; });
  }
  AgentLine& line = agent_mail_[reg.agent_id] = AgentLine{std::move(mailbox), std::move(cancel)};
  if (stopping_) line.End();
  leases_.AddAgent(reg.agent_id, msg.key());
  DeliverGrants(leases_.Pump(Clock::now()));
  return reg.agent_id;
}

Status TrackerState::OnAgentMessage(const std::string& agent_id, const proto::AgentMessage& msg) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!registry_.Find(agent_id)) return Status::NotFound("agent " + agent_id + " is no longer registered");
  registry_.Touch(agent_id, Clock::now());
  if (msg.has_heartbeat()) return Status::OK();
  if (msg.has_result()) {
    const auto running = dispatcher_.RunningJob(agent_id);
    if (!running || *running != msg.result().job_id()) {
      const std::string why = "result for job " + std::to_string(msg.result().job_id()) + " it was not running";
      RemoveAgentLocked(agent_id, why);
      return Status::InvalidArgument(why);
    }
    if (const auto problem = ResultProblem(msg.result().result())) {
      const std::string why = "sent a result for job " + std::to_string(msg.result().job_id()) + " that " + *problem;
      RemoveAgentLocked(agent_id, why);  // the job ends as a lost device's: measured again elsewhere
      return Status::InvalidArgument(why);
    }
    if (!msg.result().result().not_measured()) {  // a job given back is not done
      registry_.CountJob(agent_id);
      counters_.jobs_done++;
      counters_.results_by_status[msg.result().result().status()]++;
    }
    Execute(dispatcher_.OnResult(agent_id, msg.result()));
    return Status::OK();
  }
  if (msg.has_leaving()) {
    const std::string& reason = msg.leaving().reason();
    RemoveAgentLocked(agent_id, reason.empty() ? "it was stopped" : Printable(reason, 200), /*left=*/true);
    return Status::Unavailable("agent " + agent_id + " left");
  }
  const std::string why = msg.has_register_() ? "RegisterAgent sent twice" : "empty message";
  RemoveAgentLocked(agent_id, why);
  return Status::InvalidArgument(why);
}

void TrackerState::RemoveAgent(const std::string& agent_id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  RemoveAgentLocked(agent_id, reason);
}

void TrackerState::RemoveAgentLocked(const std::string& agent_id, const std::string& reason, bool left) {
  const AgentRecord* rec = registry_.Find(agent_id);
  if (!rec) return;
  const std::string what = "agent " + agent_id + " (" + Printable(rec->device.name()) + ", " + rec->peer + ") " +
                           (left ? "left: " : "lost: ") + reason;
  if (stopping_) {
    spdlog::info("agent {} ({}) disconnected: the tracker is stopping", agent_id, Printable(rec->device.name()));
  } else if (left) {
    spdlog::info("{}", what);
  } else {
    spdlog::warn("{}", what);
    ++counters_.agents_lost;
  }
  registry_.Remove(agent_id, left);
  job_watch_.erase(agent_id);
  leases_.RemoveAgent(agent_id);
  Execute(dispatcher_.OnAgentLost(agent_id, what));
  auto it = agent_mail_.find(agent_id);
  if (it != agent_mail_.end()) {
    it->second.End();  // also ends a write blocked on an agent that stopped reading
    agent_mail_.erase(it);
  }
}

double JobAnswerDeadline(const proto::TimingSpec& timing) {
  const double timeout = timing.timeout_ms() > 0 ? timing.timeout_ms() / 1000.0 : 600.0;
  return 12 * timeout + 360;
}

void TrackerState::Execute(DispatchActions actions) {
  for (auto& a : actions.assignments) {
    auto it = agent_mail_.find(a.agent_id);
    if (it == agent_mail_.end()) continue;  // cannot happen: the dispatcher only knows registered agents
    const double seconds = JobAnswerDeadline(a.job.program().timing());
    const TimePoint deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(seconds));
    job_watch_[a.agent_id] = JobWatch{a.job.job_id(), deadline, seconds};
    proto::TrackerMessage m;
    *m.mutable_job() = std::move(a.job);
    it->second.mailbox->Push(std::move(m));
  }
  for (auto& e : actions.events) {
    auto it = event_mail_.find(e.batch);
    if (it != event_mail_.end()) it->second->Push(std::move(e.event));
  }
  // Jobs nobody waits for any more: their agents stop them (the results that still come reach no tuner; one measured
  // before the stop counts as a job done, one answered not_measured does not).
  for (const auto& c : actions.cancels) {
    auto it = agent_mail_.find(c.agent_id);
    if (it == agent_mail_.end()) continue;
    proto::TrackerMessage m;
    m.mutable_cancel()->set_job_id(c.job_id);
    it->second.mailbox->Push(std::move(m));
    counters_.jobs_cancelled++;
  }
}

void TrackerState::DeliverGrants(std::vector<Grant> grants) {
  if (grants.empty()) return;
  for (auto& g : grants) {
    std::vector<JobDispatcher::LeasedAgent> agents;
    for (const auto& a : g.lease.agent_ids) {
      const AgentRecord* rec = registry_.Find(a);
      agents.push_back({a, rec ? rec->device.fingerprint() : ""});
    }
    dispatcher_.OpenLease(g.lease.lease_id, agents);
    granted_[g.waiter_id] = g.lease.lease_id;
  }
  grant_cv_.notify_all();
}

void TrackerState::CloseLeaseLocked(const std::string& lease_id, const std::string& message) {
  Execute(dispatcher_.CloseLease(lease_id, message));
}

Result<proto::AcquireReply> TrackerState::Acquire(const proto::AcquireRequest& request,
                                                 const std::function<bool()>& cancelled) {
  if (request.key().empty()) return Status::InvalidArgument("acquire: empty key");
  if (const auto problem = AcquireClientProblem(request.client())) {
    return Status::InvalidArgument("AcquireRequest's " + *problem);
  }
  // Any client sends this: bounded before it meets the clock (1e300 s overflowed it), NaN as no wait.
  const double wait = std::min(std::max(0.0, request.wait()), kOneYearSeconds);
  const TimePoint deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(wait));
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return Status::Unavailable("tracker is shutting down");
  AcquireSpec spec{request.key(), request.count(), request.min_count(), request.priority(), request.client(), {}};
  // Bounded as the wait is (NaN or negative: none): a client that waited before keeps its place among equals.
  const double queued_for = std::min(std::max(0.0, request.queued_for()), kOneYearSeconds);
  spec.waiting_since = Clock::now() - std::chrono::duration_cast<Clock::duration>(Seconds(queued_for));
  const uint64_t waiter = leases_.Enqueue(spec);
  DeliverGrants(leases_.Pump(Clock::now()));
  while (true) {
    auto git = granted_.find(waiter);
    if (git != granted_.end()) {
      const std::string lease_id = std::move(git->second);
      granted_.erase(git);
      if (cancelled()) {  // nobody will use it
        (void)leases_.Release(lease_id);
        CloseLeaseLocked(lease_id, "acquiring client went away");
        DeliverGrants(leases_.Pump(Clock::now()));
        return Status::Unavailable("acquire cancelled by the client");
      }
      // From the lease as it is now, not as granted: an agent that went away since (a phone that registered and
      // dropped at once) is left out, and a lease left with none is given back and the wait goes on.
      proto::AcquireReply reply;
      reply.set_lease_id(lease_id);
      reply.set_ttl(options_.lease_ttl);
      if (const Lease* lease = leases_.Find(lease_id)) {
        for (const auto& a : lease->agent_ids) {
          const AgentRecord* rec = registry_.Find(a);
          if (!rec) continue;
          auto* d = reply.add_devices();
          d->set_agent_id(a);
          *d->mutable_device() = rec->device;
        }
      }
      if (reply.devices().empty()) {
        (void)leases_.Release(lease_id);
        CloseLeaseLocked(lease_id, "every agent of the lease went away before it was taken");
        leases_.Requeue(waiter, spec);
        DeliverGrants(leases_.Pump(Clock::now()));
        continue;
      }
      spdlog::info("lease {} granted to '{}': {} agent(s) of key '{}'", LeaseLogName(lease_id),
                   Printable(request.client()), reply.devices_size(), request.key());
      return reply;
    }
    const TimePoint now = Clock::now();
    if (stopping_ || now >= deadline || cancelled()) {
      // The runs served before this one at the end (a higher priority, or waiting longer): said in the give-up line.
      size_t ahead = 0;
      for (const AcquireSpec& q : leases_.Queue(request.key())) {
        ahead += q.priority > spec.priority || (q.priority == spec.priority && q.waiting_since < spec.waiting_since);
      }
      leases_.CancelWaiter(waiter);
      if (stopping_) return Status::Unavailable("tracker is shutting down");
      if (cancelled()) return Status::Unavailable("acquire cancelled by the client");
      const uint32_t registered = leases_.Counts(request.key()).registered;
      // A wait of 0 is said as none ("for 0.0 s" read as a wait that ran out).
      const std::string waited = wait > 0 ? " for " + SecondsText(wait) + " (the client's wait;"
                                          : " (the client asked not to wait;";
      if (registered == 0)
        return Status::NotFound("no agent for key '" + request.key() + "'" +
                                (wait > 0 ? " after " + SecondsText(wait) : "") + " (0 registered)");
      // That the wait is the client's, who held the agents at its end (not all along: the leases may have passed
      // between runs meanwhile) and how many runs were to be served first.
      std::set<std::string> holders;
      for (const auto& [id, rec] : registry_.agents()) {
        if (rec.key != request.key()) continue;
        const Lease* lease = leases_.Find(leases_.LeaseOf(id));
        if (lease != nullptr) holders.insert("'" + Printable(lease->client) + "'");
      }
      std::string held;
      for (const std::string& h : holders) {
        held += (held.empty() ? (wait > 0 ? "; leased at its end by " : "; leased by ") : ", ") + h;
      }
      const std::string queued = ahead == 0 ? ""
                                 : "; " + std::to_string(ahead) + (ahead == 1 ? " run" : " runs") +
                                       (wait > 0 ? " waited" : " wait") + " ahead of this one";
      return Status::DeadlineExceeded("every agent of key '" + request.key() + "' (" + std::to_string(registered) +
                                      (wait > 0 ? ") stayed leased" : ") is leased") + waited +
                                      " tune --wait, measure --wait)" + held + queued);
    }
    grant_cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(200)));
  }
}

Result<BatchId> TrackerState::StartMeasure(const proto::MeasureBatch& batch, std::shared_ptr<EventMailbox> events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return Status::Unavailable("tracker is shutting down");
  if (batch.jobs_size() > kMaxJobsPerBatch) {
    return Status::InvalidArgument("a measure batch carries at most " + std::to_string(kMaxJobsPerBatch) +
                                   " jobs; this one " + std::to_string(batch.jobs_size()));
  }
  TF_RETURN_IF_ERROR(leases_.Pin(batch.lease_id()));
  std::vector<proto::MeasureJob> jobs(batch.jobs().begin(), batch.jobs().end());
  DispatchActions out;
  auto id = dispatcher_.Submit(batch.lease_id(), std::move(jobs), &out);
  if (!id.ok()) {
    leases_.Unpin(batch.lease_id(), Clock::now());
    return id.status();
  }
  event_mail_[*id] = std::move(events);
  Execute(std::move(out));
  return id;
}

void TrackerState::EndMeasure(const std::string& lease_id, BatchId batch) {
  std::lock_guard<std::mutex> lock(mu_);
  Execute(dispatcher_.CancelBatch(batch));
  event_mail_.erase(batch);
  leases_.Unpin(lease_id, Clock::now());
}

Result<TrackerState::Renewed> TrackerState::Renew(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(leases_.Renew(lease_id, Clock::now()));
  const Lease* lease = leases_.Find(lease_id);
  return Renewed{options_.lease_ttl, lease ? static_cast<uint32_t>(lease->agent_ids.size()) : 0u};
}

Status TrackerState::Release(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(leases_.Release(lease_id));
  spdlog::info("lease {} released", LeaseLogName(lease_id));
  CloseLeaseLocked(lease_id, "lease released");
  DeliverGrants(leases_.Pump(Clock::now()));
  return Status::OK();
}

proto::SummaryReply TrackerState::Summary() {
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = Clock::now();
  proto::SummaryReply reply;
  reply.set_tracker_version(TUNEFLEET_VERSION);
  for (const auto& [id, rec] : registry_.agents()) {
    auto* a = reply.add_agents();
    a->set_agent_id(id);
    a->set_key(rec.key);
    *a->mutable_device() = rec.device;
    const std::string lease_id = leases_.LeaseOf(id);
    const Lease* lease = leases_.Find(lease_id);
    a->set_state(dispatcher_.RunningJob(id) ? "busy" : lease ? "leased" : "free");
    if (lease) a->set_lease_holder(lease->client);
    a->set_jobs_done(rec.jobs_done);
    a->set_last_seen_age(Seconds(now - rec.last_seen).count());
    a->set_peer(rec.peer);
  }
  for (const auto& key : leases_.Keys()) {
    const KeyCounts c = leases_.Counts(key);
    auto* k = reply.add_keys();
    k->set_key(key);
    k->set_free(c.free);
    k->set_leased(c.leased);
    k->set_waiting(c.waiting);
    for (const AcquireSpec& spec : leases_.Queue(key)) {
      auto* q = k->add_queue();
      q->set_client(spec.client);
      q->set_priority(spec.priority);
      q->set_count(spec.count);  // as Enqueue took them: at least 1, min_count no more than count
      q->set_min_count(spec.min_count);
      q->set_waited_s(std::max(0.0, Seconds(now - *spec.waiting_since).count()));
    }
  }
  return reply;
}

void TrackerState::ForgiveStall(TimePoint now, Clock::duration stalled) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, agent] : registry_.agents()) registry_.Touch(id, now);
  leases_.RenewAll(now);
  spdlog::warn("the tracker stalled for {} (its host swapped, or was suspended): the silence of agents and leases "
               "during it is not held against them",
               SecondsText(std::chrono::duration<double>(stalled).count()));
}

void TrackerState::Tick(TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& id : registry_.Stale(now, Seconds(options_.heartbeat_timeout))) {
    RemoveAgentLocked(id, "no message for " + SecondsText(options_.heartbeat_timeout));
  }
  // An agent that keeps its heartbeat but never answers its job (wedged, or hostile) would hold the job forever.
  std::vector<std::pair<std::string, JobWatch>> overdue;
  for (auto it = job_watch_.begin(); it != job_watch_.end();) {
    const auto running = dispatcher_.RunningJob(it->first);
    if (!running || *running != it->second.job_id) {
      it = job_watch_.erase(it);  // answered (or cancelled and gone)
      continue;
    }
    if (now > it->second.deadline) overdue.emplace_back(*it);
    ++it;
  }
  for (const auto& [id, watch] : overdue) {
    RemoveAgentLocked(id, "no result for job " + std::to_string(watch.job_id) + " within " +
                              SecondsText(watch.seconds) + " (12 times its timeout and 6 minutes)");
  }
  for (const auto& lease : leases_.Expire(now)) {
    ++counters_.leases_expired;
    spdlog::info("lease {} of '{}' expired (not renewed within {})", LeaseLogName(lease.lease_id),
                 Printable(lease.client), SecondsText(options_.lease_ttl));
    CloseLeaseLocked(lease.lease_id, "lease expired");
  }
  DeliverGrants(leases_.Pump(now));
}

void TrackerState::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  for (const auto& [id, line] : agent_mail_) line.End();
  for (auto& [id, box] : event_mail_) box->Close();
  grant_cv_.notify_all();
}

TrackerCounters TrackerState::counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace tunefleet::tracker
