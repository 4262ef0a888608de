// Generation-side tests of depthwise_conv2d_nchwc.image2d: no device needed.
#include "search-spaces/depthwise_conv2d_nchwc_image2d.h"

#include <gtest/gtest.h>

#include <array>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;
using testing::Splits3;

TEST(DepthwiseConv2dNchwcImage2d, GivenASmallTaskTheValidCountShouldMatchAnIndependentCount) {
  // C = 12 -> 3 channel blocks; 8x8 output (stride 1, pad 1); 3x3 kernel.
  const Task task = ParseTask("dwconv2d:1,12,8,8,3,3,1,1");
  Result<Space> space = DepthwiseConv2dNchwcImage2dTemplate().MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  uint64_t expected = 0;
  for (auto f : Splits3(3))
    for (auto y : Splits3(8))
      for (auto x : Splits3(8)) {
        const int64_t wg = f[2] * y[2] * x[2];
        if (f[1] * y[1] * x[1] <= 24 && wg >= 32 && wg < 1024) expected += 2 * 2 * 3 * 2;
      }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(space->CountValid(), expected);
}

TEST(DepthwiseConv2dNchwcImage2d, GivenAChannelMultiplierWeShouldSayItIsNotSupported) {
  std::string why;
  EXPECT_FALSE(DepthwiseConv2dNchwcImage2dTemplate().Supports(ParseTask("dwconv2d:1,8,8,8,3,3,1,1,multiplier=2"),
                                                              GpuLikeLimits(), &why));
  EXPECT_NE(why.find("multiplier 1"), std::string::npos) << why;
  EXPECT_TRUE(DepthwiseConv2dNchwcImage2dTemplate().Supports(ParseTask("conv2d:1,8,8,8,8,3,3,1,1,groups=8"),
                                                             GpuLikeLimits(), &why));
}

TEST(DepthwiseConv2dNchwcImage2d, GivenAVirtualThreadProductOver24WeShouldRejectTheConfig) {
  const Task task = ParseTask("dwconv2d:1,16,32,32,3,3,1,1");
  DepthwiseConv2dNchwcImage2dTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  // vthreads 1 * 4 * 8 = 32 > 24.
  nlohmann::json j = {{"tile_fc", {4, 1, 1}}, {"tile_y", {1, 4, 8}}, {"tile_x", {1, 8, 4}}, {"tile_ry", {3, 1}},
                      {"tile_rx", {3, 1}}, {"auto_unroll_max_step", 0}, {"unroll_explicit", 0}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(space->Check(*c).find("virtual threads"), std::string::npos) << space->Check(*c);
  EXPECT_FALSE(tmpl.Generate(task, *space, *c).ok());
}

TEST(DepthwiseConv2dNchwcImage2d, GivenAConfigOneWeightReadPerChannelBlockShouldEnterItsReadFeatures) {
  const Task task = ParseTask("dwconv2d:1,16,8,8,3,3,1,1");
  DepthwiseConv2dNchwcImage2dTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_fc", {1, 2, 2}}, {"tile_y", {2, 2, 2}}, {"tile_x", {1, 1, 8}},
                      {"tile_ry", {3, 1}},   {"tile_rx", {1, 3}},   {"auto_unroll_max_step", 0},
                      {"unroll_explicit", 0}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(space->Valid(*c)) << space->Check(*c);
  const std::vector<float> f = tmpl.DerivedFeatures(task, *space, *c, GpuLikeLimits());
  ASSERT_EQ(f.size(), 11u);
  EXPECT_EQ(f[3], 3.0f);                 // inner steps: 1 row x 3 columns, no channel lanes
  EXPECT_EQ(f[4], 0.0f);                 // unroll step 0: not unrolled
  EXPECT_FLOAT_EQ(f[7], 4 * 4.0f / 4);   // 4 accumulators x 4 / (2 weight + 2 data reads)
  EXPECT_EQ(f[8], 4.0f);
  EXPECT_EQ(f[9], 0.0f);                 // nothing unrolled
  EXPECT_EQ(f[10], 3.0f);                // outer steps: 3 rows x 1 column
}

}  // namespace
}  // namespace tunefleet
