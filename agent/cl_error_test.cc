#include "agent/cl_error.h"

#include <gtest/gtest.h>

namespace tunefleet::agent {
namespace {

TEST(ClErrorTest, GivenKnownCodes_WeShouldNameThem) {
  EXPECT_EQ(ClErrorName(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_EQ(ClErrorName(-54), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(ClErrorName(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(ClErrorName(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(ClErrorName(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");
  EXPECT_EQ(ClErrorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
}

TEST(ClErrorTest, GivenAnUnknownCode_WeShouldShowTheNumber) {
  EXPECT_EQ(ClErrorName(-9999), "CL_UNKNOWN_ERROR(-9999)");
}

TEST(ClErrorTest, GivenAFailedCall_WeShouldNameTheCallAndTheError) {
  EXPECT_TRUE(ClStatus("clFinish", CL_SUCCESS).ok());
  Status status = ClStatus("clEnqueueNDRangeKernel", CL_INVALID_WORK_GROUP_SIZE);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE");
}

}  // namespace
}  // namespace tunefleet::agent
