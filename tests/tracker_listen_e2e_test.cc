// Where the tracker listens: one plain line when it cannot, and an IPv6 address as readily as an IPv4 one; a port
// that stopped accepting ends the tracker.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/owned_fd.h"
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
  const TempDir dir("tracker-v6", KeepOnFailure::kYes);
  Subprocess tracker({BinDir() + "/tunefleet-tracker", "--host", "::1", "--port", std::to_string(port)},
                     dir.path() + "/tracker.log");
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

// A tracker on 127.0.0.1 with `options`, that may open 64 files, its log in `dir` (which must outlive it).
std::unique_ptr<Subprocess> TrackerWithFileLimit64(const std::string& options, const TempDir& dir) {
  return std::make_unique<Subprocess>(
      std::vector<std::string>{"/bin/sh", "-c", "ulimit -n 64 && exec \"$0\" --host 127.0.0.1 " + options,
                               BinDir() + "/tunefleet-tracker"},
      dir.path() + "/tracker.log");
}

// Whether `line` is in the tracker's log within 10 s.
bool WaitForLine(Subprocess& tracker, const std::string& line) {
  for (int i = 0; i < 100 && tracker.Log().find(line) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return tracker.Log().find(line) != std::string::npos;
}

// Opens `count` TCP connections to 127.0.0.1:`port` into `into` (held open by the caller).
void ConnectTo(int port, int count, std::vector<OwnedFd>& into) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < count; ++i) {
    OwnedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address), 0) << i;
    into.push_back(std::move(fd));
  }
}

// The system's gRPC stops accepting on its port for good after an accept fails (a burst of connections past the file
// limit): every later agent and tuner waited unanswered while the process lived on. The tracker now stops with an
// error line and exit 1, so that a service manager starts it again.
TEST(TrackerListenE2E, GivenMoreConnectionsThanItsFileLimitTheTrackerShouldStopSayingWhy) {
  const int port = FreeLoopbackPort();
  const TempDir dir("tracker-fds", KeepOnFailure::kYes);
  auto tracker = TrackerWithFileLimit64("--port " + std::to_string(port), dir);
  ASSERT_TRUE(WaitForLine(*tracker, "listening on")) << tracker->Log();
  std::vector<OwnedFd> connections;  // held until the tracker has stopped
  ASSERT_NO_FATAL_FAILURE(ConnectTo(port, 128, connections));
  const std::optional<int> exit_code = tracker->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.has_value()) << "the tracker lived on without accepting: " << tracker->Log();
  EXPECT_EQ(*exit_code, 1) << tracker->Log();
  EXPECT_NE(tracker->Log().find("[error] the gRPC port accepts no more connections (Failed accept4: Too many open "
                                "files; gRPC does not take up accepting again after that): stopping, exit 1"),
            std::string::npos)
      << tracker->Log();
  EXPECT_NE(tracker->Log().find("this process may open 64 files"), std::string::npos) << tracker->Log();
}

// Idle connections to the status page took the descriptors gRPC needed (its cap was 64 whatever the file limit),
// so its port stopped accepting and the tracker stopped. The page now serves at most a quarter of the limit.
TEST(TrackerListenE2E, GivenManyIdleStatusPageConnectionsTheTrackerShouldStillAnswer) {
  const int port = FreeLoopbackPort();
  const int http_port = FreeLoopbackPort();
  const TempDir dir("tracker-http-fds", KeepOnFailure::kYes);
  auto tracker =
      TrackerWithFileLimit64("--port " + std::to_string(port) + " --http-port " + std::to_string(http_port), dir);
  ASSERT_TRUE(WaitForLine(*tracker, "status page on")) << tracker->Log();
  std::vector<OwnedFd> idle;  // held open while the tracker is asked
  ASSERT_NO_FATAL_FAILURE(ConnectTo(http_port, 100, idle));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the page accepts (and turns away) what it can
  RunResult q = testing::Run({BinDir() + "/tunefleet", "query", "--rpc-tracker", "127.0.0.1:" + std::to_string(port),
                              "--timeout", "5"},
                             std::chrono::seconds(20));
  EXPECT_EQ(q.exit_code, 0) << q.output << tracker->Log();
  EXPECT_TRUE(tracker->running()) << tracker->Log();
  EXPECT_EQ(tracker->Log().find("accepts no more connections"), std::string::npos) << tracker->Log();
}

}  // namespace
}  // namespace tunefleet::testing
