// conv2d_nchwc.image2d on the real OpenCL device (PoCL here): sampled configs match the reference.
#include "search-spaces/conv2d_nchwc_image2d.h"

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class Conv2dNchwcImage2dRun : public testing::DeviceTest {};

TEST_F(Conv2dNchwcImage2dRun, GivenChannelsNotAMultipleOf4AndPaddingSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwcImage2dTemplate(), "conv2d:1,5,7,9,6,3,3,1,1", 3, 21);
}

TEST_F(Conv2dNchwcImage2dRun, GivenStride2BiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwcImage2dTemplate(), "conv2d:2,8,12,10,8,3,3,2,1,bias=1,relu=1", 2, 22);
}

TEST_F(Conv2dNchwcImage2dRun, GivenA1x1LayerSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dNchwcImage2dTemplate(), "conv2d:1,3,8,8,16,1,1,1,0", 2, 23);
}

TEST_F(Conv2dNchwcImage2dRun, GivenHalfStorageHalfImagesStride2BiasAndReluSampledConfigsShouldMatch) {
  // Half buffers packed into CL_HALF_FLOAT images (read_imagef), 5 channels: the last block is zero-padded.
  ExpectSampleMatches(Conv2dNchwcImage2dTemplate(), "conv2d:1,5,9,8,6,3,3,2,1,bias=1,relu=1:float16-acc32", 2, 24);
}

TEST_F(Conv2dNchwcImage2dRun, GivenFp16AndTheExtensionHalfImagesStride2BiasAndReluSampledConfigsShouldMatch) {
  // read_imageh / write_imageh on CL_HALF_FLOAT images, half arithmetic.
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(Conv2dNchwcImage2dTemplate(), "conv2d:1,5,9,8,6,3,3,2,1,bias=1,relu=1:float16", 2, 25);
}

}  // namespace
}  // namespace tunefleet
