// The watchdog with the real worker process (the agent binary with --worker) on the real OpenCL device.
#include "agent/worker_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/cl_api.h"
#include "agent/device_info.h"
#include "agent/device_lock.h"
#include "agent/test_programs.h"
#include "common/spdlog_capture_testing.h"

namespace tunefleet::agent {
namespace {

constexpr char kFaultComment[] = "// TUNEFLEET_FAULT\n";

class WorkerSupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ClApi>> api = ClApi::Load();
    if (!api.ok()) GTEST_SKIP() << "no OpenCL: " << api.status().ToString();
    if (Result<cl_device_id> device = PickDevice(**api, 0, 0); !device.ok()) {
      GTEST_SKIP() << "no OpenCL device: " << device.status().ToString();
    }
  }
  void TearDown() override {
    unsetenv("TUNEFLEET_TEST_FAULT");
    held_.Release();
    if (!std::string(lock_path_).ends_with("XXXXXX")) std::remove(lock_path_);  // made by StartWithDeviceLock
  }

  // A supervisor over the real agent binary, with the fault hook set to `fault` ("" for none).
  static std::unique_ptr<WorkerSupervisor> StartWorker(const char* fault, const std::string& opencl_lib = "") {
    if (*fault) setenv("TUNEFLEET_TEST_FAULT", fault, 1);
    WorkerSupervisor::Options options;
    options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
    if (!opencl_lib.empty()) options.argv.insert(options.argv.end(), {"--opencl-lib", opencl_lib});
    Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
    EXPECT_TRUE(supervisor.ok()) << supervisor.status().ToString();
    return supervisor.ok() ? std::move(supervisor).value() : nullptr;
  }

  // A supervisor whose worker locks the device through a temporary lock file, its compiler warmed so that a locked
  // job's build is quick. HoldDevice then takes the lock as another agent's worker would.
  std::unique_ptr<WorkerSupervisor> StartWithDeviceLock(WorkerSupervisor::Options options) {
    const int fd = mkstemp(lock_path_);
    EXPECT_GE(fd, 0);
    if (fd < 0) return nullptr;
    close(fd);
    options.argv = {TUNEFLEET_AGENT_BINARY, "--worker", "--device-lock", lock_path_};
    Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
    EXPECT_TRUE(supervisor.ok()) << supervisor.status().ToString();
    if (!supervisor.ok()) return nullptr;
    EXPECT_EQ((*supervisor)->Run(TestVectorAdd()).status(), proto::OK);
    return std::move(supervisor).value();
  }
  void HoldDevice() {
    Result<DeviceLock> other = DeviceLock::Open(lock_path_);
    ASSERT_TRUE(other.ok());
    other_.emplace(std::move(other).value());
    Result<DeviceLock::Guard> held = other_->Acquire();
    ASSERT_TRUE(held.ok() && held->held());
    held_ = std::move(held).value();
  }

  char lock_path_[40] = "/tmp/tunefleet-supervisor-lock-XXXXXX";
  std::optional<DeviceLock> other_;
  DeviceLock::Guard held_;
};

TEST_F(WorkerSupervisorTest, GivenAHealthyWorker_WeShouldRunJobsAndReportTheDevice) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("");
  ASSERT_NE(supervisor, nullptr);
  EXPECT_FALSE(supervisor->device().fingerprint().empty());
  proto::MeasureResult result = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_EQ(result.costs_size(), 1);
}

// A kernel's printf (PoCL writes it to the worker's stdout) reaches the agent's log as it runs, bounded: one printf
// per work-item of 256 items is 4 KiB a run, of which the log takes the first 1 KiB and counts the rest.
TEST_F(WorkerSupervisorTest, GivenAKernelThatPrints_ItsOutputShouldReachTheLogBounded) {
  testing::CapturedSpdlog log;
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
  options.output_limits.bytes_per_window = 1024;
  Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
  ASSERT_TRUE(supervisor.ok()) << supervisor.status().ToString();
  proto::KernelProgram program = TestVectorAdd(256);
  std::string* source = program.mutable_launches(0)->mutable_source();
  source->insert(source->find("c[i] ="), "printf(\"item %03d of 256\\n\", i); ");
  EXPECT_EQ((*supervisor)->Run(program).status(), proto::OK);
  supervisor->reset();  // the relay has said what the pipe held by then

  const std::string text = log.text();
  size_t said = 0;
  for (size_t at = text.find("kernel output: item "); at != std::string::npos;
       at = text.find("kernel output: item ", at + 1)) {
    ++said;
  }
  EXPECT_EQ(said, 1024u / 16) << text;  // "item 000 of 256\n" is 16 bytes
  EXPECT_NE(text.find("kernel output: more than 1024 bytes in 60.0 s; the rest of it is left out of the log"),
            std::string::npos)
      << text;
  // The count: every line the kernel printed but the 64 said (the job runs the kernel more than once: its check and
  // its timed runs).
  const size_t count_at = text.find(" bytes more were left out");
  ASSERT_NE(count_at, std::string::npos) << text;
  const size_t left_out = std::stoul(text.substr(text.rfind(' ', count_at - 1) + 1));
  EXPECT_EQ((left_out + 1024) % (256 * 16), 0u) << text;
}

// A job killed at its timeout keeps what its kernel printed before it: the relay has it although the worker is gone.
// (PoCL writes a kernel's printf out itself, so this passes without the worker's line-buffered stdout too; that is
// for a driver that prints through stdio, which this machine does not have.)
TEST_F(WorkerSupervisorTest, GivenAPrintingJobKilledAtItsTimeout_WhatItPrintedShouldReachTheLog) {
  testing::CapturedSpdlog log;
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
  Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
  ASSERT_TRUE(supervisor.ok()) << supervisor.status().ToString();
  // One line from each run of a kernel of about half a second, run until the timeout: a few bytes, which a full
  // buffer would have kept to itself. PoCL writes a run's printf out when the run ends, so the first runs (the check,
  // then 100 timed runs) must end well inside the timeout, which covers the build too:
  // with 2e9 steps a run and 3 s, the first run outlasted the timeout in 2 of 5 tries on a loaded machine.
  proto::KernelProgram program = TestVectorAdd(1);
  std::string* source = program.mutable_launches(0)->mutable_source();
  source->replace(source->find("c[i] = a[i] + b[i];"), 19,
                  "printf(\"item %d\\n\", i); float x = a[i]; "
                  "for (int k = 0; k < 300000000; ++k) x = x * 1.0000001f + b[i]; c[i] = x;");
  program.mutable_timing()->set_number(100);
  program.mutable_timing()->set_timeout_ms(8000);
  EXPECT_EQ((*supervisor)->Run(program).status(), proto::RUN_TIMEOUT);
  supervisor->reset();
  EXPECT_NE(log.text().find("kernel output: item 0"), std::string::npos) << log.text().substr(0, 2000);
}

// The worker runs the kernels and needs no secret: the agent's TUNEFLEET_TOKEN stays out of its environment.
TEST_F(WorkerSupervisorTest, GivenATokenInTheAgentsEnvironment_TheWorkerShouldNotInheritIt) {
  setenv("TUNEFLEET_TOKEN", "s3cr3t-of-the-agent", 1);
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("");
  unsetenv("TUNEFLEET_TOKEN");
  ASSERT_NE(supervisor, nullptr);
  std::ifstream environ_file("/proc/" + std::to_string(supervisor->TEST_worker_pid()) + "/environ");
  const std::string environment((std::istreambuf_iterator<char>(environ_file)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(environment.empty());
  EXPECT_EQ(environment.find("s3cr3t-of-the-agent"), std::string::npos);
  EXPECT_EQ(supervisor->Run(TestVectorAdd()).status(), proto::OK);
}

// PoCL's kernel cache in a folder of the agent's own (--pocl-cache-mb): the worker builds there, whatever
// POCL_CACHE_DIR the agent was given, and once kJobsPerCacheCheck jobs ran, before the next, a folder over its limit
// is pruned with the worker replaced. Needs PoCL: other drivers do not read the folder.
TEST_F(WorkerSupervisorTest, GivenAKernelCacheOverItsLimit_ItShouldBePrunedBeforeTheNextJobWithTheWorkerReplaced) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tunefleet-kcache-test-" + std::to_string(getpid()));
  constexpr uint64_t kLimit = 64 * 1024;
  Result<std::unique_ptr<KernelDiskCache>> claimed = KernelDiskCache::Claim(root, kLimit);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  std::shared_ptr<KernelDiskCache> cache = std::move(claimed).value();
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
  options.kernel_cache = cache;
  setenv("POCL_CACHE_DIR", (root / "not-this-one").c_str(), 1);
  Result<std::unique_ptr<WorkerSupervisor>> started = WorkerSupervisor::Start(options);
  unsetenv("POCL_CACHE_DIR");
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WorkerSupervisor& supervisor = **started;
  if (supervisor.device().platform_name().find("Portable Computing Language") == std::string::npos) {
    fs::remove_all(root);
    GTEST_SKIP() << "not PoCL: " << supervisor.device().platform_name();
  }
  const pid_t first = supervisor.TEST_worker_pid();
  auto variant = [](int i) {  // another program for PoCL, which kept programs that differed in a comment as one
    return TestVectorAdd(64, "__kernel void variant(__global float* x) { x[0] = " + std::to_string(i) + "; }\n");
  };
  auto programs = [&] {  // PoCL's program folders, cache/XX/PROGRAM (beside them, PoCL leaves tempfile_* files)
    int n = 0;
    for (const auto& top : fs::directory_iterator(cache->dir())) {
      if (!top.is_directory()) continue;
      for (const auto& program : fs::directory_iterator(top.path())) n += program.is_directory() ? 1 : 0;
    }
    return n;
  };
  for (int i = 0; i < WorkerSupervisor::kJobsPerCacheCheck; ++i) {
    ASSERT_EQ(supervisor.Run(variant(i)).status(), proto::OK);
  }
  EXPECT_GT(cache->Bytes(), kLimit);  // 16 programs, built in the agent's folder
  EXPECT_EQ(programs(), WorkerSupervisor::kJobsPerCacheCheck);
  EXPECT_FALSE(fs::exists(root / "not-this-one"));
  EXPECT_EQ(supervisor.TEST_worker_pid(), first);  // not looked at yet
  {
    testing::CapturedSpdlog log;
    ASSERT_EQ(supervisor.Run(variant(16)).status(), proto::OK);
    EXPECT_NE(log.text().find("least recently used entries"), std::string::npos) << log.text();
  }
  EXPECT_EQ(programs(), 1);  // every earlier one pruned; the job's own built after the prune
  EXPECT_GT(supervisor.TEST_worker_pid(), 0);
  EXPECT_NE(supervisor.TEST_worker_pid(), first);
  EXPECT_EQ(supervisor.Run(variant(0)).status(), proto::OK);  // built again by the new worker
  EXPECT_EQ(programs(), 2);
  fs::remove_all(root);
}

TEST_F(WorkerSupervisorTest, GivenAWorkerThatCrashes_WeShouldReportTheSignalAndRunTheNextJob) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("crash");
  ASSERT_NE(supervisor, nullptr);
  const pid_t first = supervisor->TEST_worker_pid();
  proto::MeasureResult crashed = supervisor->Run(TestVectorAdd(64, kFaultComment));
  EXPECT_EQ(crashed.status(), proto::RUNTIME_ERROR);
  EXPECT_EQ(crashed.message(), "worker died: SIGSEGV");
  EXPECT_NE(supervisor->TEST_worker_pid(), first);  // replaced

  proto::MeasureResult next = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(next.status(), proto::OK) << next.message();
}

// The crashed worker is replaced before Run returns; the replacement's start (loading the OpenCL driver) is not the
// crashed job's time. It was counted in its wall time.
TEST_F(WorkerSupervisorTest, GivenAWorkerThatCrashes_ItsReplacementsStartShouldNotCountInTheJobsWallTime) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("crash");
  ASSERT_NE(supervisor, nullptr);
  const auto begin = std::chrono::steady_clock::now();
  proto::MeasureResult crashed = supervisor->Run(TestVectorAdd(64, kFaultComment));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_EQ(crashed.message(), "worker died: SIGSEGV");
  // A worker's start takes tens of milliseconds at least (dlopen of the ICD loader and the driver, device queries);
  // measured with the job, the two figures were within a millisecond of each other.
  EXPECT_GT(elapsed - crashed.wall_time(), 0.01) << "wall " << crashed.wall_time() << " s of " << elapsed << " s";
}

// On a nearly full disk, a kernel's own compile error is still its failure (the build log has the compiler's
// "error:"); a job that fails as the full disk makes it fail (the worker exits 1 while building, as LLVM does) is
// given back, and the agent's own kernel cache is emptied.
TEST_F(WorkerSupervisorTest, GivenAFullDisk_ACompileErrorShouldStayAFailureAndAWorkerExitEmptyTheCache) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tunefleet-fulldisk-test-" + std::to_string(getpid()));
  Result<std::unique_ptr<KernelDiskCache>> claimed = KernelDiskCache::Claim(root, 64 << 20);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  std::shared_ptr<KernelDiskCache> cache = std::move(claimed).value();
  setenv("TUNEFLEET_TEST_FAULT", "exit-build", 1);
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
  options.kernel_cache = cache;
  Result<std::unique_ptr<WorkerSupervisor>> started = WorkerSupervisor::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WorkerSupervisor& supervisor = **started;
  supervisor.TEST_set_low_disk_bytes(std::numeric_limits<uint64_t>::max());  // the disk fills up after the start
  const proto::MeasureResult broken = supervisor.Run(TestVectorAdd(64, "__kernel void broken( { }\n"));
  EXPECT_EQ(broken.status(), proto::DEVICE_COMPILE_FAILED) << broken.message();
  EXPECT_FALSE(broken.not_measured());
  EXPECT_EQ(supervisor.Unavailable(), std::nullopt);
  ASSERT_EQ(supervisor.Run(TestVectorAdd()).status(), proto::OK);
  const bool pocl = supervisor.device().platform_name().find("Portable Computing Language") != std::string::npos;
  if (pocl) {
    EXPECT_GT(cache->Bytes(), 0u);  // the program PoCL built
  }
  testing::CapturedSpdlog log;
  const proto::MeasureResult r = supervisor.Run(TestVectorAdd(64, kFaultComment));
  EXPECT_TRUE(r.not_measured()) << r.message();
  EXPECT_NE(r.message().find("exit code 1, and " + cache->dir().string() + " has "), std::string::npos)
      << r.message();
  EXPECT_NE(log.text().find("emptied this agent's kernel cache"), std::string::npos) << log.text();
  EXPECT_EQ(cache->Bytes(), 0u);
  EXPECT_TRUE(supervisor.Unavailable().has_value());
  fs::remove_all(root);
}

// A disk already full at the start (under Options::full_at_start_bytes free): the agent's own kernel cache is
// emptied (it may be what filled the disk) and, the disk still full, Unavailable() says so before any job, so that
// the agent does not join the tracker for nothing. A disk nearly full (under the low_disk_bytes that judge a failed
// build) but not that full keeps its cache, and the agent starts: kernels may still build there.
TEST_F(WorkerSupervisorTest, GivenADiskFullAtTheStart_WeShouldEmptyTheCacheAndBeUnavailableUntilThereIsRoom) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tunefleet-fullstart-test-" + std::to_string(getpid()));
  Result<std::unique_ptr<KernelDiskCache>> claimed = KernelDiskCache::Claim(root, 64 << 20);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  std::shared_ptr<KernelDiskCache> cache = std::move(claimed).value();
  auto leave_a_program = [&](const std::string& name) {  // as an earlier run of the agent left it
    fs::create_directories(cache->dir() / name.substr(0, 2) / name);
    std::ofstream(cache->dir() / name.substr(0, 2) / name / "program.bc") << std::string(40960, 'x');
  };
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
  options.kernel_cache = cache;
  options.low_disk_bytes = std::numeric_limits<uint64_t>::max();  // under 16 MB free: a failed build's threshold

  leave_a_program("ab0123");
  const uint64_t bytes = cache->Bytes();
  Result<std::unique_ptr<WorkerSupervisor>> nearly = WorkerSupervisor::Start(options);
  ASSERT_TRUE(nearly.ok()) << nearly.status().ToString();
  EXPECT_EQ((*nearly)->Unavailable(), std::nullopt);
  EXPECT_EQ(cache->Bytes(), bytes);
  nearly->reset();

  leave_a_program("cd4567");
  options.full_at_start_bytes = std::numeric_limits<uint64_t>::max();  // under 4 MB free: full at the start
  testing::CapturedSpdlog log;
  Result<std::unique_ptr<WorkerSupervisor>> started = WorkerSupervisor::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WorkerSupervisor& supervisor = **started;
  EXPECT_EQ(cache->Bytes(), 0u);
  ASSERT_TRUE(supervisor.Unavailable().has_value());
  EXPECT_EQ(supervisor.Unavailable()->rfind("the disk is full (" + cache->dir().string() + " has ", 0), 0u)
      << *supervisor.Unavailable();
  EXPECT_NE(log.text().find("the disk was full at the start ("), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("; emptied this agent's kernel cache ("), std::string::npos) << log.text();
  EXPECT_NE(log.text().find(" KB); it still is"), std::string::npos) << log.text();
  supervisor.TEST_set_low_disk_bytes(0);  // room again
  EXPECT_EQ(supervisor.Unavailable(), std::nullopt);
  EXPECT_NE(log.text().find("there is room now where the compiler writes (it was: "), std::string::npos) << log.text();
  EXPECT_EQ(supervisor.Run(TestVectorAdd()).status(), proto::OK);
  fs::remove_all(root);
}

// What a full disk's failures look like, and what a kernel's own do.
TEST(FailedAsOnAFullDiskTest, GivenResults_OnlyThoseThatLookLikeTheDisksDoingShouldCount) {
  auto result = [](proto::MeasureStatus status, const std::string& message) {
    proto::MeasureResult r;
    r.set_status(status);
    r.set_message(message);
    return r;
  };
  EXPECT_TRUE(FailedAsOnAFullDisk(result(proto::DEVICE_COMPILE_FAILED,
                                         "kernel 'gemm_tuned': clBuildProgram: CL_BUILD_PROGRAM_FAILURE\nDevice X "
                                         "failed to build the program\n")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::DEVICE_COMPILE_FAILED,
                                          "kernel 'k': clBuildProgram: CL_BUILD_PROGRAM_FAILURE\n<source>:1:24: "
                                          "error: unknown type name 'this'\n")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::DEVICE_COMPILE_FAILED,
                                          "kernel 'no_such_kernel': clCreateKernel: CL_INVALID_KERNEL_NAME")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::DEVICE_COMPILE_FAILED,
                                          "kernel 'k': clBuildProgram: CL_INVALID_BUILD_OPTIONS")));
  EXPECT_TRUE(FailedAsOnAFullDisk(result(proto::RUNTIME_ERROR, "worker died: exit code 1")));
  EXPECT_TRUE(FailedAsOnAFullDisk(result(proto::RUNTIME_ERROR, "worker died: SIGABRT")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::RUNTIME_ERROR, "worker died: SIGSEGV")));
  EXPECT_TRUE(FailedAsOnAFullDisk(result(proto::RUNTIME_ERROR, "LLVM ERROR: No space left on device")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::WRONG_ANSWER, "max abs error 3")));
  EXPECT_FALSE(FailedAsOnAFullDisk(result(proto::OK, "")));
}

// A worker that exits while it builds is taken for the victim of a full disk only when a folder the compiler writes
// into has less free than the threshold: a threshold above any disk's size stands in for the full disk here (filling
// this machine's disk is not done in a test).
TEST_F(WorkerSupervisorTest, GivenAWorkerThatExitsWhileBuildingOnAFullDisk_TheJobShouldBeGivenBackNotFailed) {
  setenv("TUNEFLEET_TEST_FAULT", "exit-build", 1);
  for (const bool full : {false, true}) {
    WorkerSupervisor::Options options;
    options.argv = {TUNEFLEET_AGENT_BINARY, "--worker"};
    options.low_disk_bytes = 0;
    Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
    ASSERT_TRUE(supervisor.ok()) << supervisor.status().ToString();
    if (full) (*supervisor)->TEST_set_low_disk_bytes(std::numeric_limits<uint64_t>::max());  // full after the start
    testing::CapturedSpdlog log;
    const proto::MeasureResult r = (*supervisor)->Run(TestVectorAdd(64, kFaultComment));
    EXPECT_EQ(r.status(), proto::RUNTIME_ERROR);
    EXPECT_EQ(r.not_measured(), full) << r.message();
    if (full) {
      EXPECT_EQ(r.message().rfind("worker died: exit code 1, and ", 0), 0u) << r.message();
      EXPECT_TRUE(r.message().ends_with(" free: a full disk, not the config; given back")) << r.message();
      EXPECT_NE(log.text().find("a job failed (worker died: exit code 1) and "), std::string::npos)
          << log.text();
      ASSERT_TRUE((*supervisor)->Unavailable().has_value());  // while the disk stays full
      EXPECT_EQ((*supervisor)->Unavailable()->rfind("the disk is full (", 0), 0u);
      (*supervisor)->TEST_set_low_disk_bytes(0);  // room again
      EXPECT_EQ((*supervisor)->Unavailable(), std::nullopt);
      EXPECT_NE(log.text().find("the disk is full, not the kernel at fault"), std::string::npos) << log.text();
    } else {
      EXPECT_EQ(r.message(), "worker died: exit code 1");
      EXPECT_EQ((*supervisor)->Unavailable(), std::nullopt);
    }
    EXPECT_EQ((*supervisor)->Run(TestVectorAdd()).status(), proto::OK);  // a new worker runs the next job
  }
}

TEST_F(WorkerSupervisorTest, GivenAWorkerKilledFromOutsideOnce_WeShouldMeasureTheJobInANewWorker) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang");
  ASSERT_NE(supervisor, nullptr);
  const pid_t first = supervisor->TEST_worker_pid();
  // The system's out-of-memory killer, played by this thread: it SIGKILLs the worker while the job hangs in it. The
  // fault hook is cleared first, so the job's second attempt, in a new worker, runs.
  std::thread killer([first] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    unsetenv("TUNEFLEET_TEST_FAULT");
    kill(first, SIGKILL);
  });
  proto::MeasureResult result = supervisor->Run(TestVectorAdd(64, kFaultComment));
  killer.join();
  EXPECT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_EQ(result.costs_size(), 1);
  EXPECT_NE(supervisor->TEST_worker_pid(), first);  // replaced
}

// The pids of this process's children other than `except`, read from /proc (the supervisor keeps its own).
std::vector<pid_t> OtherChildren(pid_t except) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (parent == getpid() && pid != except && state != 'Z') out.push_back(pid);
  }
  return out;
}

// A worker killed while no job ran is no job's death: it was counted as the next job's first, so one kill during
// that job was recorded as "SIGKILL, twice". Here the job's own worker is killed once (the fault hook cleared
// first) and the job is measured in a third worker.
TEST_F(WorkerSupervisorTest, GivenAWorkerKilledWhileIdle_ItShouldNotCountAsTheNextJobsDeath) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang");
  ASSERT_NE(supervisor, nullptr);
  const pid_t idle = supervisor->TEST_worker_pid();
  ASSERT_EQ(kill(idle, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::thread killer([idle] {
    for (int i = 0; i < 600; ++i) {
      const std::vector<pid_t> workers = OtherChildren(idle);
      if (!workers.empty()) {
        std::this_thread::sleep_for(std::chrono::seconds(3));  // its hello said, the job hanging in it
        unsetenv("TUNEFLEET_TEST_FAULT");
        kill(workers.front(), SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  proto::MeasureResult result = supervisor->Run(TestVectorAdd(64, kFaultComment));
  killer.join();
  EXPECT_EQ(result.status(), proto::OK) << result.message();
}

TEST_F(WorkerSupervisorTest, GivenAWorkerKilledFromOutsideTwice_WeShouldRecordTheFailureAndRunTheNextJob) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("sigkill");
  ASSERT_NE(supervisor, nullptr);
  proto::MeasureResult killed = supervisor->Run(TestVectorAdd(64, kFaultComment));
  EXPECT_EQ(killed.status(), proto::RUNTIME_ERROR);
  EXPECT_EQ(killed.message(), "worker died: SIGKILL, twice (killed from outside the agent: out of memory?)");
  EXPECT_FALSE(killed.not_measured());  // a config that gets its worker killed every time is recorded, not retried

  proto::MeasureResult next = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(next.status(), proto::OK) << next.message();
}

// A kernel writing 76 floats past its output's end (an index off by more than a row): found by the canary (256
// bytes of it missed this one, reported OK, and the worker's heap was corrupted for the next job), and the worker is
// replaced, as the write may have gone further than the canary.
TEST_F(WorkerSupervisorTest, GivenAWritePastABuffersEnd_WeShouldReportItAndReplaceTheWorker) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("");
  ASSERT_NE(supervisor, nullptr);
  const pid_t first = supervisor->TEST_worker_pid();
  proto::KernelProgram program = TestVectorAdd(64);
  program.mutable_launches(0)->set_source(
      "__kernel void add(__global const float* a, __global const float* b, __global float* c) {\n"
      "  int i = get_global_id(0); c[i] = a[i] + b[i];\n  if (i == 0) c[64 + 76] = 5.0f;\n}\n");
  proto::MeasureResult result = supervisor->Run(program);
  EXPECT_EQ(result.status(), proto::WRONG_ANSWER) << result.message();
  EXPECT_EQ(result.message(), "out-of-bounds write into buffer 'c'");
  EXPECT_NE(supervisor->TEST_worker_pid(), first);
  EXPECT_EQ(supervisor->Run(TestVectorAdd()).status(), proto::OK);
}

TEST_F(WorkerSupervisorTest, GivenAJobThatHangs_WeShouldKillTheWorkerAtTheTimeoutAndCarryOn) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang");
  ASSERT_NE(supervisor, nullptr);
  proto::KernelProgram hang = TestVectorAdd(64, kFaultComment);
  // The timeout covers the build too; leave a cold compiler on a busy machine enough of it to finish building.
  hang.mutable_timing()->set_timeout_ms(5000);
  proto::MeasureResult result = supervisor->Run(hang);
  EXPECT_EQ(result.status(), proto::RUN_TIMEOUT);
  EXPECT_NE(result.message().find("timeout"), std::string::npos) << result.message();

  proto::MeasureResult next = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(next.status(), proto::OK) << next.message();
}

TEST_F(WorkerSupervisorTest, GivenTheDeviceLockedByAnotherAgent_WeShouldWaitBeyondTheTimeoutAndThenRun) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWithDeviceLock({});
  ASSERT_TRUE(supervisor);
  // Another agent's worker (this test) holds the device for longer than the job's timeout.
  ASSERT_NO_FATAL_FAILURE(HoldDevice());
  proto::KernelProgram job = TestVectorAdd();
  job.mutable_timing()->set_timeout_ms(1500);
  proto::MeasureResult result;
  std::thread run([&] { result = supervisor->Run(job); });
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  held_.Release();
  run.join();
  EXPECT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_GE(result.wall_time(), 2.5);  // it did wait for the device
}

TEST_F(WorkerSupervisorTest, GivenTheDeviceLockedPastTheLongestWait_WeShouldGiveTheJobBackNotMeasured) {
  WorkerSupervisor::Options options;
  options.min_device_wait = std::chrono::milliseconds(4000);  // 5 minutes in an agent
  std::unique_ptr<WorkerSupervisor> supervisor = StartWithDeviceLock(options);
  ASSERT_TRUE(supervisor);
  // A stuck peer (this test) holds the device past the wait: the job is not a property of the config.
  ASSERT_NO_FATAL_FAILURE(HoldDevice());
  proto::KernelProgram job = TestVectorAdd();
  job.mutable_timing()->set_timeout_ms(300);  // the build (a cache hit) must say it waits within it
  const proto::MeasureResult result = supervisor->Run(job);
  EXPECT_TRUE(result.not_measured()) << result.message();
  EXPECT_NE(result.message().find("the device stayed locked by another agent for 4 s"), std::string::npos)
      << result.message();
  // Once the peer lets go, the next job runs (on a new worker).
  held_.Release();
  const proto::MeasureResult next = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(next.status(), proto::OK) << next.message();
  EXPECT_FALSE(next.not_measured());
}

TEST_F(WorkerSupervisorTest, GivenAJobThatHangsWhileBuilding_WeShouldReportABuildTimeout) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang-build");
  ASSERT_NE(supervisor, nullptr);
  proto::KernelProgram hang = TestVectorAdd(64, kFaultComment);
  hang.mutable_timing()->set_timeout_ms(1000);
  proto::MeasureResult result = supervisor->Run(hang);
  EXPECT_EQ(result.status(), proto::BUILD_TIMEOUT) << result.message();
}

TEST_F(WorkerSupervisorTest, GivenCancelDuringAHangingJob_WeShouldAbortItAndRefuseLaterJobs) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang");
  ASSERT_NE(supervisor, nullptr);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the job's timeout (default 60 s) is far off
    supervisor->Cancel();
  });
  proto::MeasureResult result = supervisor->Run(TestVectorAdd(64, kFaultComment));
  canceller.join();
  EXPECT_EQ(result.status(), proto::RUN_TIMEOUT);
  EXPECT_NE(result.message().find("cancelled"), std::string::npos) << result.message();
  EXPECT_TRUE(result.not_measured());  // stopped from outside: not a result about the config
  const proto::MeasureResult later = supervisor->Run(TestVectorAdd());
  EXPECT_EQ(later.status(), proto::UNKNOWN_ERROR);
  EXPECT_TRUE(later.not_measured());
}

TEST_F(WorkerSupervisorTest, GivenAbortJobDuringAHangingJob_WeShouldEndThatJobAndRunTheNextOnes) {
  std::unique_ptr<WorkerSupervisor> supervisor = StartWorker("hang");
  ASSERT_NE(supervisor, nullptr);
  const pid_t first = supervisor->TEST_worker_pid();
  const auto start = std::chrono::steady_clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the job's timeout (default 60 s) is far off
    supervisor->AbortJob();
  });
  proto::MeasureResult result = supervisor->Run(TestVectorAdd(64, kFaultComment));
  aborter.join();
  supervisor->ForgetAbort();
  EXPECT_EQ(result.status(), proto::RUN_TIMEOUT);
  EXPECT_NE(result.message().find("the tuner abandoned the job"), std::string::npos) << result.message();
  EXPECT_TRUE(result.not_measured());  // counted by no tracker as a run timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_NE(supervisor->TEST_worker_pid(), first);  // killed and replaced
  // Unlike Cancel(), later jobs run; an abort that came after its job ended does not touch the next one.
  EXPECT_EQ(supervisor->Run(TestVectorAdd()).status(), proto::OK);
  supervisor->AbortJob();
  supervisor->ForgetAbort();
  EXPECT_EQ(supervisor->Run(TestVectorAdd()).status(), proto::OK);
}

TEST_F(WorkerSupervisorTest, GivenAnOpenClLibraryThatDoesNotExist_WeShouldFailToStartNamingIt) {
  WorkerSupervisor::Options options;
  options.argv = {TUNEFLEET_AGENT_BINARY, "--worker", "--opencl-lib", "/nonexistent/libOpenCL.so"};
  Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(options);
  ASSERT_FALSE(supervisor.ok());
  EXPECT_NE(supervisor.status().message().find("/nonexistent/libOpenCL.so"), std::string::npos)
      << supervisor.status().ToString();
}

TEST(SignalNameTest, GivenCommonSignals_WeShouldNameThem) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGABRT), "SIGABRT");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
}

}  // namespace
}  // namespace tunefleet::agent
