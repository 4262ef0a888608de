// Executor on the real OpenCL device (PoCL on CI machines): small programs, few compiles.
#include "agent/executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include <limits>

#include "agent/cl_api.h"
#include "agent/device_lock.h"
#include "agent/host_buffer.h"
#include "agent/program_instance.h"

namespace tunefleet::agent {
namespace {

constexpr char kAdd[] = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
})";
constexpr char kAddReference[] = R"(
__kernel void ref_add(__global const float* a, __global const float* b, __global float* c, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) c[i] = b[i] + a[i];
})";
constexpr char kSub[] = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] - b[i];
})";
constexpr char kUnguarded[] = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  c[i] = a[i] + b[i];
})";
constexpr char kHalfAdd[] = R"(
__kernel void add(__global const half* a, __global const half* b, __global half* c, int n) {
  int i = get_global_id(0);
  if (i < n) vstore_half(vload_half(i, a) + vload_half(i, b), i, c);
})";

constexpr int kN = 256;

class ExecutorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<Executor>> opened = Executor::Open();
    if (opened.ok()) {
      executor_ = std::move(opened).value().release();
    } else {
      skip_reason_ = new std::string(opened.status().ToString());
    }
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
    delete skip_reason_;
    skip_reason_ = nullptr;
  }
  void SetUp() override {
    if (executor_ == nullptr) GTEST_SKIP() << "no OpenCL device: " << *skip_reason_;
  }

  // "c = a + b" over kN elements with `source` as the candidate kernel `add` and a trusted reference.
  static proto::KernelProgram VectorAdd(const std::string& source, proto::ElemType type = proto::FLOAT32) {
    proto::KernelProgram program = Program(source, "add", type, kN, {kN}, {64});
    *program.mutable_reference() = Program(kAddReference, "ref_add", proto::FLOAT32, kN, {64}, {});
    program.set_rtol(1e-3f);
    program.set_atol(1e-3f);
    return program;
  }

  static proto::KernelProgram Program(const std::string& source, const std::string& entry, proto::ElemType type,
                                      int n, std::vector<uint64_t> global, std::vector<uint64_t> local) {
    proto::KernelProgram program;
    for (const char* name : {"a", "b", "c"}) {
      proto::BufferSpec* buffer = program.add_buffers();
      buffer->set_name(name);
      buffer->set_type(type);
      buffer->set_count(n);
      if (name[0] != 'c') {
        buffer->set_init(proto::BufferSpec::RANDOM);
        buffer->set_seed(name[0]);
        buffer->set_lo(-1);
        buffer->set_hi(1);
      }
    }
    proto::KernelLaunch* launch = program.add_launches();
    launch->set_source(source);
    launch->set_entry(entry);
    for (const char* name : {"a", "b", "c"}) launch->add_args()->set_buffer(name);
    launch->add_args()->set_i32(n);
    for (uint64_t g : global) launch->add_global_size(g);
    for (uint64_t l : local) launch->add_local_size(l);
    program.set_output_buffer("c");
    return program;
  }

  static Executor* executor_;
  static std::string* skip_reason_;
};

Executor* ExecutorTest::executor_ = nullptr;
std::string* ExecutorTest::skip_reason_ = nullptr;

TEST_F(ExecutorTest, GivenACorrectKernel_WeShouldReportOkWithCostsAndACompileTime) {
  proto::MeasureResult result = executor_->Execute(VectorAdd(kAdd));
  ASSERT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_EQ(result.costs_size(), 3);
  for (double cost : result.costs()) EXPECT_GT(cost, 0);
  EXPECT_GT(result.mean_cost(), 0);
  EXPECT_GT(result.compile_time(), 0);
  EXPECT_GT(result.wall_time(), 0);
  EXPECT_LE(result.max_abs_error(), 1e-3);
}

TEST_F(ExecutorTest, GivenTheSameSourceTwice_WeShouldHitTheCompileCache) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_timing()->set_repeat(2);
  program.mutable_timing()->set_number(2);
  ASSERT_EQ(executor_->Execute(program).status(), proto::OK);
  proto::MeasureResult again = executor_->Execute(program);
  ASSERT_EQ(again.status(), proto::OK) << again.message();
  EXPECT_EQ(again.compile_time(), 0);
  EXPECT_EQ(again.costs_size(), 2);
}

TEST_F(ExecutorTest, GivenTheSameInputsInTwoJobs_WeShouldFillThemOnce) {
  proto::KernelProgram program = VectorAdd(kAdd);
  for (auto* p : {&program, program.mutable_reference()}) {  // inputs no other test uses
    for (auto& buffer : *p->mutable_buffers()) buffer.set_seed(buffer.seed() + 1000);
  }
  const uint64_t before = executor_->TEST_contents().fills();
  ASSERT_EQ(executor_->Execute(program).status(), proto::OK);
  // a, b and the zeroed c, shared by the candidate and the reference (run once, for this job)
  EXPECT_EQ(executor_->TEST_contents().fills(), before + 3);
  proto::MeasureResult again = executor_->Execute(program);
  ASSERT_EQ(again.status(), proto::OK) << again.message();
  EXPECT_EQ(executor_->TEST_contents().fills(), before + 3);
}

// A job whose inputs pass the contents cache's limit: its last input evicts its first, and the upload, under the
// device lock, must use what was filled before the lock, not fill the evicted inputs again.
TEST_F(ExecutorTest, GivenInputsLargerThanTheContentsCache_WeShouldFillEachOnceBeforeTakingTheDevice) {
  proto::KernelProgram program = VectorAdd(kAdd);
  for (auto* p : {&program, program.mutable_reference()}) {  // inputs no other test uses
    for (auto& buffer : *p->mutable_buffers()) buffer.set_seed(buffer.seed() + 2000);
  }
  executor_->TEST_LimitContents(kN * sizeof(float) * 3 / 2);  // room for one of the three buffers at a time
  ASSERT_EQ(executor_->Execute(program).status(), proto::OK);
  // a, b and c once each for the candidate (before the lock), then the reference's (its own run, cache missed)
  EXPECT_EQ(executor_->TEST_contents().fills(), 6u);
  executor_->TEST_LimitContents(HostContentsCache::kDefaultMaxBytes);
}

TEST_F(ExecutorTest, GivenAWrongKernel_WeShouldReportWrongAnswer) {
  proto::MeasureResult result = executor_->Execute(VectorAdd(kSub));
  EXPECT_EQ(result.status(), proto::WRONG_ANSWER);
  EXPECT_GT(result.max_abs_error(), 1e-3);
  EXPECT_NE(result.message().find("element"), std::string::npos) << result.message();
  EXPECT_EQ(result.costs_size(), 0);
}

// relu(a + b) written only where it is positive: where the reference is 0 the element is left as it was. Over a
// zeroed output it passed; over an output declared NANS (as every template's is) it is a wrong answer.
TEST_F(ExecutorTest, GivenAKernelThatLeavesZerosUnwritten_AnOutputFilledWithNansShouldFailTheCheck) {
  const char* relu_skip = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n && a[i] + b[i] > 0.0f) c[i] = a[i] + b[i];
})";
  const char* relu_ref = R"(
__kernel void ref_relu(__global const float* a, __global const float* b, __global float* c, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) c[i] = fmax(a[i] + b[i], 0.0f);
})";
  proto::KernelProgram program = Program(relu_skip, "add", proto::FLOAT32, kN, {kN}, {64});
  *program.mutable_reference() = Program(relu_ref, "ref_relu", proto::FLOAT32, kN, {64}, {});
  program.set_rtol(1e-3f);
  program.set_atol(1e-3f);
  EXPECT_EQ(executor_->Execute(program).status(), proto::OK);  // zeros: the blind spot
  program.mutable_buffers(2)->set_init(proto::BufferSpec::NANS);
  const proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::WRONG_ANSWER) << result.message();
}

TEST_F(ExecutorTest, GivenASyntaxError_WeShouldReportTheCompileFailureWithTheBuildLog) {
  proto::MeasureResult result = executor_->Execute(VectorAdd("__kernel void add(__global float* c) { c[0] = oops; }"));
  EXPECT_EQ(result.status(), proto::DEVICE_COMPILE_FAILED);
  EXPECT_NE(result.message().find("clBuildProgram: CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << result.message();
  EXPECT_NE(result.message().find("oops"), std::string::npos) << result.message();
  EXPECT_LE(result.message().size(), 4096u + 200u);
  EXPECT_GT(result.compile_time(), 0) << "the failed build's time was reported as 0 s";
}

TEST_F(ExecutorTest, GivenALocalSizeOverTheDeviceLimit_WeShouldRejectItAsAnInvalidConfig) {
  const uint64_t too_big = executor_->device_info().max_work_group_size() * 2;
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->set_global_size(0, too_big);
  program.mutable_launches(0)->set_local_size(0, too_big);
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("local size"), std::string::npos) << result.message();
}

TEST_F(ExecutorTest, GivenMoreLocalMemoryThanTheDeviceHas_WeShouldRejectItAsAnInvalidConfig) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->add_args()->set_local_bytes(executor_->device_info().local_mem_bytes() + 1);
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("CL_DEVICE_LOCAL_MEM_SIZE"), std::string::npos) << result.message();
}

TEST_F(ExecutorTest, GivenBuffersOverTheMemoryBudget_WeShouldRefuseTheProgramBeforeAllocating) {
  proto::KernelProgram program = VectorAdd(kAdd);
  // Each buffer stays under CL_DEVICE_MAX_MEM_ALLOC_SIZE; together they exceed 3/4 of the global memory.
  const uint64_t per_buffer = (executor_->device_info().max_alloc_bytes() - kCanaryBytes) / 4;  // with its canary
  const uint64_t n = executor_->device_info().global_mem_bytes() / (per_buffer * 4) * 4 + 8;
  for (uint64_t i = 0; i < n; ++i) {
    auto* b = program.add_buffers();
    b->set_name("big" + std::to_string(i));
    b->set_type(proto::FLOAT32);
    b->set_count(per_buffer);
  }
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG) << result.message();
  EXPECT_NE(result.message().find("memory budget"), std::string::npos) << result.message();
}

// 2^62 + 1024 floats are 2^64 + 4096 bytes: a 64-bit product wraps to 4096, which passes every limit.
constexpr uint64_t kWrappingCount = (uint64_t{1} << 62) + 1024;

TEST_F(ExecutorTest, GivenABufferWhoseByteSizeOverflows_WeShouldRejectItNamingTheBuffer) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_buffers(0)->set_count(kWrappingCount);  // 'a', filled with random values on the host
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG) << result.message();
  EXPECT_NE(result.message().find("buffer 'a'"), std::string::npos) << result.message();
  EXPECT_NE(result.message().find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << result.message();
}

TEST_F(ExecutorTest, GivenAReferenceBufferWhoseByteSizeOverflows_WeShouldRejectTheReferenceNamingTheBuffer) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_reference()->mutable_buffers(1)->set_count(kWrappingCount);  // 'b'
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::UNKNOWN_ERROR) << result.message();
  EXPECT_NE(result.message().find("reference program failed (INVALID_CONFIG)"), std::string::npos)
      << result.message();
  EXPECT_NE(result.message().find("buffer 'b'"), std::string::npos) << result.message();
}

TEST_F(ExecutorTest, GivenAGlobalSizeNotMultipleOfTheLocalSize_WeShouldRejectItAsAnInvalidConfig) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->set_global_size(0, 100);
  EXPECT_EQ(executor_->Execute(program).status(), proto::INVALID_CONFIG);
}

TEST_F(ExecutorTest, GivenAnOutOfBoundsWrite_WeShouldCatchItWithTheCanary) {
  proto::KernelProgram program = VectorAdd(kUnguarded);
  program.mutable_launches(0)->set_global_size(0, kN + 64);  // 64 items past the end of c
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::WRONG_ANSWER);
  EXPECT_NE(result.message().find("out-of-bounds write into buffer 'c'"), std::string::npos) << result.message();
}

TEST_F(ExecutorTest, GivenMissingArguments_WeShouldReportARuntimeErrorNamingTheCall) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->mutable_args()->RemoveLast();
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::RUNTIME_ERROR);
  EXPECT_NE(result.message().find("clEnqueueNDRangeKernel: CL_INVALID_KERNEL_ARGS"), std::string::npos)
      << result.message();
}

TEST_F(ExecutorTest, GivenHalfBuffers_WeShouldCompareThemWithAFloatReference) {
  proto::MeasureResult result = executor_->Execute(VectorAdd(kHalfAdd, proto::FLOAT16));
  ASSERT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_LE(result.max_abs_error(), 1e-2);
}

TEST_F(ExecutorTest, GivenAMinRepeatTime_WeShouldGrowNumberUntilARepeatLastsThatLong) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_timing()->set_repeat(1);
  program.mutable_timing()->set_min_repeat_ms(100);
  (void)executor_->Execute(program);  // compiled once: the job below only runs
  proto::MeasureResult result = executor_->Execute(program);
  ASSERT_EQ(result.status(), proto::OK) << result.message();
  ASSERT_EQ(result.costs_size(), 1);
  EXPECT_GT(result.costs(0), 0);
  // One run of this kernel lasts microseconds, and the rest of a compiled job milliseconds: only a grown `number`
  // makes the one repeat, and so the job, last 100 ms.
  EXPECT_LT(result.costs(0), 0.01);
  EXPECT_GE(result.wall_time(), 0.1);
}

// A tiny kernel asked to repeat for longer than its job may take: the launches' host time keeps the job within its
// timeout (growing by device time alone ran it for tens of seconds, past a 400 ms timeout).
TEST_F(ExecutorTest, GivenAMinRepeatTimeTheTimeoutCannotHold_TheRepeatsShouldStayWithinIt) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_timing()->set_repeat(3);
  program.mutable_timing()->set_min_repeat_ms(5000);
  program.mutable_timing()->set_timeout_ms(400);
  (void)executor_->Execute(program);  // compiled and warmed once: the timed job below runs only
  const auto start = std::chrono::steady_clock::now();
  proto::MeasureResult result = executor_->Execute(program);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.status(), proto::OK) << result.message();
  EXPECT_EQ(result.costs_size(), 3);
  EXPECT_LT(seconds, 0.4);
}

// The first device of the first platform, through `api` (the fault-injection tests below wrap its entry points).
void FirstDevice(const ClApi& api, cl_device_id* device) {
  cl_platform_id platform = nullptr;
  ASSERT_EQ(api.clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  ASSERT_EQ(api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, device, nullptr), CL_SUCCESS);
}

// Fault injection over the real OpenCL (no mock: every call reaches PoCL): the test's ClApi fails the launch that
// has five others queued before it, unwaited (the warm-up waits for the queue only every 64 launches), and notes at
// each clFinish after that whether the device lock is still held. The lock must pass on only once the queue is idle:
// a launch failing behind others left them running under the next agent's timing. A ClApi entry point is a plain
// function pointer, so the probe is reached through a pointer of this file, set for the one test.
struct DrainProbe {
  decltype(&::clEnqueueNDRangeKernel) enqueue = nullptr;
  decltype(&::clFinish) finish = nullptr;
  std::string lock_path;
  int queued = 0;  // launches enqueued since the queue was last waited for
  bool failed = false;
  int finishes_after_failure = 0;
  int finishes_after_failure_under_lock = 0;
};
DrainProbe* drain_probe = nullptr;

cl_int FailBehindQueued(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                        const size_t* global, const size_t* local, cl_uint waits, const cl_event* wait_list,
                        cl_event* event) {
  if (!drain_probe->failed && drain_probe->queued == 5) {
    drain_probe->failed = true;
    return CL_OUT_OF_RESOURCES;
  }
  const cl_int err = drain_probe->enqueue(queue, kernel, dims, offset, global, local, waits, wait_list, event);
  if (err == CL_SUCCESS) ++drain_probe->queued;
  return err;
}

cl_int FinishNotingTheLock(cl_command_queue queue) {
  if (drain_probe->failed) {
    ++drain_probe->finishes_after_failure;
    Result<DeviceLock> other = DeviceLock::Open(drain_probe->lock_path);  // its own descriptor: flock conflicts
    Result<DeviceLock::Guard> taken = other.ok() ? other->TryAcquire() : Result<DeviceLock::Guard>(other.status());
    if (taken.ok() && !taken->held()) ++drain_probe->finishes_after_failure_under_lock;
  }
  drain_probe->queued = 0;
  return drain_probe->finish(queue);
}

TEST_F(ExecutorTest, GivenALaunchFailingBehindQueuedOnes_TheDeviceLockShouldPassOnOnlyOnceTheQueueIsIdle) {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load();
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  cl_device_id device = nullptr;
  ASSERT_NO_FATAL_FAILURE(FirstDevice(**api, &device));
  DrainProbe probe;
  probe.enqueue = (*api)->clEnqueueNDRangeKernel;
  probe.finish = (*api)->clFinish;
  probe.lock_path = ::testing::TempDir() + "/executor_drain_test.lock";
  drain_probe = &probe;
  struct Unset {  // on every way out, a failed ASSERT included
    std::string path;
    ~Unset() {
      drain_probe = nullptr;
      std::remove(path.c_str());
    }
  } unset{probe.lock_path};
  (*api)->clEnqueueNDRangeKernel = FailBehindQueued;
  (*api)->clFinish = FinishNotingTheLock;
  Result<std::unique_ptr<Executor>> executor = Executor::Create(std::move(*api), device);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  Result<DeviceLock> lock = DeviceLock::Open(probe.lock_path);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  (*executor)->SetDeviceLock(std::move(*lock));

  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_timing()->set_warmup(20);
  const proto::MeasureResult result = (*executor)->Execute(program);
  EXPECT_EQ(result.status(), proto::RUNTIME_ERROR) << result.message();
  EXPECT_NE(result.message().find("clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES"), std::string::npos)
      << result.message();
  ASSERT_TRUE(probe.failed) << "no launch had five queued before it";
  EXPECT_GE(probe.finishes_after_failure_under_lock, 1)
      << "the device lock went before the queue was waited for (" << probe.finishes_after_failure
      << " clFinish after the failure, none under the lock)";
  Result<DeviceLock> after = DeviceLock::Open(probe.lock_path);
  ASSERT_TRUE(after.ok());
  Result<DeviceLock::Guard> free = after->TryAcquire();
  ASSERT_TRUE(free.ok());
  EXPECT_TRUE(free->held()) << "the lock is still held after the job";
}

// Fault injection over the real OpenCL, as above: PoCL allows a kernel the device's whole work-group size, so the
// test's ClApi reports CL_KERNEL_WORK_GROUP_SIZE 32 for a launch of 64 work-items, as NVIDIA's driver (580) reports
// 256 for a kernel of 10 registers that it runs with 1024. The agent refused such a config before the launch; it
// launches it, and only a driver that refuses the launch makes it an INVALID_CONFIG, said in the same terms.
struct SmallKernelMax {
  decltype(&::clGetKernelWorkGroupInfo) info = nullptr;
  decltype(&::clEnqueueNDRangeKernel) enqueue = nullptr;
  bool refuse = false;  // a driver that holds to its CL_KERNEL_WORK_GROUP_SIZE
};
SmallKernelMax* small_kernel_max = nullptr;

cl_int ReportSmallKernelMax(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info name, size_t size,
                            void* value, size_t* size_ret) {
  const cl_int err = small_kernel_max->info(kernel, device, name, size, value, size_ret);
  if (err == CL_SUCCESS && name == CL_KERNEL_WORK_GROUP_SIZE && value != nullptr) *static_cast<size_t*>(value) = 32;
  return err;
}

cl_int EnqueueHoldingToKernelMax(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset,
                                 const size_t* global, const size_t* local, cl_uint waits, const cl_event* wait_list,
                                 cl_event* event) {
  if (small_kernel_max->refuse && local != nullptr && local[0] > 32) return CL_INVALID_WORK_GROUP_SIZE;
  return small_kernel_max->enqueue(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

TEST_F(ExecutorTest, GivenALocalSizeOverTheKernelsReportedMax_ItShouldBeLaunchedAndRefusedOnlyByTheDriver) {
  for (bool refuse : {false, true}) {
    Result<std::unique_ptr<ClApi>> api = ClApi::Load();
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    cl_device_id device = nullptr;
    ASSERT_NO_FATAL_FAILURE(FirstDevice(**api, &device));
    SmallKernelMax fake{(*api)->clGetKernelWorkGroupInfo, (*api)->clEnqueueNDRangeKernel, refuse};
    small_kernel_max = &fake;
    struct Unset {
      ~Unset() { small_kernel_max = nullptr; }
    } unset;
    (*api)->clGetKernelWorkGroupInfo = ReportSmallKernelMax;
    (*api)->clEnqueueNDRangeKernel = EnqueueHoldingToKernelMax;
    Result<std::unique_ptr<Executor>> executor = Executor::Create(std::move(*api), device);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    const proto::MeasureResult result = (*executor)->Execute(VectorAdd(kAdd));  // local size 64
    if (!refuse) {
      EXPECT_EQ(result.status(), proto::OK) << result.message();
      continue;
    }
    EXPECT_EQ(result.status(), proto::INVALID_CONFIG) << result.message();
    EXPECT_NE(result.message().find("kernel 'add': local size 64 > CL_KERNEL_WORK_GROUP_SIZE 32 (register "
                                    "pressure?): clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE"),
              std::string::npos)
        << result.message();
  }
}

TEST_F(ExecutorTest, GivenAProgramWithoutATimedLaunch_WeShouldReportAMalformedProgram) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->set_phase(proto::KernelLaunch::SETUP);
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::HOST_GENERATION_FAILED);
  EXPECT_NE(result.message().find("no timed launch"), std::string::npos) << result.message();
  EXPECT_EQ(executor_->Execute(proto::KernelProgram()).status(), proto::HOST_GENERATION_FAILED);  // '{}'
}

TEST_F(ExecutorTest, GivenAnUnknownBuffer_WeShouldReportAMalformedProgram) {
  proto::KernelProgram program = VectorAdd(kAdd);
  program.mutable_launches(0)->mutable_args(0)->set_buffer("nope");
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::HOST_GENERATION_FAILED);
  EXPECT_NE(result.message().find("nope"), std::string::npos);
}

TEST_F(ExecutorTest, GivenAnImageFilledBySetup_WeShouldReadItInTheTimedLaunch) {
  if (!executor_->device_info().image_support()) GTEST_SKIP() << "device has no images";
  constexpr char kToImage[] = R"(
__kernel void to_image(__global const float* a, __write_only image2d_t img) {
  int x = get_global_id(0);
  write_imagef(img, (int2)(x, 0), (float4)(a[x], 0, 0, 0));
})";
  constexpr char kFromImage[] = R"(
__kernel void from_image(__read_only image2d_t img, __global float* c) {
  int x = get_global_id(0);
  c[x] = read_imagef(img, CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST, (int2)(x, 0)).x;
})";
  constexpr char kCopy[] =
      "__kernel void copy(__global const float* a, __global float* c) { c[get_global_id(0)] = a[get_global_id(0)]; }";
  proto::KernelProgram program = Program(kToImage, "to_image", proto::FLOAT32, 64, {64}, {});
  proto::ImageSpec* image = program.add_images();
  image->set_name("img");
  image->set_width(64);
  image->set_height(1);
  proto::KernelLaunch* setup = program.mutable_launches(0);
  setup->set_phase(proto::KernelLaunch::SETUP);
  setup->clear_args();
  setup->add_args()->set_buffer("a");
  setup->add_args()->set_image("img");
  proto::KernelLaunch* timed = program.add_launches();
  timed->set_source(kFromImage);
  timed->set_entry("from_image");
  timed->add_args()->set_image("img");
  timed->add_args()->set_buffer("c");
  timed->add_global_size(64);
  proto::KernelProgram* reference = program.mutable_reference();
  *reference = Program(kCopy, "copy", proto::FLOAT32, 64, {64}, {});
  reference->mutable_launches(0)->clear_args();
  reference->mutable_launches(0)->add_args()->set_buffer("a");
  reference->mutable_launches(0)->add_args()->set_buffer("c");
  proto::MeasureResult result = executor_->Execute(program);
  EXPECT_EQ(result.status(), proto::OK) << result.message();
}

// ProgramInstance's limit checks alone, against a made-up device with limits so large that only overflow-checked
// arithmetic catches a size that wraps around. No OpenCL device is needed: a rejected program never reaches the
// compiler (a program without launches that passes comes back built; one with launches would crash on the null
// compile cache).
class ProgramLimitsTest : public ::testing::Test {
 protected:
  ProgramLimitsTest() {
    info_.set_max_alloc_bytes(uint64_t{1} << 62);
    info_.set_global_mem_bytes(std::numeric_limits<uint64_t>::max());
    info_.set_local_mem_bytes(64 * 1024);
    info_.set_max_work_group_size(1024);  // no CL_DEVICE_MAX_WORK_ITEM_SIZES
    info_.set_image_support(true);
    info_.set_image2d_max_width(uint64_t{1} << 40);
    info_.set_image2d_max_height(uint64_t{1} << 40);
    device_.info = &info_;
  }

  proto::MeasureResult Check(const proto::KernelProgram& program) {
    proto::MeasureResult result;
    EXPECT_EQ(ProgramInstance::Build(device_, program, &result), nullptr) << "the program passed every check";
    return result;
  }

  static proto::KernelLaunch* AddLaunch(proto::KernelProgram* program) {
    proto::KernelLaunch* launch = program->add_launches();
    launch->set_source("__kernel void k(__local float* s) {}");
    launch->set_entry("k");
    return launch;
  }

  proto::DeviceInfo info_;
  DeviceContext device_;
};

TEST_F(ProgramLimitsTest, GivenABufferWhoseByteSizeWraps_WeShouldRejectItNamingTheBuffer) {
  proto::KernelProgram program;
  proto::BufferSpec* buffer = program.add_buffers();
  buffer->set_name("huge");
  buffer->set_count(kWrappingCount);
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("buffer 'huge'"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenAToleranceThatIsNaNOrNegative_WeShouldRejectItNamingTheTolerance) {
  proto::KernelProgram nan_rtol;
  AddLaunch(&nan_rtol)->add_global_size(1);
  AddLaunch(nan_rtol.mutable_reference())->add_global_size(1);
  nan_rtol.set_rtol(std::numeric_limits<float>::quiet_NaN());
  proto::MeasureResult result = Check(nan_rtol);
  EXPECT_EQ(result.status(), proto::HOST_GENERATION_FAILED);
  EXPECT_NE(result.message().find("rtol nan is not a tolerance"), std::string::npos) << result.message();
  proto::KernelProgram negative_atol = nan_rtol;
  negative_atol.set_rtol(0);
  negative_atol.set_atol(-1);
  result = Check(negative_atol);
  EXPECT_NE(result.message().find("atol -1.000000 is not a tolerance"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenBuffersWhoseTotalWraps_WeShouldRejectThemAsOverTheMemoryBudget) {
  proto::KernelProgram program;
  // 2^62 bytes less the canary each, every one within the allocation limit (2^62): past 2^64 together.
  for (int i = 0; i < 5; ++i) {
    proto::BufferSpec* buffer = program.add_buffers();
    buffer->set_name("b" + std::to_string(i));
    buffer->set_count((uint64_t{1} << 60) - kCanaryBytes / 4);
  }
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("memory budget"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenAnImageWhoseByteSizeWraps_WeShouldRejectItNamingTheImage) {
  proto::KernelProgram program;
  proto::ImageSpec* image = program.add_images();
  image->set_name("img");
  image->set_width(uint64_t{1} << 31);  // 2^31 x 2^31 pixels of 16 bytes: 2^66 bytes
  image->set_height(uint64_t{1} << 31);
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("image 'img'"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenLocalMemoryArgumentsWhoseSumWraps_WeShouldRejectThem) {
  proto::KernelProgram program;
  proto::KernelLaunch* launch = AddLaunch(&program);
  launch->add_args()->set_local_bytes(uint64_t{1} << 63);
  launch->add_args()->set_local_bytes(uint64_t{1} << 63);
  launch->add_global_size(64);
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("CL_DEVICE_LOCAL_MEM_SIZE"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenALocalSizeWhoseProductWraps_WeShouldRejectItAsOverTheWorkGroupSize) {
  proto::KernelProgram program;
  proto::KernelLaunch* launch = AddLaunch(&program);
  launch->add_args()->set_local_bytes(16);
  for (uint64_t size : {uint64_t{1} << 32, uint64_t{1} << 32, uint64_t{1}}) {  // 2^64 work-items: wraps to 0
    launch->add_global_size(size);
    launch->add_local_size(size);
  }
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("CL_DEVICE_MAX_WORK_GROUP_SIZE"), std::string::npos) << result.message();
}

TEST_F(ProgramLimitsTest, GivenAGlobalSizeWhoseProductWraps_WeShouldRejectIt) {
  proto::KernelProgram program;
  proto::KernelLaunch* launch = AddLaunch(&program);
  launch->add_args()->set_local_bytes(16);
  for (uint64_t size : {uint64_t{1} << 32, uint64_t{1} << 32, uint64_t{1} << 32}) launch->add_global_size(size);
  proto::MeasureResult result = Check(program);
  EXPECT_EQ(result.status(), proto::INVALID_CONFIG);
  EXPECT_NE(result.message().find("global size"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace tunefleet::agent
