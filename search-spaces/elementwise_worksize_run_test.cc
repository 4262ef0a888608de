// eltwise.worksize on the real OpenCL device (PoCL here): local sizes, including tails, match the reference.
#include "search-spaces/elementwise_worksize.h"

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class ElementwiseWorksizeRun : public testing::DeviceTest {};

TEST_F(ElementwiseWorksizeRun, GivenAnAddOverAnOddCountConfigsShouldMatchTheReference) {
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:1,3,7,9,kind=add", 2, 61);
}

TEST_F(ElementwiseWorksizeRun, GivenRelu6AndSigmoidConfigsShouldMatchTheReference) {
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:2,3,5,5,kind=relu6", 1, 62);
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:2,3,5,5,kind=sigmoid", 1, 63);
}

TEST_F(ElementwiseWorksizeRun, GivenHalfStorageAnOddCountSubAndSigmoidConfigsShouldMatchTheReference) {
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:1,3,7,9,kind=sub:float16-acc32", 1, 64);
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:2,3,5,5,kind=sigmoid:float16-acc32", 1, 65);
}

TEST_F(ElementwiseWorksizeRun, GivenFp16AndTheExtensionAddRelu6AndSigmoidConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:1,3,7,9,kind=add:float16", 1, 66);
  ExpectSampleMatches(ElementwiseWorksizeTemplate(), "elementwise:2,3,5,5,kind=sigmoid:float16", 1, 67);
}

}  // namespace
}  // namespace tunefleet
