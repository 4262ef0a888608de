// CheckGemmBufferLaunch against the gemm.buffer template itself: every launch the template generates passes, and the
// same launch with its geometry edited is refused. The template is the one the exporter regenerates packs from.
#include "deploy/runtime/gemm_launch_check.h"

#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "search-spaces/device_limits.h"
#include "search-spaces/task.h"
#include "search-spaces/template.h"

namespace tunefleet::runtime {
namespace {

// The pack entry the exporter writes for `config` of `spec`: its task, template, config and the one launch.
PackedKernel Exported(const Template& t, const Task& task, const Space& space, const Config& config) {
  proto::KernelProgram program = t.Generate(task, space, config).value();
  PackedKernel k;
  k.task = task.ToSpec();
  k.template_name = t.name();
  k.config = space.ToJson(config).dump();
  for (const proto::BufferSpec& b : program.buffers()) {
    PackBuffer buffer;
    buffer.name = b.name();
    buffer.count = b.count();  // float32 tasks only here
    buffer.bytes = b.count() * 4;
    k.program.buffers.push_back(buffer);
  }
  for (const proto::KernelLaunch& l : program.launches()) {
    PackLaunch launch;
    launch.entry = l.entry();
    launch.global_size.assign(l.global_size().begin(), l.global_size().end());
    launch.local_size.assign(l.local_size().begin(), l.local_size().end());
    k.program.launches.push_back(launch);
  }
  return k;
}

TEST(GemmLaunchCheckTest, GivenTheTemplatesOwnLaunches_TheyShouldPassAndTheSameEditedShouldNot) {
  const Template* t = FindTemplate("gemm.buffer");
  ASSERT_NE(t, nullptr);
  std::mt19937_64 rng(7);
  // Tiles that divide the problem (no bounds checks in the kernel), tiles that do not, and a batch.
  for (const char* spec : {"gemm:64,64,64:float32", "gemm:100,37,20:float32", "gemm:16,48,8,batch=3:float32"}) {
    const Task task = Task::Parse(spec).value();
    const Space space = t->MakeSpace(task, DeviceLimits::Unbounded()).value();
    const uint64_t m = task.Get("M"), n = task.Get("N"), kk = task.Get("K"), batch = task.Get("batch", 1);
    for (int i = 0; i < 50; ++i) {
      const std::optional<uint64_t> index = space.SampleValid(rng);
      ASSERT_TRUE(index.has_value()) << spec;
      const PackedKernel k = Exported(*t, task, space, space.FromIndex(*index));
      ASSERT_TRUE(CheckGemmBufferLaunch(k, m, n, kk, batch).ok())
          << spec << " " << k.config << ": " << CheckGemmBufferLaunch(k, m, n, kk, batch).ToString();

      PackedKernel wider = k;  // one more work-group across N: past C's columns when the tiles divide N
      wider.program.launches[0].global_size[0] += wider.program.launches[0].local_size[0];
      PackedKernel doubled = k;
      doubled.program.launches[0].global_size[1] *= 2;
      PackedKernel batched = k;
      batched.program.launches[0].global_size[2] += 1;
      PackedKernel regrouped = k;
      regrouped.program.launches[0].local_size = {1, 1, 1};
      PackedKernel fewer = k;  // A's count edited down: an application's buffer of that size passed Run's check
      fewer.program.buffers[0].count /= 2;
      for (const PackedKernel* edited : {&wider, &doubled, &batched, &regrouped, &fewer}) {
        const Status s = CheckGemmBufferLaunch(*edited, m, n, kk, batch);
        EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << spec << " " << k.config;
        EXPECT_NE(s.message().find("the pack was edited or is damaged"), std::string::npos) << s.ToString();
      }
    }
  }
}

TEST(GemmLaunchCheckTest, GivenAnEditedLaunch_TheMessageShouldSayWhatItAsksAndWhatTheConfigGives) {
  const Template* t = FindTemplate("gemm.buffer");
  ASSERT_NE(t, nullptr);
  const Task task = Task::Parse("gemm:64,64,64:float32").value();
  const Space space = t->MakeSpace(task, DeviceLimits::Unbounded()).value();
  PackedKernel k = Exported(*t, task, space, t->Fallback(task, space));  // 32x32 tiles on 8x8 items
  k.program.launches[0].global_size = {64, 16, 1};
  EXPECT_EQ(CheckGemmBufferLaunch(k, 64, 64, 64).message(),
            "gemm:64,64,64:float32 (gemm.buffer): launch 'gemm_tuned' asks for global size 64x16x1 and local size "
            "8x8x1, but its config (MWG=32 NWG=32 MDIMC=8 NDIMC=8) gives 16x16x1 and 8x8x1 for M=64, N=64: the pack "
            "was edited or is damaged, and more work-items would read and write past the buffers; not launched");
}

TEST(GemmLaunchCheckTest, GivenAnotherTemplateAConfigWithoutTilesOrASecondLaunch_ItShouldBeRefused) {
  const Template* t = FindTemplate("gemm.buffer");
  ASSERT_NE(t, nullptr);
  const Task task = Task::Parse("gemm:64,64,64:float32").value();
  const Space space = t->MakeSpace(task, DeviceLimits::Unbounded()).value();
  const PackedKernel k = Exported(*t, task, space, t->Fallback(task, space));
  PackedKernel other = k;
  other.template_name = "gemm.other";
  EXPECT_NE(CheckGemmBufferLaunch(other, 64, 64, 64).message().find("gemm.buffer kernels only"), std::string::npos);
  for (const char* config : {"{}", R"({"MWG":32,"NWG":32,"MDIMC":0,"NDIMC":8})", R"({"MWG":"32"})", "[1]"}) {
    PackedKernel edited = k;
    edited.config = config;
    EXPECT_EQ(CheckGemmBufferLaunch(edited, 64, 64, 64).code(), Status::Code::kInvalidArgument) << config;
  }
  PackedKernel two = k;
  two.program.launches.push_back(two.program.launches[0]);
  EXPECT_NE(CheckGemmBufferLaunch(two, 64, 64, 64).message().find("a gemm.buffer program has one launch, this one 2"),
            std::string::npos);
}

TEST(GemmLaunchCheckTest, GivenAnOperandCountEditedOrMissing_TheMessageShouldSayWhatTheKernelIndexes) {
  const Template* t = FindTemplate("gemm.buffer");
  ASSERT_NE(t, nullptr);
  const Task task = Task::Parse("gemm:64,32,16:float32").value();
  const Space space = t->MakeSpace(task, DeviceLimits::Unbounded()).value();
  const PackedKernel k = Exported(*t, task, space, t->Fallback(task, space));
  ASSERT_TRUE(CheckGemmBufferLaunch(k, 64, 32, 16).ok()) << CheckGemmBufferLaunch(k, 64, 32, 16).ToString();
  PackedKernel edited = k;
  edited.program.buffers[1].count = 10;  // B
  EXPECT_EQ(CheckGemmBufferLaunch(edited, 64, 32, 16).message(),
            "gemm:64,32,16:float32 (gemm.buffer): buffer 'B' holds 10 elements, but the kernel indexes 512 float32 "
            "elements of it for M=64, N=32, K=16: the pack was edited or is damaged, and a smaller buffer would pass "
            "its size check; not launched");
  PackedKernel half = k;
  half.program.buffers[2].type = ElemType::kFloat16;  // C
  EXPECT_NE(CheckGemmBufferLaunch(half, 64, 32, 16).message().find("buffer 'C' is not float32"), std::string::npos);
  PackedKernel renamed = k;
  renamed.program.buffers[0].name = "X";
  EXPECT_NE(CheckGemmBufferLaunch(renamed, 64, 32, 16).message().find("buffer 'A' is missing"), std::string::npos);
  // The workload's K, not the pack's: a pack for K=16 does not pass as one for K=32.
  EXPECT_FALSE(CheckGemmBufferLaunch(k, 64, 32, 32).ok());
}

}  // namespace
}  // namespace tunefleet::runtime
