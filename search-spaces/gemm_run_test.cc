// Runs sampled gemm.buffer configs on the first OpenCL device (PoCL here) through the agent's executor and
// expects each to match the reference. Small sizes: PoCL compiles are slow.
#include <gtest/gtest.h>

#include "search-spaces/conv_common_run_testing.h"
#include "search-spaces/gemm_template.h"

namespace tunefleet {
namespace {

using testing::DeviceTest;

class GemmRunTest : public DeviceTest {
 protected:
  GemmBufferTemplate tmpl_;
};

TEST_F(GemmRunTest, GivenOddSizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:33,17,29", 3, 11);
}

TEST_F(GemmRunTest, GivenTransposedBSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:40,24,36,transb=1", 3, 12);
}

TEST_F(GemmRunTest, GivenBatchBiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:32,64,48,batch=3,bias=1,act=relu", 4, 13);
}

TEST_F(GemmRunTest, GivenVectorFriendlySizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:64,64,64,act=sigmoid", 3, 14);
}

TEST_F(GemmRunTest, GivenFp16AndTheExtensionSampledConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << "device has no cl_khr_fp16";
  ExpectSampleMatches(tmpl_, "gemm:48,32,40,bias=1:float16-acc32", 2, 15);
  ExpectSampleMatches(tmpl_, "gemm:48,32,40:float16", 2, 16);
}

}  // namespace
}  // namespace tunefleet
