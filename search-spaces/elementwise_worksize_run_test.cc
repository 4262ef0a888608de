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

}  // namespace
}  // namespace tunefleet
