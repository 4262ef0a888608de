// TrackerState without gRPC: an agent that keeps its stream but never answers its job is dropped at the job's
// answer deadline, and the job ends as a lost device's (time is passed to Tick, so the test need not wait); a waiting
// Acquire lists only agents still registered when it takes its grant.
#include "tracker/tracker_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "common/spdlog_capture_testing.h"
#include "tracker/request_limits.h"

namespace tunefleet::tracker {
namespace {

TEST(JobAnswerDeadlineTest, ShouldBeTwelveTimeoutsAndSixMinutesOrTenMinutesAsTheTimeoutWhenTheJobNamesNone) {
  proto::TimingSpec timing;
  timing.set_timeout_ms(5000);
  EXPECT_DOUBLE_EQ(JobAnswerDeadline(timing), 12 * 5 + 360);
  timing.set_timeout_ms(0);
  EXPECT_DOUBLE_EQ(JobAnswerDeadline(timing), 12 * 600 + 360);
}

// Agents never silent and leases never expiring: only what a test does ends them.
StateOptions Patient() {
  StateOptions options;
  options.heartbeat_timeout = 1e6;
  options.lease_ttl = 1e6;
  return options;
}

// An agent of key pocl named `name`, fingerprint "fp".
proto::RegisterAgent PoclAgent(const std::string& name) {
  proto::RegisterAgent reg;
  reg.set_key("pocl");
  reg.mutable_device()->set_name(name);
  reg.mutable_device()->set_fingerprint("fp");
  return reg;
}

// One agent of key pocl, waiting up to 1 s.
proto::AcquireRequest OnePocl() {
  proto::AcquireRequest acquire;
  acquire.set_key("pocl");
  acquire.set_count(1);
  acquire.set_wait(1);
  return acquire;
}

TEST(TrackerStateTest, GivenAnAgentThatNeverAnswersItsJob_WeShouldDropItAtTheDeadlineAndEndTheJobAsLost) {
  TrackerState state(Patient());  // never silent: only the job's deadline can drop it
  auto agent_mail = std::make_shared<AgentMailbox>();
  ASSERT_TRUE(state.AddAgent(PoclAgent("wedged"), "test-peer", agent_mail).ok());

  auto lease = state.Acquire(OnePocl(), [] { return false; });
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  proto::MeasureBatch batch;
  batch.set_lease_id(lease->lease_id());
  proto::MeasureJob* job = batch.add_jobs();
  job->set_job_id(7);
  job->mutable_program()->mutable_timing()->set_timeout_ms(1000);  // deadline 12 + 360 s
  auto events = std::make_shared<EventMailbox>();
  ASSERT_TRUE(state.StartMeasure(batch, events).ok());
  std::vector<proto::TrackerMessage> sent;
  ASSERT_EQ(agent_mail->Take(&sent, std::chrono::seconds(1)), AgentMailbox::Took::kItems);
  ASSERT_TRUE(sent.at(0).has_job());

  const auto start = Clock::now();
  std::vector<proto::MeasureEvent> got;
  state.Tick(start + std::chrono::seconds(360));
  EXPECT_EQ(events->Take(&got, std::chrono::milliseconds(0)), EventMailbox::Took::kTimeout);
  EXPECT_EQ(state.Summary().agents_size(), 1);

  state.Tick(start + std::chrono::seconds(373));
  ASSERT_EQ(events->Take(&got, std::chrono::seconds(1)), EventMailbox::Took::kItems);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].device_lost());
  EXPECT_NE(got[0].message().find("no result for job 7 within 372.0 s"), std::string::npos) << got[0].message();
  EXPECT_EQ(state.Summary().agents_size(), 0);
  EXPECT_EQ(state.counters().agents_lost, 1u);  // for /metrics
  EXPECT_EQ(state.counters().keys_seen, std::set<std::string>{"pocl"});  // its key stays there, at 0 agents
}

// A peer that registers agents of one-off keys and leaves: every key stayed in /metrics for ever (5,000 of them made
// it 4 MB). Past kMaxKeysSeen, the keys without an agent are forgotten; a key with an agent stays.
TEST(TrackerStateTest, GivenManyOneOffKeysTheKeysWithoutAnAgentShouldBeForgottenPastTheBound) {
  TrackerState state(Patient());
  ASSERT_TRUE(state.AddAgent(PoclAgent("stays"), "test-peer", std::make_shared<AgentMailbox>()).ok());
  for (size_t i = 0; i < 3 * kMaxKeysSeen; ++i) {
    proto::RegisterAgent reg = PoclAgent("one-off");
    reg.set_key("one-off-" + std::to_string(i));
    auto id = state.AddAgent(reg, "test-peer", std::make_shared<AgentMailbox>());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    state.RemoveAgent(*id, "stream ended");
    ASSERT_LE(state.counters().keys_seen.size(), kMaxKeysSeen + 1) << i;
  }
  EXPECT_EQ(state.counters().keys_seen.count("pocl"), 1u);
  EXPECT_GE(state.counters().keys_seen.size(), 2u);  // the latest one-off key too, at 0 agents
}

// One request must not cost the tracker without bound: a 12 MB batch of 2 million empty jobs cost it 300 MB.
TEST(TrackerStateTest, GivenABatchOfMoreJobsThanTheBoundItShouldBeRefusedAndTheLeaseLeftAsItWas) {
  TrackerState state(Patient());
  ASSERT_TRUE(state.AddAgent(PoclAgent("a"), "test-peer", std::make_shared<AgentMailbox>()).ok());
  auto lease = state.Acquire(OnePocl(), [] { return false; });
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  proto::MeasureBatch batch;
  batch.set_lease_id(lease->lease_id());
  for (int i = 0; i <= kMaxJobsPerBatch; ++i) batch.add_jobs()->set_job_id(i);
  auto refused = state.StartMeasure(batch, std::make_shared<EventMailbox>());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "a measure batch carries at most 4096 jobs; this one 4097");
  EXPECT_TRUE(state.Release(lease->lease_id()).ok());  // not pinned by the refused batch
}

// A stall of the tracker's own host: the heartbeats sent meanwhile are still unread when it runs again, and Tick
// dropped every agent at once. After ForgiveStall, silence counts from its time; an agent that stays silent is
// dropped a heartbeat timeout later, and a lease unrenewed expires a ttl later.
TEST(TrackerStateTest, GivenAStallOfTheTrackerItselfAgentsAndLeasesShouldBeGivenTheirTimeoutsFromItsEnd) {
  StateOptions options;
  options.heartbeat_timeout = 15;
  options.lease_ttl = 30;
  TrackerState state(options);
  const auto t0 = Clock::now();
  ASSERT_TRUE(state.AddAgent(PoclAgent("a"), "test-peer", std::make_shared<AgentMailbox>()).ok());
  auto lease = state.Acquire(OnePocl(), [] { return false; });
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const auto woke = t0 + std::chrono::seconds(40);  // stalled for 40 s: past both timeouts
  state.ForgiveStall(woke, std::chrono::seconds(40));
  state.Tick(woke);
  ASSERT_EQ(state.Summary().agents_size(), 1);
  EXPECT_TRUE(state.Renew(lease->lease_id()).ok());
  state.Tick(woke + std::chrono::seconds(16));  // silent since the stall's end
  EXPECT_EQ(state.Summary().agents_size(), 0);
}

proto::RegisterAgent Registration(const std::string& name) {
  proto::RegisterAgent reg;
  reg.set_key("phone");
  reg.mutable_device()->set_name(name);
  reg.mutable_device()->set_fingerprint("fp-" + name);
  return reg;
}

// A phone that registers and drops at once while a tuner waits: its grant is delivered to the waiting Acquire, which
// takes it only after the phone is gone. Repeated, since the waiter may also win the race and take the grant in
// between (then the phone was still there, and is listed whole).
TEST(TrackerStateTest, GivenAnAgentGoneBeforeTheWaiterTakesItsGrant_AcquireShouldListOnlyAgentsStillThere) {
  for (int round = 0; round < 50; ++round) {
    TrackerState state{StateOptions{}};
    proto::AcquireRequest acquire;
    acquire.set_key("phone");
    acquire.set_count(1);
    acquire.set_wait(10);
    auto reply = std::async(std::launch::async, [&] { return state.Acquire(acquire, [] { return false; }); });
    while (state.Summary().keys_size() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));

    auto flapping = state.AddAgent(Registration("flapping"), "peer-1", std::make_shared<AgentMailbox>());
    ASSERT_TRUE(flapping.ok());
    state.RemoveAgent(*flapping, "stream ended right after registering");
    auto stable = state.AddAgent(Registration("stable"), "peer-2", std::make_shared<AgentMailbox>());
    ASSERT_TRUE(stable.ok());

    const auto got = reply.get();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->devices_size(), 1);
    const proto::LeasedDevice& d = got->devices(0);
    const std::string name = d.agent_id() == *flapping ? "flapping" : "stable";
    EXPECT_EQ(d.device().name(), name) << "round " << round;  // never an empty DeviceInfo
    EXPECT_EQ(d.device().fingerprint(), "fp-" + name) << "round " << round;
  }
}

// The log names a lease by its sequence only: the id's random part, which lets its holder measure, renew and release,
// is learnt by the client it was granted to alone (the journal's readers had it from "lease ... granted").
TEST(TrackerStateTest, GivenALeaseGrantedReleasedAndExpired_TheLogShouldNotHoldItsId) {
  testing::CapturedSpdlog log;
  StateOptions options;
  options.heartbeat_timeout = 1e6;
  options.lease_ttl = 5;
  TrackerState state(options);
  ASSERT_TRUE(state.AddAgent(PoclAgent("cpu"), "test-peer", std::make_shared<AgentMailbox>()).ok());
  const proto::AcquireRequest acquire = OnePocl();
  auto released = state.Acquire(acquire, [] { return false; });
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  ASSERT_TRUE(state.Release(released->lease_id()).ok());
  auto expired = state.Acquire(acquire, [] { return false; });
  ASSERT_TRUE(expired.ok()) << expired.status().ToString();
  state.Tick(Clock::now() + std::chrono::seconds(10));

  const std::string text = log.text();
  EXPECT_NE(text.find("lease " + LeaseLogName(released->lease_id()) + " granted to"), std::string::npos) << text;
  EXPECT_NE(text.find("lease " + LeaseLogName(released->lease_id()) + " released"), std::string::npos) << text;
  EXPECT_NE(text.find("lease " + LeaseLogName(expired->lease_id()) + " of '' expired"), std::string::npos) << text;
  EXPECT_EQ(text.find(released->lease_id()), std::string::npos) << text;
  EXPECT_EQ(text.find(expired->lease_id()), std::string::npos) << text;
  EXPECT_EQ(LeaseLogName("lease-10-6c22782c09cd8c44"), "lease-10");
  EXPECT_EQ(state.counters().leases_expired, 1u);  // the released one is no expiry
  EXPECT_EQ(state.counters().agents_lost, 0u);
}

// A tuner that stops mid-job: the agent is told to stop the job and answers it unmeasured. That answer counts as no
// job done and no run timeout (the fleet review found /metrics counting cancels as run_timeout), the cancel has its
// own counter, and the agent takes the lease's next job.
TEST(TrackerStateTest, GivenAJobCancelledAndAnsweredNotMeasured_ItShouldCountAsCancelledNotDoneAndTheAgentGoOn) {
  TrackerState state(Patient());
  auto agent_mail = std::make_shared<AgentMailbox>();
  auto agent = state.AddAgent(PoclAgent("cpu"), "test-peer", agent_mail);
  ASSERT_TRUE(agent.ok());
  auto lease = state.Acquire(OnePocl(), [] { return false; });
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  auto measure = [&](uint64_t job_id) {
    proto::MeasureBatch batch;
    batch.set_lease_id(lease->lease_id());
    batch.add_jobs()->set_job_id(job_id);
    return state.StartMeasure(batch, std::make_shared<EventMailbox>());
  };
  auto take = [&] {
    std::vector<proto::TrackerMessage> sent;
    EXPECT_EQ(agent_mail->Take(&sent, std::chrono::seconds(1)), AgentMailbox::Took::kItems);
    return sent;
  };
  auto answer = [&](uint64_t job_id, bool not_measured) {
    proto::AgentMessage m;
    m.mutable_result()->set_job_id(job_id);
    proto::MeasureResult* r = m.mutable_result()->mutable_result();
    if (not_measured) {
      r->set_status(proto::RUN_TIMEOUT);
      r->set_message("cancelled: the tuner abandoned the job");
      r->set_not_measured(true);
    } else {
      r->add_costs(1e-3);
      r->set_mean_cost(1e-3);
    }
    return state.OnAgentMessage(*agent, m);
  };

  auto first = measure(7);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(take().at(0).has_job());
  state.EndMeasure(lease->lease_id(), *first);  // the tuner went away
  const auto cancel = take();
  ASSERT_TRUE(cancel.at(0).has_cancel());
  EXPECT_EQ(cancel.at(0).cancel().job_id(), 7u);
  EXPECT_EQ(state.counters().jobs_cancelled, 1u);
  auto second = measure(8);  // queued: the agent still stops job 7
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(answer(7, /*not_measured=*/true).ok());
  EXPECT_EQ(state.counters().jobs_done, 0u);
  EXPECT_TRUE(state.counters().results_by_status.empty());
  EXPECT_EQ(state.Summary().agents(0).jobs_done(), 0u);
  const auto next = take();
  ASSERT_TRUE(next.at(0).has_job());  // not taken for a job given back: the agent goes on
  EXPECT_EQ(next.at(0).job().job_id(), 8u);
  ASSERT_TRUE(answer(8, /*not_measured=*/false).ok());
  EXPECT_EQ(state.counters().jobs_done, 1u);
  EXPECT_EQ(state.Summary().agents(0).jobs_done(), 1u);
}

// A batch cancelled and its lease released at once (a time budget's end, a Ctrl-C) cancels its running job once:
// one cancel sent, one counted (the review found CloseLease sending a second).
TEST(TrackerStateTest, GivenABatchCancelledThenItsLeaseReleased_TheRunningJobShouldBeCancelledOnce) {
  TrackerState state(Patient());
  auto agent_mail = std::make_shared<AgentMailbox>();
  ASSERT_TRUE(state.AddAgent(PoclAgent("cpu"), "test-peer", agent_mail).ok());
  auto lease = state.Acquire(OnePocl(), [] { return false; });
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  proto::MeasureBatch batch;
  batch.set_lease_id(lease->lease_id());
  batch.add_jobs()->set_job_id(7);
  auto started = state.StartMeasure(batch, std::make_shared<EventMailbox>());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  state.EndMeasure(lease->lease_id(), *started);
  ASSERT_TRUE(state.Release(lease->lease_id()).ok());
  std::vector<proto::TrackerMessage> sent;
  ASSERT_EQ(agent_mail->Take(&sent, std::chrono::seconds(1)), AgentMailbox::Took::kItems);
  int cancels = 0;
  for (const auto& m : sent) cancels += m.has_cancel();
  EXPECT_EQ(cancels, 1);
  EXPECT_EQ(state.counters().jobs_cancelled, 1u);
}

}  // namespace
}  // namespace tunefleet::tracker
