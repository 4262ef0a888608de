// The tunefleet-agent binary as a real process: flags, startup errors, the reconnect loop and signals. With the real
// tracker (registration, a wrong token, a measured job, SIGINT after it) it is tested in tests/fault_e2e_test.cc.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/cl_api.h"
#include "agent/device_info.h"
#include "agent/kernel_disk_cache.h"

extern char** environ;

namespace tunefleet::agent {
namespace {

// Runs the agent with `args`; returns its exit status and everything it printed.
// Runs the agent with `args`; `output` gets what the shell's `redirects` send to the pipe (its stdout).
int RunAgent(const std::string& args, std::string* output, const std::string& redirects = "2>&1") {
  FILE* pipe = popen((std::string(TUNEFLEET_AGENT_BINARY) + " " + args + " " + redirects).c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

pid_t SpawnAgent(std::vector<std::string> args) {
  args.insert(args.begin(), TUNEFLEET_AGENT_BINARY);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A loopback port nobody listens on.
int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool HaveOpenCl() {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load();
  return api.ok() && PickDevice(**api, 0, 0).ok();
}

TEST(AgentProcessTest, GivenVersion_WeShouldPrintItAndExitZero) {
  std::string output;
  EXPECT_EQ(RunAgent("--version", &output), 0);
  EXPECT_NE(output.find(TUNEFLEET_VERSION), std::string::npos) << output;
}

// Both printed nothing and exited 0 when their output could not be written.
TEST(AgentProcessTest, GivenAnOutputThatCannotBeWritten_VersionAndListDevicesShouldFailInOneLine) {
  for (const std::string args : {"--version", "--list-devices"}) {
    if (args == "--list-devices" && !HaveOpenCl()) continue;
    std::string output;  // stderr alone: stdout goes to /dev/full
    EXPECT_EQ(RunAgent(args, &output, "2>&1 >/dev/full"), 1) << args << ": " << output;
    EXPECT_EQ(output, "tunefleet-agent: error: standard output: write failed: No space left on device\n") << args;
  }
}

TEST(AgentProcessTest, GivenNoTracker_WeShouldExplainTheMissingFlags) {
  std::string output;
  EXPECT_NE(RunAgent("--key k", &output), 0);
  EXPECT_NE(output.find("--tracker"), std::string::npos) << output;
}

TEST(AgentProcessTest, GivenAnOpenClLibraryThatDoesNotExist_WeShouldFailWithOneClearLineAsBadInput) {
  std::string output;
  EXPECT_EQ(RunAgent("--list-devices --opencl-lib /nonexistent/libOpenCL.so", &output), 2);
  EXPECT_NE(output.find("cannot load OpenCL from --opencl-lib /nonexistent/libOpenCL.so"), std::string::npos)
      << output;
  EXPECT_EQ(output.find('\n'), output.size() - 1) << output;
}

// The platforms of the ICD loader's vendor files, each listed twice through $OCL_ICD_VENDORS (ocl-icd reads that
// folder instead of /etc/OpenCL/vendors), so that the listing has two platforms to tell apart.
class TwoPlatforms {
 public:
  TwoPlatforms() {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    const std::filesystem::path from = vendors != nullptr ? vendors : "/etc/OpenCL/vendors";
    dir_ = std::filesystem::temp_directory_path() / ("tf_two_platforms_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::error_code ec;
    for (const auto& icd : std::filesystem::directory_iterator(from, ec)) {
      if (icd.path().extension() != ".icd") continue;
      for (const char* copy : {"a-", "b-"}) {
        std::filesystem::copy_file(icd.path(), dir_ / (copy + icd.path().filename().string()), ec);
      }
    }
    ::setenv("OCL_ICD_VENDORS", dir_.c_str(), 1);
    had_ = vendors != nullptr;
    if (had_) old_ = vendors;
  }
  ~TwoPlatforms() {
    if (had_) {
      ::setenv("OCL_ICD_VENDORS", old_.c_str(), 1);
    } else {
      ::unsetenv("OCL_ICD_VENDORS");
    }
    std::filesystem::remove_all(dir_);
  }

 private:
  std::filesystem::path dir_;
  bool had_ = false;
  std::string old_;
};

// The number of "platform N:" lines of a listing.
int Platforms(const std::string& listing) {
  int n = 0;
  for (size_t at = listing.find("platform "); at != std::string::npos; at = listing.find("\nplatform ", at + 1)) ++n;
  return n;
}

// --platform with --list-devices was ignored: every platform was listed, and an index out of range was listed too.
TEST(AgentProcessTest, GivenListDevicesWithAPlatform_WeShouldListThatPlatformOnlyOrSayItIsOutOfRange) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL platform";
  TwoPlatforms two;
  std::string all;
  ASSERT_EQ(RunAgent("--list-devices", &all), 0) << all;
  if (Platforms(all) < 2) GTEST_SKIP() << "the ICD loader did not list its vendors twice: " << all;
  for (int p : {0, 1}) {
    std::string only;
    EXPECT_EQ(RunAgent("--list-devices --platform " + std::to_string(p), &only), 0) << only;
    EXPECT_EQ(Platforms(only), 1) << only;
    EXPECT_EQ(only.rfind("platform " + std::to_string(p) + ": ", 0), 0u) << only;
    EXPECT_NE(all.find(only), std::string::npos) << only << " is not part of " << all;
  }
  std::string out_of_range;
  const std::string count = std::to_string(Platforms(all));
  EXPECT_EQ(RunAgent("--list-devices --platform " + count, &out_of_range), 2) << out_of_range;
  EXPECT_EQ(out_of_range.rfind("tunefleet-agent: error: --platform " + count + " is out of range: " + count +
                                   " platform(s)",
                               0),
            0u)
      << out_of_range;
  EXPECT_EQ(out_of_range.find('\n'), out_of_range.size() - 1) << out_of_range;
}

// `--list-devices --tracker H:P --key K` listed the devices and ignored the rest, as it did --device 1 (the listing
// is not narrowed to one device): a serving agent's options beside it are refused before anything is opened.
TEST(AgentProcessTest, GivenListDevicesWithAServingOption_WeShouldRefuseTheMixInOneLine) {
  for (const std::string option : {"--tracker 127.0.0.1:9190", "--key k", "--token t", "--device 1",
                                   "--tls-ca /dev/null", "--device-lock none", "--job-timeout 5",
                                   "--pocl-cache-mb 5", "--pocl-cache-dir /tmp/kcache"}) {
    std::string output;
    EXPECT_EQ(RunAgent("--list-devices " + option + " --opencl-lib /nonexistent/libOpenCL.so", &output), 2)
        << option << ": " << output;
    const std::string name = option.substr(0, option.find(' '));
    EXPECT_EQ(output, "tunefleet-agent: error: " + name + " excludes --list-devices (see --help)\n") << option;
  }
}

TEST(AgentProcessTest, GivenListDevices_WeShouldPrintIndexedPlatformsAndDevices) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL platform";
  std::string output;
  EXPECT_EQ(RunAgent("--list-devices", &output), 0);
  EXPECT_NE(output.find("platform 0:"), std::string::npos) << output;
  EXPECT_NE(output.find("device 0:"), std::string::npos) << output;
}

TEST(AgentProcessTest, GivenABadKernelCacheOption_WeShouldRefuseItInOneLineAsBadInput) {
  const std::string serving = "--tracker 127.0.0.1:" + std::to_string(ClosedPort()) + " --key k ";
  std::string output;
  EXPECT_EQ(RunAgent(serving + "--pocl-cache-dir /tmp/kcache", &output), 2);
  EXPECT_EQ(output, "tunefleet-agent: error: --pocl-cache-dir needs --pocl-cache-mb above 0\n");
  output.clear();
  EXPECT_EQ(RunAgent(serving + "--pocl-cache-mb 8 --pocl-cache-dir /dev/null/kcache", &output), 2);
  const std::string said = "tunefleet-agent: error: --pocl-cache-mb: cannot make the kernel cache folder ";
  EXPECT_EQ(output.rfind(said + "/dev/null/kcache", 0), 0u) << output;
  EXPECT_EQ(output.find('\n'), output.size() - 1) << output;
}

// A serving agent holds its slot of the cache root while it lives: another agent (here the test) gets the next one.
TEST(AgentProcessTest, GivenAKernelCacheRoot_TheAgentShouldHoldItsSlotWhileItRuns) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL platform";
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tunefleet-agent-kcache-" + std::to_string(getpid()));
  pid_t pid = SpawnAgent({"--tracker", "127.0.0.1:" + std::to_string(ClosedPort()), "--key", "k", "--pocl-cache-mb",
                          "8", "--pocl-cache-dir", root.string()});
  sleep(2);  // the worker is started (and the slot taken) before the agent dials
  Result<std::unique_ptr<KernelDiskCache>> other = KernelDiskCache::Claim(root, 1 << 20);
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid), 0);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ((*other)->dir(), root / "slot-1");
  std::filesystem::remove_all(root);
}

TEST(AgentProcessTest, GivenNoTrackerListening_WeShouldRetryUntilSigtermThenExitCleanly) {
  if (!HaveOpenCl()) GTEST_SKIP() << "no OpenCL platform";
  pid_t pid = SpawnAgent({"--tracker", "127.0.0.1:" + std::to_string(ClosedPort()), "--key", "k"});
  sleep(2);  // long enough to fail a few connection attempts
  int status = 0;
  const pid_t ended = waitpid(pid, &status, WNOHANG);
  ASSERT_EQ(ended, 0) << "the agent exited without a tracker (status " << status << ") instead of dialling again";
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid), 0);
}

}  // namespace
}  // namespace tunefleet::agent
