// Generation-side tests of conv2d_winograd: no device needed.
#include "search-spaces/winograd.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;

TEST(Conv2dWinograd, GivenASmallTaskTheValidCountShouldMatchAnIndependentCount) {
  // C = 3, K = 5, 6x6 output -> P = 9 tiles (m = 2) or 4 tiles (m = 4).
  const Task task = ParseTask("conv2d:1,3,6,6,5,3,3,1,1");
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 64;
  lim.local_mem_bytes = 512;
  Result<Space> space = Conv2dWinogradTemplate().MakeSpace(task, lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  uint64_t expected = 0;
  for (int64_t m : {2, 4}) {
    const int64_t p = m == 2 ? 9 : 4;
    for (int64_t kth : {1, 2, 4, 8, 16, 32})
      for (int64_t ki : {1, 2, 4, 8})
        for (int64_t pth : {1, 2, 4, 8, 16, 32, 64})
          for (int64_t pi : {1, 2, 4, 8})
            for (int64_t cs : {1, 2, 4, 8, 16}) {
              const bool fill = kth * ki < 10 && pth * pi < 2 * p && cs < 6;
              const bool wg = kth * pth <= 64;
              const bool local = 4 * (kth * ki * cs + cs * pth * pi) <= 512;
              if (fill && wg && ki * pi <= 64 && local) expected += 2;  // x unroll
            }
  }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(space->CountValid(), expected);
}

TEST(Conv2dWinograd, GivenAStride2Or5x5LayerWeShouldNotSupportIt) {
  std::string why;
  EXPECT_FALSE(Conv2dWinogradTemplate().Supports(ParseTask("conv2d:1,8,8,8,8,3,3,2,1"), GpuLikeLimits(), &why));
  EXPECT_NE(why.find("stride 1"), std::string::npos);
  EXPECT_FALSE(Conv2dWinogradTemplate().Supports(ParseTask("conv2d:1,8,8,8,8,5,5,1,2"), GpuLikeLimits(), &why));
}

TEST(Conv2dWinograd, GivenAConfigTheKernelTransformShouldBeSetupAndTheRestTimed) {
  const Task task = ParseTask("conv2d:1,64,56,56,64,3,3,1,1:float16");
  Conv2dWinogradTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ(prog->launches_size(), 4);
  EXPECT_EQ(prog->launches(0).phase(), proto::KernelLaunch::SETUP);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(prog->launches(i).phase(), proto::KernelLaunch::TIMED);
  EXPECT_EQ(prog->launches(2).entry(), "wino_gemm");
  EXPECT_DOUBLE_EQ(tmpl.Flops(task), 2.0 * 64 * 56 * 56 * 64 * 9);
}

TEST(Conv2dWinograd, GivenHalfStorageEveryKernelShouldNeedNoFp16AndStageFloats) {
  const Task task = ParseTask("conv2d:1,16,14,14,16,3,3,1,1,bias=1:float16-acc32");
  Conv2dWinogradTemplate tmpl;
  DeviceLimits lim = GpuLikeLimits();
  lim.fp16 = false;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  const nlohmann::json j = {{"tile_size", 2}, {"k_thread", 4}, {"k_inner", 2}, {"p_thread", 8},
                            {"p_inner", 2},   {"c_step", 8},   {"auto_unroll_max_step", 0}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  for (const auto& l : prog->launches()) EXPECT_EQ(l.source().find("cl_khr_fp16"), std::string::npos) << l.entry();
  EXPECT_NE(prog->launches(2).source().find("__local LT us[KT * CS];"), std::string::npos);
  // Feature 2, the local bytes: (KT * CS + CS * PT) floats.
  EXPECT_EQ(tmpl.DerivedFeatures(task, *space, *c, lim)[2], (8 * 8 + 8 * 16) * 4.0f);
}

}  // namespace
}  // namespace tunefleet
