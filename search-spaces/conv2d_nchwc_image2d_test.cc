// Generation-side tests of conv2d_nchwc.image2d: no device needed.
#include "search-spaces/conv2d_nchwc_image2d.h"

#include <gtest/gtest.h>

#include <array>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;
using testing::Splits3;

TEST(Conv2dNchwcImage2d, GivenASmallTaskTheValidCountShouldMatchAnIndependentCount) {
  // K = 8 -> 2 channel blocks (even: thread part >= 2); 6x6 output; C = 5 -> 2 input blocks; 3x3 kernel.
  const Task task = ParseTask("conv2d:1,5,6,6,8,3,3,1,1");
  Conv2dNchwcImage2dTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  uint64_t expected = 0;
  for (auto f : Splits3(2)) {
    if (!(f[1] <= 8 && f[2] >= 2 && f[2] < 256)) continue;
    for (auto y : Splits3(6)) {
      if (!(y[1] <= 8 && y[2] <= 16)) continue;
      for (auto x : Splits3(6)) {
        if (!(x[1] <= 8 && x[2] <= 16)) continue;
        const int64_t wg = f[2] * y[2] * x[2];
        if (f[1] * y[1] * x[1] <= 24 && wg >= 32 && wg < 1024) expected += 2 * 2 * 2 * 3 * 2;
      }
    }
  }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(space->CountValid(), expected);
}

TEST(Conv2dNchwcImage2d, GivenTvmKnobNamesTheSpaceShouldListThemInTvmOrder) {
  Result<Space> space = Conv2dNchwcImage2dTemplate().MakeSpace(ParseTask("conv2d:1,16,8,8,16,3,3,1,1"),
                                                               GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  std::vector<std::string> names;
  for (const auto& k : space->knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_fc", "tile_y", "tile_x", "tile_rcc", "tile_ry", "tile_rx",
                                             "auto_unroll_max_step", "unroll_explicit"}));
}

TEST(Conv2dNchwcImage2d, GivenTooFewThreadsWeShouldRejectTheConfigBeforeCompiling) {
  const Task task = ParseTask("conv2d:1,8,16,16,8,3,3,1,1");
  Conv2dNchwcImage2dTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_fc", {1, 1, 2}}, {"tile_y", {16, 1, 1}}, {"tile_x", {16, 1, 1}},
                      {"tile_rcc", {2, 1}},  {"tile_ry", {3, 1}},    {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 0}, {"unroll_explicit", 0}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(space->Check(*c).find("work-group of 2 items"), std::string::npos) << space->Check(*c);
  EXPECT_FALSE(tmpl.Generate(task, *space, *c).ok());
}

TEST(Conv2dNchwcImage2d, GivenNoImagesOrNoFp16WeShouldSayWhy) {
  Conv2dNchwcImage2dTemplate tmpl;
  DeviceLimits lim = GpuLikeLimits();
  lim.image_support = false;
  std::string why;
  EXPECT_FALSE(tmpl.Supports(ParseTask("conv2d:1,8,16,16,8,3,3,1,1"), lim, &why));
  EXPECT_NE(why.find("no image support"), std::string::npos) << why;
  lim = GpuLikeLimits();
  lim.image2d_max_height = 64;  // 1 * 2 blocks * 40 rows = 80 > 64
  EXPECT_FALSE(tmpl.Supports(ParseTask("conv2d:1,8,40,40,8,3,3,1,1"), lim, &why));
  lim = GpuLikeLimits();
  lim.fp16 = false;
  EXPECT_FALSE(tmpl.Supports(ParseTask("conv2d:1,8,16,16,8,3,3,1,1:float16"), lim, &why));
  EXPECT_EQ(why, "device has no cl_khr_fp16");
  EXPECT_TRUE(tmpl.Supports(ParseTask("conv2d:1,8,16,16,8,3,3,1,1:float16-acc32"), lim, &why)) << why;
}

TEST(Conv2dNchwcImage2d, GivenHalfStorageThePacksAndTheKernelShouldNeedNoFp16) {
  const Task task = ParseTask("conv2d:1,8,16,16,8,3,3,1,1,bias=1:float16-acc32");
  Conv2dNchwcImage2dTemplate tmpl;
  DeviceLimits lim = GpuLikeLimits();
  lim.fp16 = false;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ(prog->images_size(), 2);
  EXPECT_EQ(prog->images(0).type(), proto::FLOAT16);  // CL_HALF_FLOAT pixels, read with read_imagef
  ASSERT_EQ(prog->launches_size(), 3);                // two packs (SETUP), the convolution (TIMED)
  for (const auto& l : prog->launches()) {
    EXPECT_EQ(l.source().find("cl_khr_fp16"), std::string::npos) << l.entry();
    EXPECT_EQ(l.source().find("read_imageh"), std::string::npos) << l.entry();
  }
  EXPECT_NE(prog->launches(0).source().find("(float)LD(src, "), std::string::npos);
  EXPECT_NE(prog->launches(2).source().find("LD(bias, k)"), std::string::npos);
}

TEST(Conv2dNchwcImage2d, GivenFloat16TheKernelShouldReadHalfImagesAndPackInSetupLaunches) {
  const Task task = ParseTask("conv2d:1,8,16,16,8,3,3,1,1:float16");
  Conv2dNchwcImage2dTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ(prog->launches_size(), 3);
  EXPECT_EQ(prog->launches(0).phase(), proto::KernelLaunch::SETUP);
  EXPECT_EQ(prog->launches(1).phase(), proto::KernelLaunch::SETUP);
  EXPECT_EQ(prog->launches(2).phase(), proto::KernelLaunch::TIMED);
  EXPECT_NE(prog->launches(2).source().find("read_imageh"), std::string::npos);
  ASSERT_EQ(prog->images_size(), 2);
  EXPECT_EQ(prog->images(0).type(), proto::FLOAT16);
  EXPECT_EQ(prog->images(0).width(), 16u);
  EXPECT_EQ(prog->images(0).height(), 2u * 16u);
}

TEST(Conv2dNchwcImage2d, GivenAConfigDerivedFeaturesShouldDescribeItsWorkAndItsReads) {
  // K = 16 -> 4 output channel blocks, C = 16 -> 4 input channel blocks, 8x8 output.
  const Task task = ParseTask("conv2d:1,16,8,8,16,3,3,1,1");
  Conv2dNchwcImage2dTemplate tmpl;
  DeviceLimits lim = GpuLikeLimits();
  lim.compute_units = 3;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_fc", {2, 1, 2}}, {"tile_y", {2, 2, 2}}, {"tile_x", {1, 1, 8}},
                      {"tile_rcc", {2, 2}},  {"tile_ry", {1, 3}},    {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 512}, {"unroll_explicit", 0}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(space->Valid(*c)) << space->Check(*c);
  const std::vector<float> f = tmpl.DerivedFeatures(task, *space, *c, lim);
  ASSERT_EQ(f.size(), 11u);
  EXPECT_EQ(f[0], 32.0f);                 // work-group 2 x 2 x 8
  EXPECT_EQ(f[1], 8.0f);                  // 2 virtual threads x 4 registers
  EXPECT_EQ(f[2], 4.0f);                  // work-groups: 2 channel x 2 row blocks
  EXPECT_EQ(f[3], 24.0f);                 // inner steps: 2 channel blocks x 4 lanes x 3 rows x 1 column
  EXPECT_EQ(f[4], 1.0f);                  // 24 <= 512: unrolled
  EXPECT_FLOAT_EQ(f[5], 4.0f / 3);        // work-groups per compute unit
  EXPECT_FLOAT_EQ(f[6], 4.0f / 6);        // 2 waves on 3 compute units, the second a third full
  EXPECT_FLOAT_EQ(f[7], 2 * 16.0f / 6);   // multiply-adds per read: 2 accumulators x 16 / (4 weight + 2 data)
  EXPECT_EQ(f[8], 6.0f);
  EXPECT_EQ(f[9], 24.0f * 2);             // unrolled body: inner steps x virtual threads
  EXPECT_EQ(f[10], 2.0f * 1 * 3);         // outer steps: rcc x ry x rx
  lim.compute_units = 4;  // one full wave
  EXPECT_FLOAT_EQ(tmpl.DerivedFeatures(task, *space, *c, lim)[6], 1.0f);
}

}  // namespace
}  // namespace tunefleet
