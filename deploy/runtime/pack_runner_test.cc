// Runs a packed GEMM on the first OpenCL device (PoCL here) through the application-facing runtime and
// checks its numbers against a CPU product.
#include "deploy/runtime/pack_runner.h"

#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "deploy/runtime/gemm_pack_testing.h"

namespace tunefleet::runtime {
namespace {

// The application's side: its own context, queue and buffers.
class PackRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform = nullptr;
    ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
    ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr), CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    queue_ = clCreateCommandQueue(context_, device_, 0, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }
  ClMem Buffer(const std::vector<float>& host) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float),
                              const_cast<float*>(host.data()), &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return ClMem(m);
  }

  // Builds `kernel` for the app's device, runs it on buffers A, B and C, and reads C back into *out.
  void BuildRunAndReadC(const PackedKernel& kernel, const ClMem& a, const ClMem& b, const ClMem& c,
                        std::vector<float>* out) {
    auto runner = PackRunner::Build(context_, device_, kernel, {"A", "B", "C"});
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    Status s = runner->Run(queue_, {{"A", a.get()}, {"B", b.get()}, {"C", c.get()}});
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(clEnqueueReadBuffer(queue_, c.get(), CL_TRUE, 0, out->size() * sizeof(float), out->data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

TEST_F(PackRunnerTest, GivenAPackedGemm_WeShouldComputeTheProductOnTheAppsBuffers) {
  constexpr int M = 24, N = 20, K = 12;  // not multiples of the 8x8 work-group: the kernel guards the tail
  auto pack = KernelPack::Parse(GemmPack({GemmPackEntry(M, N, K)}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto match = pack->Find("gemm:24,20,12:float32");
  ASSERT_TRUE(match.ok());

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(M * K), b(K * N), c(M * N, 0);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  ClMem da = Buffer(a), db = Buffer(b), dc = Buffer(c);
  ASSERT_NO_FATAL_FAILURE(BuildRunAndReadC(*match->kernel, da, db, dc, &c));

  double max_err = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      max_err = std::max(max_err, std::fabs(want - c[i * N + j]));
    }
  EXPECT_LT(max_err, 1e-4);
}

TEST_F(PackRunnerTest, GivenABufferSmallerThanTheProgramNeeds_RunShouldRefuseIt) {
  auto pack = KernelPack::Parse(GemmPack({GemmPackEntry(16, 16, 16)}).dump());
  ASSERT_TRUE(pack.ok());
  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  ClMem small = Buffer(std::vector<float>(8)), ok = Buffer(std::vector<float>(256));
  Status s = runner->Run(queue_, {{"A", small.get()}, {"B", ok.get()}, {"C", ok.get()}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("buffer 'A'"), std::string::npos) << s.ToString();
}

// Misuse the application can make: a name the program lacks (said by Build, not first by Run), an image where the
// program has a buffer (its size passed the check, and the kernel got an image), a runner that was moved from (Run
// indexed its empty kernels: a crash).
TEST_F(PackRunnerTest, GivenAnUnknownBufferNameAnImageOrAMovedFromRunner_BuildAndRunShouldRefuseThem) {
  auto pack = KernelPack::Parse(GemmPack({GemmPackEntry(16, 16, 16)}).dump());
  ASSERT_TRUE(pack.ok());
  auto unknown = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "ZZZ"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("the program has no buffer 'ZZZ' (app_buffers)"), std::string::npos)
      << unknown.status().ToString();

  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  ClMem ok = Buffer(std::vector<float>(256));
  const cl_image_format format{CL_RGBA, CL_FLOAT};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 64;
  desc.image_height = 64;  // 64 KiB: larger than A needs
  cl_int err = CL_SUCCESS;
  ClMem image(clCreateImage(context_, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  Status as_buffer = runner->Run(queue_, {{"A", image.get()}, {"B", ok.get()}, {"C", ok.get()}});
  EXPECT_EQ(as_buffer.code(), Status::Code::kInvalidArgument) << as_buffer.ToString();
  EXPECT_NE(as_buffer.message().find("'A' is a buffer of the program, given an image"), std::string::npos)
      << as_buffer.ToString();

  PackRunner moved = std::move(*runner);
  Status from_moved = runner->Run(queue_, {{"A", ok.get()}, {"B", ok.get()}, {"C", ok.get()}});
  EXPECT_EQ(from_moved.code(), Status::Code::kFailedPrecondition) << from_moved.ToString();
  EXPECT_TRUE(moved.Run(queue_, {{"A", ok.get()}, {"B", ok.get()}, {"C", ok.get()}}).ok());
}

TEST_F(PackRunnerTest, GivenAKernelThatDoesNotCompile_BuildShouldReturnTheBuildLog) {
  nlohmann::json entry = GemmPackEntry(8, 8, 8);
  entry["program"]["launches"][1]["source"] = "__kernel void gemm(__global float* C) { C[0] = undefined_name; }";
  auto pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok());
  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.status().message().find("clBuildProgram"), std::string::npos);
  EXPECT_NE(runner.status().message().find("undefined_name"), std::string::npos) << runner.status().ToString();
}

TEST_F(PackRunnerTest, GivenAScratchBuffer_BuildShouldZeroFillItOnTheDevice) {
  // Without the setup launch the GEMM reads the scratch Bt as Build left it: all zeros, so C becomes zeros.
  nlohmann::json entry = GemmPackEntry(8, 8, 8);
  entry["program"]["launches"].erase(0);
  auto pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  std::vector<float> c(64, 1.0f);
  ClMem da = Buffer(std::vector<float>(64, 1.0f)), db = Buffer(std::vector<float>(64, 1.0f)), dc = Buffer(c);
  ASSERT_NO_FATAL_FAILURE(BuildRunAndReadC(pack->kernels()[0], da, db, dc, &c));
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST_F(PackRunnerTest, GivenALocalSizeOfAnotherRankThanTheGlobalSize_RunShouldRefuseIt) {
  // Load refuses such a pack; a PackedKernel made by hand must not make Run read past local_size either.
  auto pack = KernelPack::Parse(GemmPack({GemmPackEntry(8, 8, 8)}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  PackedKernel kernel = pack->kernels()[0];
  kernel.program.launches[1].local_size = {8};
  ClMem a = Buffer(std::vector<float>(64)), b = Buffer(std::vector<float>(64)), c = Buffer(std::vector<float>(64));
  auto runner = PackRunner::Build(context_, device_, kernel, {"A", "B", "C"});
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  Status s = runner->Run(queue_, {{"A", a.get()}, {"B", b.get()}, {"C", c.get()}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("local_size has 1 dimensions, global_size 2"), std::string::npos) << s.ToString();
}

TEST_F(PackRunnerTest, GivenAnInputBufferOfAWrappingByteSize_RunShouldRefuseASmallAppBuffer) {
  // Run compares the app's buffer with the byte size computed at Load, never a wrapped count * ElemBytes.
  auto pack = KernelPack::Parse(GemmPack({GemmPackEntry(8, 8, 8)}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  PackedKernel kernel = pack->kernels()[0];
  PackBuffer& a_spec = kernel.program.buffers[0];
  a_spec.count = uint64_t{1} << 62;  // count * 4 wraps to 0
  a_spec.bytes = std::numeric_limits<uint64_t>::max();  // what Load would have refused; here: never enough
  ClMem a = Buffer(std::vector<float>(64)), b = Buffer(std::vector<float>(64)), c = Buffer(std::vector<float>(64));
  auto runner = PackRunner::Build(context_, device_, kernel, {"A", "B", "C"});
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  Status s = runner->Run(queue_, {{"A", a.get()}, {"B", b.get()}, {"C", c.get()}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("buffer 'A' holds 256 bytes"), std::string::npos) << s.ToString();
}

// A pack tuned on another device may ask for more than this one gives. Build says so, naming the limit, instead of
// leaving the application CL_INVALID_WORK_GROUP_SIZE or CL_OUT_OF_RESOURCES from its first Run.
TEST_F(PackRunnerTest, GivenAWorkGroupLargerThanTheCompiledKernelAllows_BuildShouldNameTheLimit) {
  size_t device_max = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(device_max), &device_max, nullptr),
            CL_SUCCESS);
  // Twice the device's work-group, as two dimensions each within the per-dimension limits (8 x 2*max/8).
  const int64_t rows = static_cast<int64_t>(2 * device_max / 8);
  nlohmann::json entry = GemmPackEntry(8, 8, 8);
  entry["program"]["launches"][1]["global_size"] = {8, rows};
  entry["program"]["launches"][1]["local_size"] = {8, rows};
  auto pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), Status::Code::kInvalidArgument);
  const std::string m = runner.status().message();
  EXPECT_NE(m.find("gemm:8,8,8:float32: kernel 'gemm': local size 8x" + std::to_string(rows) + " = " +
                   std::to_string(2 * device_max) + " work-items > CL_KERNEL_WORK_GROUP_SIZE"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("a pack tuned on another device"), std::string::npos) << m;
}

TEST_F(PackRunnerTest, GivenAWorkGroupDimensionBeyondTheDevicesItemSizes_BuildShouldNameTheLimit) {
  size_t max_items[3] = {0, 0, 0};
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(max_items), max_items, nullptr),
            CL_SUCCESS);
  const int64_t wide = static_cast<int64_t>(2 * max_items[0]);
  nlohmann::json entry = GemmPackEntry(8, 8, 8);
  entry["program"]["launches"][1]["global_size"] = {wide, 8};
  entry["program"]["launches"][1]["local_size"] = {wide, 1};
  auto pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(runner.status().message().find("local size " + std::to_string(wide) + "x1: dimension 0 exceeds "
                                           "CL_DEVICE_MAX_WORK_ITEM_SIZES " + std::to_string(max_items[0])),
            std::string::npos)
      << runner.status().message();
}

TEST_F(PackRunnerTest, GivenMoreLocalMemoryThanTheDeviceHas_BuildShouldNameTheLimit) {
  cl_ulong device_local = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(device_local), &device_local, nullptr),
            CL_SUCCESS);
  nlohmann::json entry = GemmPackEntry(8, 8, 8);
  nlohmann::json& launch = entry["program"]["launches"][1];
  launch["source"] = R"(
__kernel void gemm(__global const float* A, __global const float* Bt, __global float* C, int M, int N, int K,
                   __local float* tile) {
  tile[get_local_id(0)] = A[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  C[get_global_id(0)] = tile[get_local_id(0)];
})";
  launch["args"].push_back({{"local_bytes", device_local + 4}});
  auto pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto runner = PackRunner::Build(context_, device_, pack->kernels()[0], {"A", "B", "C"});
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(runner.status().message().find("> CL_DEVICE_LOCAL_MEM_SIZE " + std::to_string(device_local)),
            std::string::npos)
      << runner.status().message();

  launch["args"].back() = {{"local_bytes", 256}};  // what fits builds, and runs
  pack = KernelPack::Parse(GemmPack({entry}).dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  std::vector<float> c(64, 0.0f);
  ClMem da = Buffer(std::vector<float>(64, 2.0f)), db = Buffer(std::vector<float>(64)), dc = Buffer(c);
  ASSERT_NO_FATAL_FAILURE(BuildRunAndReadC(pack->kernels()[0], da, db, dc, &c));
  EXPECT_EQ(c[0], 2.0f);
}

}  // namespace
}  // namespace tunefleet::runtime
