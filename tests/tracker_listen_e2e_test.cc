// Where the tracker listens: one plain line when it cannot, and an IPv6 address as readily as an IPv4 one.
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

TEST(TrackerListenE2E, GivenAPortInUseOrAnAddressNotOfThisMachineTheTrackerShouldSayWhichInOneLine) {
  LocalFleet fleet;
  fleet.StartTracker();  // holds 127.0.0.1:port
  const std::string tracker = BinDir() + "/tunefleet-tracker";
  const std::string port = std::to_string(fleet.port());
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
  for (const auto& [host, says] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1", "cannot listen on 127.0.0.1:" + port + ": Address already in use"},
           {"192.0.2.1", "cannot listen on 192.0.2.1:" + port + ": Cannot assign requested address"}}) {
    RunResult r = testing::Run({tracker, "--host", host, "--port", port}, std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;  // nothing of gRPC's own logging
  }
}

TEST(TrackerListenE2E, GivenAStatusPortInUseTheTrackerShouldFailInOneLineWithoutSayingItListens) {
  LocalFleet fleet;
  fleet.StartTracker();  // holds 127.0.0.1:port
  const std::string port = std::to_string(fleet.port());
  RunResult r = testing::Run(
      {BinDir() + "/tunefleet-tracker", "--host", "127.0.0.1", "--port", "0", "--http-port", port},
      std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(port), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("listening on"), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

// The gRPC port as the status port is a conflict of options, said before either is bound (it was "cannot listen for
// HTTP ...: Address already in use", exit 1, the tracker in its own way).
TEST(TrackerListenE2E, GivenTheSamePortForGrpcAndHttpTheTrackerShouldRefuseTheOptionsInOneLine) {
  const std::string port = std::to_string(FreeLoopbackPort());
  RunResult r = testing::Run(
      {BinDir() + "/tunefleet-tracker", "--host", "127.0.0.1", "--port", port, "--http-port", port},
      std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "tunefleet-tracker: error: --port and --http-port are both " + port +
                          ": the status page needs a port of its own\n");
}

// Stdout alone (`stdout`) or stderr alone of the tracker run with `args`, the other stream dropped.
RunResult RunTracker(const std::vector<std::string>& args, bool stdout_only) {
  std::vector<std::string> argv = {"/bin/sh", "-c", stdout_only ? "exec \"$0\" \"$@\" 2>/dev/null"
                                                                : "exec \"$0\" \"$@\" >/dev/null",
                                   BinDir() + "/tunefleet-tracker"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::Run(argv, std::chrono::seconds(30));
}

// A start that fails says so on stderr in the line every tool says an error in, not as a log line on stdout.
TEST(TrackerListenE2E, GivenAStartThatFailsTheTrackerShouldSayWhyOnStderrInOneErrorLine) {
  LocalFleet fleet;
  fleet.StartTracker();  // holds 127.0.0.1:port
  const std::string port = std::to_string(fleet.port());
  const std::string junk = fleet.dir() + "/junk.pem";
  { std::ofstream(junk) << "not a PEM file\n"; }
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string line;
  };
  for (const Case& c : std::vector<Case>{
           {{"--host", "not a host", "--port", "0"}, 2,
            "tunefleet-tracker: error: cannot listen on not a host:0: --host not a host is no address or known name\n"},
           {{"--host", "127.0.0.1", "--port", "0", "--tls-cert", junk, "--tls-key", junk}, 2,
            "tunefleet-tracker: error: TLS certificate '" + junk + "': no PEM certificate in it\n"},
           {{"--host", "127.0.0.1", "--port", port}, 1,
            "tunefleet-tracker: error: cannot listen on 127.0.0.1:" + port + ": Address already in use\n"}}) {
    RunResult err = RunTracker(c.args, /*stdout_only=*/false);
    EXPECT_EQ(err.exit_code, c.exit_code) << err.output;
    EXPECT_EQ(err.output, c.line);
    RunResult out = RunTracker(c.args, /*stdout_only=*/true);
    EXPECT_EQ(out.exit_code, c.exit_code) << out.output;
    EXPECT_EQ(out.output, "");
  }
}

TEST(TrackerListenE2E, GivenAnIPv6HostTheTrackerShouldListenThereAndAnswerQueries) {
  const int port = FreeLoopbackPort();
  Subprocess tracker({BinDir() + "/tunefleet-tracker", "--host", "::1", "--port", std::to_string(port)},
                     MakeTempDir("tracker-v6") + "/tracker.log");
  const std::string address = "[::1]:" + std::to_string(port);
  RunResult q;
  for (int i = 0; i < 50; ++i) {  // up to 5 s for it to start
    q = testing::Run({BinDir() + "/tunefleet", "query", "--rpc-tracker", address, "--timeout", "1"},
                     std::chrono::seconds(10));
    if (q.exit_code == 0 || !tracker.running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!tracker.running() && tracker.Log().find("Cannot assign requested address") != std::string::npos)
    GTEST_SKIP() << "this machine has no IPv6 loopback: " << tracker.Log();
  ASSERT_EQ(q.exit_code, 0) << q.output << tracker.Log();
  EXPECT_NE(q.output.find("no agents registered"), std::string::npos) << q.output;
  EXPECT_NE(tracker.Log().find("listening on " + address), std::string::npos) << tracker.Log();
}

}  // namespace
}  // namespace tunefleet::testing
