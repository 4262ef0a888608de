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

// An agent stopped on purpose and started again is a new start, not a reconnect (the fleet review found one
// reported as "reconnecting, previously agent-1" after it had left).
TEST(AgentRegistryTest, GivenTheSameDeviceBackAfterItLeft_WeShouldNotCallItAReconnect) {
  AgentRegistry reg;
  const TimePoint t0 = Clock::now();
  auto lost = reg.Register(Reg("phone", "f1"), "p", t0);
  auto left = reg.Register(Reg("phone", "f1"), "p", t0);
  EXPECT_TRUE(reg.Remove(left.agent_id, /*left=*/true));
  EXPECT_EQ(reg.Find(left.agent_id), nullptr);
  EXPECT_TRUE(reg.Remove(lost.agent_id));
  EXPECT_EQ(reg.Register(Reg("phone", "f1"), "p", t0).previous_agent_id, lost.agent_id);
  EXPECT_TRUE(reg.Register(Reg("phone", "f1"), "p", t0).previous_agent_id.empty());
}

// The ids of agents gone are a hint for a log line; agents that never come back must not grow them without bound.
TEST(AgentRegistryTest, GivenManyAgentsGoneForGood_WeShouldRememberABoundedNumber) {
  AgentRegistry reg;
  const TimePoint t0 = Clock::now();
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(reg.Register(Reg("phone", "f1"), "p", t0).agent_id);
  for (const std::string& id : ids) ASSERT_TRUE(reg.Remove(id));
  for (int i = 4; i < 20; ++i) EXPECT_EQ(reg.Register(Reg("phone", "f1"), "p", t0).previous_agent_id, ids[i]);
  EXPECT_TRUE(reg.Register(Reg("phone", "f1"), "p", t0).previous_agent_id.empty());  // the oldest 4 forgotten

  auto device = [](int i) { return Reg("k", "d" + std::to_string(i)); };
  for (int i = 0; i < 1100; ++i) ASSERT_TRUE(reg.Remove(reg.Register(device(i), "p", t0).agent_id));
  int remembered = 0;
  for (int i = 0; i < 1100; ++i) remembered += !reg.Register(device(i), "p", t0).previous_agent_id.empty();
  EXPECT_EQ(remembered, 1024);
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
