// depthwise_conv2d_nchwc.image2d on the real OpenCL device (PoCL here): sampled configs match the reference.
#include "search-spaces/depthwise_conv2d_nchwc_image2d.h"

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class DepthwiseConv2dNchwcImage2dRun : public testing::DeviceTest {};

TEST_F(DepthwiseConv2dNchwcImage2dRun, GivenChannelsNotAMultipleOf4AndPaddingSampledConfigsShouldMatch) {
  ExpectSampleMatches(DepthwiseConv2dNchwcImage2dTemplate(), "dwconv2d:1,6,9,7,3,3,1,1", 3, 31);
}

TEST_F(DepthwiseConv2dNchwcImage2dRun, GivenStride2BiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(DepthwiseConv2dNchwcImage2dTemplate(), "dwconv2d:2,8,11,12,3,3,2,1,bias=1,relu=1", 2, 32);
}

TEST_F(DepthwiseConv2dNchwcImage2dRun, GivenHalfStorageStride2PaddingBiasAndReluSampledConfigsShouldMatch) {
  ExpectSampleMatches(DepthwiseConv2dNchwcImage2dTemplate(), "dwconv2d:1,6,9,7,3,3,2,1,bias=1,relu=1:float16-acc32",
                      2, 33);
}

TEST_F(DepthwiseConv2dNchwcImage2dRun, GivenFp16AndTheExtensionStride2PaddingBiasAndReluSampledConfigsShouldMatch) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(DepthwiseConv2dNchwcImage2dTemplate(), "dwconv2d:1,6,9,7,3,3,2,1,bias=1,relu=1:float16", 2,
                      34);
}

}  // namespace
}  // namespace tunefleet
