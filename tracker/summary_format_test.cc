#include "tracker/summary_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tunefleet {
namespace {

proto::SummaryReply OneLeasedAgent() {
  proto::SummaryReply s;
  s.set_tracker_version("0.1.0");
  auto* a = s.add_agents();
  a->set_agent_id("agent-1");
  a->set_key("pocl");
  a->mutable_device()->set_name("cpu-haswell");
  a->set_state("leased");
  a->set_lease_holder("alice@lab");
  a->set_jobs_done(3);
  a->set_last_seen_age(1.25);
  auto* k = s.add_keys();
  k->set_key("pocl");
  k->set_leased(1);
  k->set_waiting(2);
  return s;
}

TEST(SummaryFormatTest, GivenALeasedAgent_TheTableShouldShowItsHolderAndTheKeyQueue) {
  const std::string t = SummaryAsTable(OneLeasedAgent());
  EXPECT_NE(t.find("AGENT    KEY   DEVICE       STATE   LEASE HOLDER  JOBS DONE  LAST SEEN\n"), std::string::npos) << t;
  EXPECT_NE(t.find("agent-1  pocl  cpu-haswell  leased  alice@lab     3          1.2 s ago\n"), std::string::npos) << t;
  EXPECT_NE(t.find("KEY   FREE  LEASED  WAITING\npocl  0     1       2\n"), std::string::npos) << t;
}

// Who waits for a key, in the order they will be served: shown only when someone waits.
TEST(SummaryFormatTest, GivenWaitingRequests_TheTableAndJsonShouldListTheQueueInOrder) {
  proto::SummaryReply s = OneLeasedAgent();
  EXPECT_EQ(SummaryAsTable(s).find("WAITING CLIENT"), std::string::npos);
  auto* first = s.mutable_keys(0)->add_queue();
  first->set_client("tunefleet tune pid 7@lab");
  first->set_priority(5);
  first->set_count(1);
  first->set_min_count(1);
  first->set_waited_s(12.34);
  auto* second = s.mutable_keys(0)->add_queue();
  second->set_client("bob\x1b[2J");
  second->set_count(4);
  second->set_min_count(2);
  second->set_waited_s(3);
  const std::string t = SummaryAsTable(s);
  EXPECT_NE(t.find("KEY   PLACE  WAITING CLIENT            PRIORITY  DEVICES  WAITED\n"
                   "pocl  1      tunefleet tune pid 7@lab  5         1        12.3 s\n"
                   "pocl  2      bob\\x1b[2J                0         2 to 4   3.0 s\n"),
            std::string::npos)
      << t;
  const auto j = nlohmann::json::parse(SummaryAsJson(s));
  ASSERT_EQ(j["keys"][0]["queue"].size(), 2u);
  EXPECT_EQ(j["keys"][0]["queue"][0]["client"], "tunefleet tune pid 7@lab");
  EXPECT_EQ(j["keys"][0]["queue"][1]["min_count"], 2);
  EXPECT_EQ(j["keys"][0]["queue"][1]["count"], 4);
  EXPECT_EQ(j["keys"][0]["queue"][0]["priority"], 5);
}

// An agent names its own device: a newline or an escape sequence in it must not reach the terminal.
TEST(SummaryFormatTest, GivenADeviceNameWithControlCharacters_TheTableShouldShowThemEscaped) {
  proto::SummaryReply s = OneLeasedAgent();
  s.mutable_agents(0)->mutable_device()->set_name("gpu\x1b[2J\nagent-9  pocl  fake");
  const std::string t = SummaryAsTable(s);
  EXPECT_NE(t.find("gpu\\x1b[2J\\x0aagent-9  pocl  fake"), std::string::npos) << t;
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << t;
}

TEST(SummaryFormatTest, GivenNoAgents_TheTableShouldSaySo) {
  EXPECT_NE(SummaryAsTable(proto::SummaryReply()).find("no agents registered"), std::string::npos);
}

TEST(SummaryFormatTest, GivenALeasedAgent_TheJsonShouldCarryEveryColumn) {
  const auto j = nlohmann::json::parse(SummaryAsJson(OneLeasedAgent()));
  EXPECT_EQ(j["agents"][0]["lease_holder"], "alice@lab");
  EXPECT_EQ(j["agents"][0]["jobs_done"], 3);
  EXPECT_EQ(j["agents"][0]["device"], "cpu-haswell");
  EXPECT_EQ(j["keys"][0]["waiting"], 2);
  EXPECT_EQ(j["tracker_version"], "0.1.0");
}

}  // namespace
}  // namespace tunefleet
