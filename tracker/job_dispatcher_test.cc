#include "tracker/job_dispatcher.h"

#include <gtest/gtest.h>

namespace tunefleet::tracker {
namespace {

std::vector<proto::MeasureJob> Jobs(std::initializer_list<uint64_t> ids) {
  std::vector<proto::MeasureJob> jobs;
  for (uint64_t id : ids) {
    proto::MeasureJob j;
    j.set_job_id(id);
    j.mutable_program()->set_output_buffer("c");
    jobs.push_back(std::move(j));
  }
  return jobs;
}

proto::JobResult Ok(uint64_t job_id) {
  proto::JobResult r;
  r.set_job_id(job_id);
  r.mutable_result()->set_mean_cost(1e-3);
  return r;
}

class JobDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override { d_.OpenLease("L", {{"a1", "fa"}, {"a2", "fb"}}); }
  JobDispatcher d_;
};

TEST_F(JobDispatcherTest, GivenABatchOnTwoAgents_WeShouldRunOneJobPerAgentAndRefillOnResult) {
  DispatchActions out;
  auto batch = d_.Submit("L", Jobs({1, 2, 3}), &out);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(out.assignments.size(), 2u);
  EXPECT_EQ(out.assignments[0].agent_id, "a1");
  EXPECT_EQ(out.assignments[0].job.job_id(), 1u);
  EXPECT_EQ(out.assignments[0].job.program().output_buffer(), "c");
  EXPECT_EQ(out.assignments[1].job.job_id(), 2u);
  EXPECT_EQ(d_.queued("L"), 1u);

  auto next = d_.OnResult("a2", Ok(2));
  ASSERT_EQ(next.events.size(), 1u);
  EXPECT_EQ(next.events[0].event.job_id(), 2u);
  EXPECT_EQ(next.events[0].event.device_fingerprint(), "fb");
  EXPECT_FALSE(next.events[0].event.device_lost());
  ASSERT_EQ(next.assignments.size(), 1u);
  EXPECT_EQ(next.assignments[0].agent_id, "a2");
  EXPECT_EQ(next.assignments[0].job.job_id(), 3u);
}

TEST_F(JobDispatcherTest, GivenAnAgentLostMidJob_WeShouldEndItsJobAsDeviceLostAndKeepGoingOnTheOther) {
  DispatchActions out;
  ASSERT_TRUE(d_.Submit("L", Jobs({1, 2, 3}), &out).ok());
  auto lost = d_.OnAgentLost("a1", "stream ended");
  ASSERT_EQ(lost.events.size(), 1u);
  EXPECT_EQ(lost.events[0].event.job_id(), 1u);
  EXPECT_TRUE(lost.events[0].event.device_lost());
  EXPECT_EQ(lost.events[0].event.message(), "stream ended");
  auto r = d_.OnResult("a2", Ok(2));
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job.job_id(), 3u);
}

proto::JobResult GivenBack(uint64_t job_id) {
  proto::JobResult back;
  back.set_job_id(job_id);
  back.mutable_result()->set_status(proto::RUNTIME_ERROR);
  back.mutable_result()->set_message("the device stayed locked by another agent for 300 s");
  back.mutable_result()->set_not_measured(true);
  return back;
}

TEST_F(JobDispatcherTest, GivenAJobTheAgentGaveBackNotMeasured_WeShouldEndItAsDeviceLostAndGiveTheRestToTheOthers) {
  DispatchActions out;
  ASSERT_TRUE(d_.Submit("L", Jobs({1, 2, 3, 4}), &out).ok());
  auto r = d_.OnResult("a1", GivenBack(1));
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].event.job_id(), 1u);
  EXPECT_TRUE(r.events[0].event.device_lost());
  EXPECT_FALSE(r.events[0].event.has_result());  // never passed on as a result
  EXPECT_EQ(r.events[0].event.message(), "the device stayed locked by another agent for 300 s");
  EXPECT_EQ(r.events[0].event.device_fingerprint(), "fa");
  EXPECT_TRUE(r.assignments.empty());  // a1 takes no more jobs of this lease
  // a2 measures the rest, the job given back too when it comes again.
  auto r2 = d_.OnResult("a2", Ok(2));
  ASSERT_EQ(r2.assignments.size(), 1u);
  EXPECT_EQ(r2.assignments[0].agent_id, "a2");
  EXPECT_EQ(r2.assignments[0].job.job_id(), 3u);
  DispatchActions again;
  ASSERT_TRUE(d_.Submit("L", Jobs({5}), &again).ok());
  EXPECT_TRUE(again.assignments.empty());  // a2 is busy; a1 is not asked
  EXPECT_EQ(d_.queued("L"), 2u);
  // Once a2 gives one back too, no agent takes jobs: the queued ones end as device_lost at once.
  auto r3 = d_.OnResult("a2", GivenBack(3));
  EXPECT_TRUE(r3.assignments.empty());
  ASSERT_EQ(r3.events.size(), 3u);
  for (const auto& e : r3.events) EXPECT_TRUE(e.event.device_lost());
  EXPECT_EQ(d_.queued("L"), 0u);
  DispatchActions none;
  ASSERT_TRUE(d_.Submit("L", Jobs({6}), &none).ok());
  ASSERT_EQ(none.events.size(), 1u);
  EXPECT_TRUE(none.events[0].event.device_lost());
  // A new lease of the same agents gives them jobs again.
  d_.OpenLease("M", {{"a1", "fa"}});
  DispatchActions fresh;
  ASSERT_TRUE(d_.Submit("M", Jobs({7}), &fresh).ok());
  ASSERT_EQ(fresh.assignments.size(), 1u);
  EXPECT_EQ(fresh.assignments[0].agent_id, "a1");
}

TEST_F(JobDispatcherTest, GivenTheLastAgentLost_WeShouldEndTheQueuedJobsAsDeviceLost) {
  DispatchActions out;
  ASSERT_TRUE(d_.Submit("L", Jobs({1, 2, 3, 4}), &out).ok());
  EXPECT_EQ(d_.OnAgentLost("a1", "gone").events.size(), 1u);
  auto last = d_.OnAgentLost("a2", "gone");
  EXPECT_EQ(last.events.size(), 3u);  // job 2 running + jobs 3, 4 queued
  for (const auto& e : last.events) EXPECT_TRUE(e.event.device_lost());
}

TEST_F(JobDispatcherTest, GivenARepeatedJobId_WeShouldRejectTheBatch) {
  DispatchActions out;
  auto batch = d_.Submit("L", Jobs({7, 7}), &out);
  EXPECT_EQ(batch.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(out.assignments.empty());
}

TEST_F(JobDispatcherTest, GivenACancelledBatch_WeShouldDropItsQueueAndIgnoreLateResults) {
  DispatchActions out;
  auto batch = d_.Submit("L", Jobs({1, 2, 3}), &out);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(out.assignments.size(), 2u);  // jobs 1 and 2 run on the lease's two agents, job 3 waits
  const DispatchActions cancelled = d_.CancelBatch(*batch);
  EXPECT_EQ(cancelled.cancels, (std::vector<JobCancel>{{"a1", 1}, {"a2", 2}}));
  EXPECT_EQ(d_.queued("L"), 0u);
  auto late = d_.OnResult("a1", Ok(1));
  EXPECT_TRUE(late.events.empty());
  EXPECT_TRUE(late.assignments.empty());
}

proto::JobResult Stopped(uint64_t job_id) {
  proto::JobResult r;
  r.set_job_id(job_id);
  r.mutable_result()->set_status(proto::RUN_TIMEOUT);
  r.mutable_result()->set_message("cancelled: the tuner abandoned the job");
  r.mutable_result()->set_not_measured(true);
  return r;
}

// An agent answers a cancel unmeasured; that is not a job given back (a locked device), so the agent keeps taking
// the lease's jobs (found by the fleet review: a cancel was counted as a run timeout).
TEST_F(JobDispatcherTest, GivenACancelledJobAnsweredNotMeasured_WeShouldDropItAndGiveTheAgentTheNextJob) {
  DispatchActions out;
  auto batch = d_.Submit("L", Jobs({1, 2}), &out);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(d_.CancelBatch(*batch).cancels.size(), 2u);
  DispatchActions next;
  ASSERT_TRUE(d_.Submit("L", Jobs({3}), &next).ok());
  EXPECT_TRUE(next.assignments.empty());  // both agents still stop their cancelled jobs
  auto r = d_.OnResult("a1", Stopped(1));
  EXPECT_TRUE(r.events.empty());
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].agent_id, "a1");
  EXPECT_EQ(r.assignments[0].job.job_id(), 3u);
}

TEST_F(JobDispatcherTest, GivenALeaseClosedMidJobAnsweredNotMeasured_TheAgentShouldTakeItsNextLeasesJobs) {
  DispatchActions out;
  ASSERT_TRUE(d_.Submit("L", Jobs({1, 2}), &out).ok());
  (void)d_.CloseLease("L", "lease released");
  d_.OpenLease("M", {{"a1", "fa"}});
  DispatchActions queued;
  ASSERT_TRUE(d_.Submit("M", Jobs({10, 11}), &queued).ok());
  auto r = d_.OnResult("a1", Stopped(1));
  EXPECT_TRUE(r.events.empty());
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job.job_id(), 10u);
  auto r2 = d_.OnResult("a1", Ok(10));
  ASSERT_EQ(r2.assignments.size(), 1u);  // not marked as one that gave a job back
  EXPECT_EQ(r2.assignments[0].job.job_id(), 11u);
}

TEST_F(JobDispatcherTest, GivenAClosedLease_WeShouldEndUnfinishedJobsAndKeepTheBusyAgentBusy) {
  DispatchActions out;
  ASSERT_TRUE(d_.Submit("L", Jobs({1, 2, 3}), &out).ok());
  auto closed = d_.CloseLease("L", "lease released");
  EXPECT_EQ(closed.events.size(), 3u);
  EXPECT_EQ(closed.cancels, (std::vector<JobCancel>{{"a1", 1}, {"a2", 2}}));  // the two running jobs
  d_.OpenLease("M", {{"a1", "fa"}});
  DispatchActions out2;
  ASSERT_TRUE(d_.Submit("M", Jobs({10}), &out2).ok());
  EXPECT_TRUE(out2.assignments.empty());  // a1 still runs job 1 of the old lease
  auto r = d_.OnResult("a1", Ok(1));
  EXPECT_TRUE(r.events.empty());
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job.job_id(), 10u);
}

}  // namespace
}  // namespace tunefleet::tracker
