// End to end: a tuning log with a gemm.buffer record, the device row as the agent describes the device →
// `export --format kernel-pack` code → tunefleet-runtime on PoCL, with the numbers checked against a CPU product
// and the pack's device recognised as the app's. The program is the real template's generated kernel, so this is
// what an application gets from a tuned log.
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/device_info.h"
#include "common/temp_dir_testing.h"
#include "deploy/runtime/pack_device.h"
#include "deploy/runtime/pack_runner.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/export_kernel_pack.h"

namespace tunefleet {
namespace {

// Records gemm.buffer's fallback config for `spec` on `info`, measured at 0.1 ms.
void AddFallbackRecord(TuningLog& log, const proto::DeviceInfo& info, const std::string& spec) {
  const Template* t = FindTemplate("gemm.buffer");
  ASSERT_NE(t, nullptr);
  Task task = Task::Parse(spec).value();
  Space space = t->MakeSpace(task, DeviceLimits::From(info)).value();
  Config c = t->Fallback(task, space);
  RecordRow r;
  r.device_id = log.UpsertDevice(info).value();
  r.task_id = log.UpsertTask(task.ToSpec(), "gemm", "{}", t->Flops(task)).value();
  r.template_id = log.UpsertTemplate(t->name(), t->version()).value();
  r.config_index = space.IndexOf(c);
  r.config = space.ToJson(c).dump();
  r.costs = {1e-4};
  r.mean_cost = 1e-4;
  ASSERT_TRUE(log.AddRecord(r).ok());
}

TEST(ExportedPackTest, GivenATunedGemmInTheLog_TheAppShouldGetTheRightProductFromThePack) {
  constexpr int M = 32, N = 32, K = 32;
  const std::string spec = "gemm:32,32,32:float32";
  auto dir = std::filesystem::temp_directory_path() / ("tf_exported_pack_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  // The app's OpenCL device, described as an agent would.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), CL_SUCCESS);
  auto api = agent::ClApi::Load();
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  auto described = agent::DescribeDevice(**api, device);
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  const proto::DeviceInfo& info = *described;

  {
    auto log = std::move(TuningLog::Open((dir / "log.db").string())).value();
    ASSERT_NO_FATAL_FAILURE(AddFallbackRecord(*log, info, spec));
    std::ostringstream notes;
    auto packs = BuildKernelPacks(*log, {}, notes);
    ASSERT_TRUE(packs.ok()) << packs.status().ToString();
    ASSERT_TRUE(WriteKernelPacks(*packs, (dir / "pack.json").string()).ok());
  }

  auto pack = runtime::KernelPack::Load((dir / "pack.json").string());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto match = pack->Find(spec);
  ASSERT_TRUE(match.ok()) << match.status().ToString();
  EXPECT_EQ(match->kind, runtime::MatchKind::kExact);
  // The pack names the device as the agent read it, and the runtime reads the same device the same way.
  auto comparison = runtime::CompareDevice(pack->device(), device);
  ASSERT_TRUE(comparison.ok()) << comparison.status().ToString();
  EXPECT_TRUE(comparison->differences.empty()) << comparison->Describe();
  EXPECT_EQ(pack->device().fingerprint, info.fingerprint());

  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(M * K), b(K * N), c(M * N, 0);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  {
    auto buffer = [&](std::vector<float>& host) {
      return runtime::ClMem(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                           host.size() * sizeof(float), host.data(), &err));
    };
    runtime::ClMem da = buffer(a), db = buffer(b), dc = buffer(c);
    auto runner = runtime::PackRunner::Build(context, device, *match->kernel, {"A", "B", "C"});
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    Status s = runner->Run(queue, {{"A", da.get()}, {"B", db.get()}, {"C", dc.get()}});
    ASSERT_TRUE(s.ok()) << s.ToString();
    clEnqueueReadBuffer(queue, dc.get(), CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr, nullptr);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::filesystem::remove_all(dir);

  double max_err = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      max_err = std::max(max_err, std::fabs(want - c[i * N + j]));
    }
  EXPECT_LT(max_err, 1e-3);
}

// The exporter describes each op's named parameters, so that an application's "batch=1" or "act=1" finds the kernel
// the tuner wrote as "gemm:32,32,32:float32" or "act=relu", and writes a fallback per set of named parameters.
TEST(ExportedPackTest, GivenWorkloadsWithNamedParameters_TheAppShouldFindThemHoweverItSpellsThem) {
  TempDir dir;
  proto::DeviceInfo info;
  info.set_vendor("pocl");
  info.set_name("cpu");
  info.set_max_work_group_size(1024);
  for (int i = 0; i < 3; ++i) info.add_max_work_item_sizes(1024);
  info.set_local_mem_bytes(64 * 1024);
  info.set_fingerprint("fp-cpu");
  auto log = std::move(TuningLog::Open(dir.File("log.db"))).value();
  for (const std::string spec : {"gemm:32,32,32", "gemm:16,16,16,transb=1,act=relu"}) {
    ASSERT_NO_FATAL_FAILURE(AddFallbackRecord(*log, info, spec));
  }
  std::ostringstream notes;
  auto packs = BuildKernelPacks(*log, {}, notes);
  ASSERT_TRUE(packs.ok()) << packs.status().ToString();
  ASSERT_EQ(packs->size(), 1u);
  EXPECT_EQ((*packs)[0].pack["fallbacks"].size(), 2u);
  auto pack = runtime::KernelPack::Parse((*packs)[0].pack.dump());
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();

  const std::vector<std::pair<std::string, std::string>> exact = {
      {"gemm:32,32,32,batch=1", "gemm:32,32,32:float32"},
      {"gemm:32,32,32,transb=0,bias=0,act=none", "gemm:32,32,32:float32"},
      {"gemm:16,16,16,act=1,transb=1", "gemm:16,16,16,transb=1,act=relu:float32"}};
  for (const auto& [asked, tuned] : exact) {
    auto m = pack->Find(asked);
    ASSERT_TRUE(m.ok()) << asked << ": " << m.status().ToString();
    EXPECT_EQ(m->kind, runtime::MatchKind::kExact) << asked;
    EXPECT_EQ(m->kernel->task, tuned) << asked;
  }
  // Untuned workloads get the fallback of their own named parameters, and none where no fallback has them.
  auto transposed = pack->Find("gemm:64,64,64,transb=1,act=relu");
  ASSERT_TRUE(transposed.ok()) << transposed.status().ToString();
  EXPECT_EQ(transposed->kind, runtime::MatchKind::kNearest);
  EXPECT_EQ(transposed->kernel->task, "gemm:16,16,16,transb=1,act=relu:float32");
  auto biased = pack->Find("gemm:64,64,64,bias=1");
  EXPECT_EQ(biased.status().code(), Status::Code::kNotFound) << biased.status().ToString();
}

}  // namespace
}  // namespace tunefleet
