// conv2d_1x1.buffer on the real OpenCL device (PoCL here): sampled configs match the reference.
#include "search-spaces/conv2d_1x1_buffer.h"

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class Conv2d1x1BufferRun : public testing::DeviceTest {};

TEST_F(Conv2d1x1BufferRun, GivenOddSizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2d1x1BufferTemplate(), "conv2d:1,5,7,9,6,1,1,1,0", 4, 21);
}

TEST_F(Conv2d1x1BufferRun, GivenStride2PaddingBiasReluAndABatchSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2d1x1BufferTemplate(), "conv2d:2,12,9,10,8,1,1,2,1,bias=1,relu=1", 4, 22);
}

TEST_F(Conv2d1x1BufferRun, GivenHalfStorageStride2BiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2d1x1BufferTemplate(), "conv2d:2,12,9,10,8,1,1,2,1,bias=1,relu=1:float16-acc32", 3, 23);
}

TEST_F(Conv2d1x1BufferRun, GivenEveryStagingAndSplitChoiceTheKernelShouldMatchTheReference) {
  const Task task = testing::ParseTask("conv2d:1,16,6,6,8,1,1,2,0,bias=1,relu=1");
  Conv2d1x1BufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, Limits());
  ASSERT_TRUE(space.ok());
  for (int split : {1, 4}) {
    for (int cache : {0, 1}) {
      nlohmann::json j = {{"tile_k", {2, 2, 2}}, {"tile_p", {1, 3, 3}}, {"tile_c", {4, 4}},
                          {"split_c", split},    {"cache_w", cache},   {"unroll", cache}};
      Result<Config> c = space->FromJson(j);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
      ASSERT_TRUE(prog.ok()) << prog.status().ToString();
      const proto::MeasureResult r = RunOnce(*prog);
      EXPECT_EQ(r.status(), proto::OK) << j.dump() << ": " << r.message();
    }
  }
}

TEST_F(Conv2d1x1BufferRun, GivenFp16AndTheExtensionStride2BiasAndReluSampledConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(Conv2d1x1BufferTemplate(), "conv2d:2,12,9,10,8,1,1,2,1,bias=1,relu=1:float16", 3, 24);
}

}  // namespace
}  // namespace tunefleet
