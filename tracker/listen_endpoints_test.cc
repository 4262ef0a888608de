#include "tracker/listen_endpoints.h"

#include <gtest/gtest.h>

namespace tunefleet::tracker {
namespace {

// The wildcard is checked here, not by listening on it: tests listen on loopback only. gRPC takes 0.0.0.0 as every
// interface of both families; the status port was IPv4 only (curl http://[::1]:P/metrics was refused).
TEST(ListenEndpointsTest, GivenAWildcard_WeShouldListenDualStackWithIpv4AsTheFallback) {
  for (const std::string host : {"0.0.0.0", "::", "[::]"}) {
    auto got = ListenEndpoints(host, 9191);
    ASSERT_TRUE(got.ok()) << host << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 2u) << host;
    EXPECT_TRUE((*got)[0].endpoint.address().is_v6()) << host;
    EXPECT_TRUE((*got)[0].endpoint.address().is_unspecified()) << host;
    EXPECT_TRUE((*got)[0].dual_stack) << host;
    EXPECT_TRUE((*got)[1].endpoint.address().is_v4()) << host;
    EXPECT_TRUE((*got)[1].endpoint.address().is_unspecified()) << host;
    EXPECT_FALSE((*got)[1].dual_stack) << host;
    for (const auto& e : *got) EXPECT_EQ(e.endpoint.port(), 9191) << host;
  }
}

TEST(ListenEndpointsTest, GivenAnAddress_WeShouldListenThereOnly) {
  for (const auto& [host, bare] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1", "127.0.0.1"}, {"[::1]", "::1"}, {"::1", "::1"}, {"192.0.2.7", "192.0.2.7"}}) {
    auto got = ListenEndpoints(host, 80);
    ASSERT_TRUE(got.ok()) << host << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 1u) << host;
    EXPECT_EQ((*got)[0].endpoint.address().to_string(), bare) << host;
    EXPECT_FALSE((*got)[0].dual_stack) << host;
  }
}

TEST(ListenEndpointsTest, GivenAName_WeShouldListenWhereItResolvesTo) {
  auto got = ListenEndpoints("localhost", 80);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_FALSE(got->empty());
  for (const auto& e : *got) {
    EXPECT_TRUE(e.endpoint.address().is_loopback()) << e.endpoint.address().to_string();
    EXPECT_FALSE(e.dual_stack);
  }
  auto unknown = ListenEndpoints("no-such-host.invalid", 80);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'no-such-host.invalid' is no address or known name"), std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace tunefleet::tracker
