// Generation-side tests of conv2d_1x1.buffer: no device needed.
#include "search-spaces/conv2d_1x1_buffer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::Divisors;
using testing::ParseTask;

TEST(Conv2d1x1Buffer, GivenASmallTaskTheValidCountShouldMatchAnIndependentCount) {
  // K = 4, OH·OW = 3·3 = 9 (stride 2 on 5×5, pad 0), C = 6.
  const Task task = ParseTask("conv2d:1,6,5,5,4,1,1,2,0");
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 8;
  lim.local_mem_bytes = 40;
  Conv2d1x1BufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();

  uint64_t expected = 0;
  for (int64_t kt : Divisors(4))
    for (int64_t ki : Divisors(4 / kt))
      for (int64_t pt : Divisors(9))
        for (int64_t pi : Divisors(9 / pt))
          for (int64_t ci : Divisors(6)) {
            if (kt * pt > 8 || pi > 8) continue;  // work-group, at most 8 pixels per work-item
            for (int64_t split : {1, 2, 4, 8, 16}) {
              if ((6 / ci) % split != 0) continue;
              for (int64_t cache : {0, 1}) {
                if (cache && kt * ki * ci * 4 > 40) continue;  // local memory, float32
                expected += 2;                                // unroll 0/1
              }
            }
          }
  EXPECT_EQ(space->CountValid(), expected);
}

TEST(Conv2d1x1Buffer, GivenAKernelLargerThan1x1OrGroupsItShouldNotSupportTheTask) {
  Conv2d1x1BufferTemplate tmpl;
  std::string why;
  EXPECT_FALSE(tmpl.Supports(ParseTask("conv2d:1,8,8,8,8,3,3,1,1"), GpuLikeLimits(), &why));
  EXPECT_EQ(why, "not a 1×1 kernel");
  EXPECT_FALSE(tmpl.Supports(ParseTask("conv2d:1,8,8,8,8,1,1,1,0,groups=2"), GpuLikeLimits(), &why));
  EXPECT_EQ(why, "grouped convolution");
  EXPECT_FALSE(tmpl.Supports(ParseTask("dwconv2d:1,8,8,8,1,1,1,0"), GpuLikeLimits(), &why));
  EXPECT_TRUE(tmpl.Supports(ParseTask("conv2d:1,64,56,56,128,1,1,2,0"), GpuLikeLimits(), &why)) << why;
  EXPECT_FALSE(tmpl.MakeSpace(ParseTask("conv2d:1,8,8,8,8,3,3,1,1"), GpuLikeLimits()).ok());
}

TEST(Conv2d1x1Buffer, GivenASplitOrTileThatBreaksALimitItShouldBeRejectedBeforeCompiling) {
  const Task task = ParseTask("conv2d:1,6,4,4,8,1,1,1,0");
  DeviceLimits lim = GpuLikeLimits();
  lim.local_mem_bytes = 64;
  Conv2d1x1BufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_k", {1, 2, 4}}, {"tile_p", {1, 16, 1}}, {"tile_c", {6, 1}},
                      {"split_c", 4},        {"cache_w", 0},        {"unroll", 1}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(space->Check(*c).find("split_c 4 does not divide the 6 outer channel steps"), std::string::npos);
  EXPECT_FALSE(tmpl.Generate(task, *space, *c).ok());
  j["split_c"] = 1;
  j["tile_c"] = {1, 6};
  j["cache_w"] = 1;  // 8 channels × 6 × 4 bytes = 192 > 64
  c = space->FromJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(space->Check(*c).find("local memory"), std::string::npos) << space->Check(*c);
}

TEST(Conv2d1x1Buffer, GivenASplitTheProgramShouldAddTheSlicesInASecondTimedLaunch) {
  const Task task = ParseTask("conv2d:1,8,4,4,4,1,1,1,0,bias=1");
  Conv2d1x1BufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_k", {1, 2, 2}}, {"tile_p", {1, 16, 1}}, {"tile_c", {4, 2}},
                      {"split_c", 4},        {"cache_w", 1},        {"unroll", 1}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok());
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ(prog->launches_size(), 2);
  EXPECT_EQ(prog->launches(0).entry(), "conv2d_1x1");
  EXPECT_EQ(prog->launches(1).entry(), "conv2d_split_reduce");
  EXPECT_EQ(prog->launches(1).phase(), proto::KernelLaunch::TIMED);
  // Global size: pixel threads × channel threads × (images · split).
  EXPECT_EQ(prog->launches(0).global_size(0), 16u);
  EXPECT_EQ(prog->launches(0).global_size(1), 2u);
  EXPECT_EQ(prog->launches(0).global_size(2), 4u);
}

}  // namespace
}  // namespace tunefleet
