// conv2d_nchw.buffer on the real OpenCL device (PoCL here): sampled configs match the reference.
#include "search-spaces/conv2d_nchw_buffer.h"

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class Conv2dNchwBufferRun : public testing::DeviceTest {};

TEST_F(Conv2dNchwBufferRun, GivenA3x3PaddedLayerWithOddSizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:1,3,7,9,6,3,3,1,1", 3, 11);
}

TEST_F(Conv2dNchwBufferRun, GivenStride2DilationBiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:2,5,11,10,4,3,3,2,2,dilation=2,bias=1,relu=1", 3, 12);
}

TEST_F(Conv2dNchwBufferRun, GivenA1x1LayerSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:1,8,6,6,12,1,1,1,0", 3, 13);
}

TEST_F(Conv2dNchwBufferRun, GivenGroupsAndDepthwiseSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:1,6,5,5,4,3,3,1,1,groups=2", 2, 14);
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "dwconv2d:1,5,6,6,3,3,1,1", 2, 15);
}

TEST_F(Conv2dNchwBufferRun, GivenHalfStorageStride2PaddingBiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:2,5,9,7,6,3,3,2,1,bias=1,relu=1:float16-acc32", 1, 16);
}

TEST_F(Conv2dNchwBufferRun, GivenHalfStorageAndSplitKTheReductionShouldStoreHalfOutputs) {
  const Task task = testing::ParseTask("conv2d:1,8,5,5,4,3,3,2,1,bias=1,relu=1:float16-acc32");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, Limits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_f", {1, 1, 2, 2}},    {"tile_y", {1, 1, 3, 1}}, {"tile_x", {3, 1, 1, 1}},
                      {"tile_rc", {4, 2}},         {"tile_ry", {1, 3}},      {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 512}, {"unroll_explicit", 1}, {"split_rc", 2}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  ASSERT_EQ(prog->launches_size(), 2);
  const proto::MeasureResult r = RunOnce(*prog);
  EXPECT_EQ(r.status(), proto::OK) << r.message() << " (max error " << r.max_abs_error() << ")";
}

TEST_F(Conv2dNchwBufferRun, GivenExplicitUnrollTheGeneratedCopiesShouldMatchTheReference) {
  const Task task = testing::ParseTask("conv2d:1,2,5,5,4,3,3,1,1");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, Limits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_f", {1, 2, 1, 2}},    {"tile_y", {1, 1, 5, 1}}, {"tile_x", {1, 1, 1, 5}},
                      {"tile_rc", {1, 2}},         {"tile_ry", {1, 3}},      {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 512}, {"unroll_explicit", 1}, {"split_rc", 1}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  const proto::MeasureResult r = RunOnce(*prog);
  EXPECT_EQ(r.status(), proto::OK) << r.message();
}

TEST_F(Conv2dNchwBufferRun, GivenSplitKWithBiasAndReluTheSlicesShouldAddUpToTheReference) {
  const Task task = testing::ParseTask("conv2d:1,8,5,5,4,3,3,2,1,bias=1,relu=1");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, Limits());
  ASSERT_TRUE(space.ok());
  for (int split : {2, 4, 8}) {
    nlohmann::json j = {{"tile_f", {1, 1, 2, 2}},    {"tile_y", {1, 1, 3, 1}}, {"tile_x", {3, 1, 1, 1}},
                        {"tile_rc", {8, 1}},         {"tile_ry", {1, 3}},      {"tile_rx", {3, 1}},
                        {"auto_unroll_max_step", 0}, {"unroll_explicit", 0},   {"split_rc", split}};
    Result<Config> c = space->FromJson(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
    ASSERT_TRUE(prog.ok()) << prog.status().ToString();
    ASSERT_EQ(prog->launches_size(), 2);  // the split convolution, then the reduction
    const proto::MeasureResult r = RunOnce(*prog);
    EXPECT_EQ(r.status(), proto::OK) << "split " << split << ": " << r.message();
  }
}

TEST_F(Conv2dNchwBufferRun, GivenASplitThatDoesNotDivideTheChannelStepsWeShouldRejectIt) {
  const Task task = testing::ParseTask("conv2d:1,6,5,5,4,3,3,1,1");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, Limits());
  ASSERT_TRUE(space.ok());
  nlohmann::json j = {{"tile_f", {1, 1, 2, 2}},    {"tile_y", {1, 1, 5, 1}}, {"tile_x", {5, 1, 1, 1}},
                      {"tile_rc", {6, 1}},         {"tile_ry", {1, 3}},      {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 0}, {"unroll_explicit", 0},   {"split_rc", 4}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(space->Check(*c).find("split_rc 4 does not divide the 6 outer channel steps"), std::string::npos)
      << space->Check(*c);
}

TEST_F(Conv2dNchwBufferRun, GivenFp16AndTheExtensionStride2PaddingBiasAndReluSampledConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(Conv2dNchwBufferTemplate(), "conv2d:2,5,9,7,6,3,3,2,1,bias=1,relu=1:float16", 2, 17);
}

}  // namespace
}  // namespace tunefleet
