#include "tracker/http_status.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>

#include "tracker/server.h"
#include "tracker/test_agent.h"

namespace tunefleet::tracker {
namespace {

proto::SummaryReply TwoAgents() {
  proto::SummaryReply s;
  s.set_tracker_version("0.1.0");
  auto* a = s.add_agents();
  a->set_agent_id("agent-1");
  a->set_key("phone");
  a->mutable_device()->set_name("Adreno <640>");
  a->set_state("busy");
  a->set_jobs_done(12);
  auto* b = s.add_agents();
  b->set_agent_id("agent-2");
  b->set_key("phone");
  b->set_state("free");
  auto* k = s.add_keys();
  k->set_key("phone");
  k->set_free(1);
  k->set_leased(1);
  k->set_waiting(3);
  return s;
}

TEST(HttpStatusTest, GivenASummary_TheMetricsShouldCountAgentsPerKeyAndStateAndTheQueue) {
  const std::string m = RenderMetrics(TwoAgents(), 40);
  EXPECT_NE(m.find("tunefleet_agents{key=\"phone\",state=\"busy\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_agents{key=\"phone\",state=\"free\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_leased_agents{key=\"phone\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_waiting_acquires{key=\"phone\"} 3\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_agent_jobs_done{agent=\"agent-1\",key=\"phone\"} 12\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_jobs_done_total 40\n"), std::string::npos);
}

TEST(HttpStatusTest, GivenADeviceNameWithMarkup_ThePageShouldEscapeIt) {
  const std::string page = RenderStatusPage(TwoAgents());
  EXPECT_NE(page.find("Adreno &lt;640&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<640>"), std::string::npos);
  EXPECT_NE(page.find("<td>agent-2</td>"), std::string::npos);
}

std::string Get(int port, const std::string& path) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  boost::asio::write(sock, boost::asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  boost::asio::read(sock, boost::asio::dynamic_buffer(out), ec);  // until the server closes
  return out;
}

TEST(HttpStatusTest, GivenARunningTrackerWithHttpPort_WeShouldServeThePageAndMetrics) {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.http_port = 0;
  auto server = TrackerServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  TestAgent agent("127.0.0.1:" + std::to_string((*server)->port()), "pocl", "", TestAgent::Mode::kAnswer);
  ASSERT_FALSE(agent.WaitRegistered().empty());
  const int http = (*server)->http_port();
  ASSERT_GT(http, 0);
  const std::string page = Get(http, "/");
  EXPECT_EQ(page.rfind("HTTP/1.0 200 OK", 0), 0u) << page;
  EXPECT_NE(page.find("test-device-pocl"), std::string::npos);
  const std::string metrics = Get(http, "/metrics");
  EXPECT_NE(metrics.find("tunefleet_agents{key=\"pocl\",state=\"free\"} 1"), std::string::npos) << metrics;
  EXPECT_EQ(Get(http, "/nope").rfind("HTTP/1.0 404", 0), 0u);
}

}  // namespace
}  // namespace tunefleet::tracker
