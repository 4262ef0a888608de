#include "tracker/agent_registry.h"

#include <gtest/gtest.h>

namespace tunefleet::tracker {
namespace {

proto::RegisterAgent Reg(const std::string& key, const std::string& fingerprint) {
  proto::RegisterAgent r;
  r.set_key(key);
  r.mutable_device()->set_name("pocl-cpu");
  r.mutable_device()->set_fingerprint(fingerprint);
  return r;
}

TimePoint At(TimePoint t0, double s) { return t0 + std::chrono::duration_cast<Clock::duration>(Seconds(s)); }

TEST(AgentRegistryTest, GivenTwoRegistrations_WeShouldAssignDistinctIds) {
  AgentRegistry reg;
  const TimePoint t0 = Clock::now();
  auto a = reg.Register(Reg("phone", "f1"), "ipv4:127.0.0.1:1", t0);
  auto b = reg.Register(Reg("phone", "f1"), "ipv4:127.0.0.1:2", t0);
  EXPECT_NE(a.agent_id, b.agent_id);
  EXPECT_TRUE(a.previous_agent_id.empty());
  EXPECT_TRUE(b.previous_agent_id.empty());  // two identical phones, both present: not a reconnect
  EXPECT_EQ(reg.agents().size(), 2u);
  EXPECT_EQ(reg.Find(a.agent_id)->peer, "ipv4:127.0.0.1:1");
}

TEST(AgentRegistryTest, GivenTheSameDeviceComingBack_WeShouldRecogniseTheReconnect) {
  AgentRegistry reg;
  const TimePoint t0 = Clock::now();
  auto a = reg.Register(Reg("phone", "f1"), "p", t0);
  EXPECT_TRUE(reg.Remove(a.agent_id));
  EXPECT_FALSE(reg.Remove(a.agent_id));
  auto other_key = reg.Register(Reg("gpu", "f1"), "p", t0);
  EXPECT_TRUE(other_key.previous_agent_id.empty());
  auto back = reg.Register(Reg("phone", "f1"), "p", t0);
  EXPECT_EQ(back.previous_agent_id, a.agent_id);
}

TEST(AgentRegistryTest, GivenSilence_WeShouldReportTheAgentStaleAfterTheTimeout) {
  AgentRegistry reg;
  const TimePoint t0 = Clock::now();
  auto a = reg.Register(Reg("phone", "f1"), "p", t0);
  auto b = reg.Register(Reg("phone", "f2"), "p", t0);
  reg.Touch(b.agent_id, At(t0, 10));
  EXPECT_TRUE(reg.Stale(At(t0, 15), Seconds(15)).empty());
  EXPECT_EQ(reg.Stale(At(t0, 16), Seconds(15)), std::vector<std::string>{a.agent_id});
  reg.CountJob(b.agent_id);
  EXPECT_EQ(reg.Find(b.agent_id)->jobs_done, 1u);
}

}  // namespace
}  // namespace tunefleet::tracker
