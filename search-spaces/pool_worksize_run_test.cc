// pool.worksize on the real OpenCL device (PoCL here): every local size matches the reference.
#include "search-spaces/pool_worksize.h"

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class PoolWorksizeRun : public testing::DeviceTest {};

TEST_F(PoolWorksizeRun, GivenMaxPoolingWithPaddingAndOddSizesConfigsShouldMatchTheReference) {
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:1,3,9,11,3,3,2,1,mode=max", 2, 51);
}

TEST_F(PoolWorksizeRun, GivenAveragePoolingExcludingPaddingConfigsShouldMatchTheReference) {
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:2,5,7,7,3,3,2,1,mode=avg", 2, 52);
}

TEST_F(PoolWorksizeRun, GivenGlobalAveragePoolingConfigsShouldMatchTheReference) {
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:2,6,5,7,1,1,1,0,mode=avg,global=1", 2, 53);
}

TEST_F(PoolWorksizeRun, GivenHalfStorageMaxAndGlobalAveragePoolingConfigsShouldMatchTheReference) {
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:1,3,9,11,3,3,2,1,mode=max:float16-acc32", 1, 54);
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:2,6,5,7,1,1,1,0,mode=avg,global=1:float16-acc32", 1, 55);
}

TEST_F(PoolWorksizeRun, GivenFp16AndTheExtensionMaxAverageAndGlobalPoolingConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:1,3,9,11,3,3,2,1,mode=max:float16", 1, 56);
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:2,5,7,7,3,3,2,1,mode=avg:float16", 1, 57);
  ExpectSampleMatches(PoolWorksizeTemplate(), "pool:2,6,5,7,1,1,1,0,mode=avg,global=1:float16", 1, 58);
}

}  // namespace
}  // namespace tunefleet
