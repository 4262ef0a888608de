// TLS end to end: with the tracker's certificate as their root, an agent and the tuner tune through a TLS tracker;
// a TLS setting that does not match the tracker's: the tuner says why in its one error line, and the daemons show
// gRPC's own lines (the handshake failure) in their log's format, never in gRPC's.
#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/tls_testing.h"
#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

// A line in gRPC's own format: severity letter, MMDD, time ("E1201 12:57:21.304002472 ...").
bool HasGrpcOwnLine(const std::string& log) {
  static const std::regex own("(^|\n)[EIDW][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}");
  return std::regex_search(log, own);
}

TEST(TlsE2E, GivenATlsTrackerAnAgentAndATuneWithItsCertificateShouldTune) {
  LocalFleet fleet;
  if (!MakeSelfSignedCertificate(fleet.dir())) GTEST_SKIP() << "openssl tool not available";
  const std::string ca = fleet.dir() + "/cert.pem";
  fleet.StartTracker({"--tls-cert", ca, "--tls-key", fleet.dir() + "/key.pem"});
  const size_t a = fleet.StartAgent("tls", {"--tls-ca", ca});
  ASSERT_TRUE(fleet.WaitForAgents("tls", 1)) << fleet.agent(a).Log();
  RunResult r = fleet.Cli({"tune", "--rpc-key", "tls", "--tls-ca", ca, "--task", "gemm:32,32,32", "--trials", "4",
                           "--tuner", "random", "--db", fleet.db(), "--number", "1", "--repeat", "1", "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records"), 4);
  RunResult m = fleet.Cli({"measure", "--rpc-key", "tls", "--tls-ca", ca, "--task", "gemm:32,32,32"});
  EXPECT_EQ(m.exit_code, 0) << m.output;
  // Without the root, the same run is refused at the handshake, with the hint.
  RunResult plain = fleet.Cli({"tune", "--rpc-key", "tls", "--task", "gemm:32,32,32", "--trials", "4", "--db",
                               fleet.db(), "--wait", "1"});
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_NE(plain.output.find("if the tracker uses TLS, give --tls-ca"), std::string::npos) << plain.output;
}

TEST(TlsMismatchE2E, GivenATlsClientAndAPlainTrackerTheTunerShouldSayWhyInOneLineAndTheAgentInItsOwnLog) {
  LocalFleet fleet;
  if (!MakeSelfSignedCertificate(fleet.dir())) GTEST_SKIP() << "openssl tool not available";
  fleet.StartTracker();
  const std::string ca = fleet.dir() + "/cert.pem";

  // The refused handshake ends the query: it does not wait out its --timeout.
  RunResult q = fleet.Cli({"query", "--tls-ca", ca, "--timeout", "600"}, std::chrono::seconds(30));
  EXPECT_EQ(q.exit_code, 1) << q.output;
  EXPECT_NE(q.output.find("cannot reach tracker at " + fleet.address() + ": the connection failed ("),
            std::string::npos)
      << q.output;
  EXPECT_NE(q.output.find("Ssl handshake failed"), std::string::npos) << q.output;
  const std::string hint = "the tracker does not use TLS: drop --tls-ca, or start the tracker with --tls-cert and "
                           "--tls-key";
  EXPECT_NE(q.output.find("wrong version number; " + hint + ")"), std::string::npos) << q.output;
  EXPECT_EQ(CountLines(q.output), 1) << q.output;

  const size_t a = fleet.StartAgent("tls-mismatch", {"--tls-ca", ca});
  std::string log;
  for (int i = 0; i < 100 && log.find("reconnecting in") == std::string::npos; ++i) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log = fleet.agent(a).Log();
  }
  EXPECT_NE(log.find("[tunefleet-agent] [error] grpc: Handshake failed"), std::string::npos) << log;
  EXPECT_NE(log.find("wrong version number (" + hint + "); reconnecting in"), std::string::npos) << log;
  EXPECT_FALSE(HasGrpcOwnLine(log)) << log;
}

TEST(TlsMismatchE2E, GivenAPlainClientAndATlsTrackerTheClientsShouldHintAtTlsAndTheTrackerLogTheHandshake) {
  LocalFleet fleet;
  if (!MakeSelfSignedCertificate(fleet.dir())) GTEST_SKIP() << "openssl tool not available";
  fleet.StartTracker({"--tls-cert", fleet.dir() + "/cert.pem", "--tls-key", fleet.dir() + "/key.pem"});

  RunResult q = fleet.Cli({"query", "--timeout", "1"}, std::chrono::seconds(30));
  EXPECT_EQ(q.exit_code, 1) << q.output;
  EXPECT_NE(q.output.find("cannot reach tracker at " + fleet.address()), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("Socket closed; if the tracker uses TLS, give --tls-ca"), std::string::npos) << q.output;
  EXPECT_EQ(CountLines(q.output), 1) << q.output;
  const size_t a = fleet.StartAgent("plain");  // the agent's reconnect line gives the same hint
  std::string agent_log;
  for (int i = 0; i < 100 && agent_log.find("give --tls-ca") == std::string::npos; ++i) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    agent_log = fleet.agent(a).Log();
  }
  EXPECT_NE(agent_log.find("Socket closed (if the tracker uses TLS, give --tls-ca); reconnecting in"),
            std::string::npos)
      << agent_log;

  std::string log;
  for (int i = 0; i < 100 && log.find("grpc: Handshake failed") == std::string::npos; ++i) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log = fleet.tracker().Log();
  }
  EXPECT_NE(log.find("[error] grpc: Handshake failed"), std::string::npos) << log;
  EXPECT_FALSE(HasGrpcOwnLine(log)) << log;
}

}  // namespace
}  // namespace tunefleet::testing
