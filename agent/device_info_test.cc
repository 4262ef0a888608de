#include "agent/device_info.h"

#include <gtest/gtest.h>

namespace tunefleet::agent {
namespace {

TEST(ClApiTest, GivenABadLibraryPath_WeShouldFailWithOneLineNamingIt) {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load("/nonexistent/libOpenCL.so");
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("/nonexistent/libOpenCL.so"), std::string::npos);
  EXPECT_EQ(api.status().message().find('\n'), std::string::npos);
}

TEST(DeviceInfoTest, GivenTheFirstDevice_WeShouldDescribeItFullyAndStably) {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load();
  if (!api.ok()) GTEST_SKIP() << api.status().ToString();
  Result<cl_device_id> device = PickDevice(**api, 0, 0);
  if (!device.ok()) GTEST_SKIP() << device.status().ToString();
  Result<proto::DeviceInfo> info = DescribeDevice(**api, *device);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->name().empty());
  EXPECT_FALSE(info->vendor().empty());
  EXPECT_FALSE(info->platform_name().empty());
  EXPECT_NE(info->device_version().find("OpenCL"), std::string::npos);
  EXPECT_GT(info->compute_units(), 0u);
  EXPECT_GT(info->max_work_group_size(), 0u);
  EXPECT_GE(info->max_work_item_sizes_size(), 1);
  EXPECT_GT(info->local_mem_bytes(), 0u);
  EXPECT_GT(info->max_alloc_bytes(), 0u);
  EXPECT_EQ(info->fp16(), info->extensions().find("cl_khr_fp16") != std::string::npos);
  EXPECT_EQ(info->fingerprint().size(), 16u);
  Result<proto::DeviceInfo> again = DescribeDevice(**api, *device);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->fingerprint(), info->fingerprint());
}

TEST(DeviceInfoTest, GivenADifferentDriver_WeShouldChangeTheFingerprint) {
  proto::DeviceInfo info;
  info.set_vendor("v");
  info.set_name("n");
  info.set_driver_version("1.0");
  const std::string first = Fingerprint(info);
  info.set_driver_version("1.1");
  EXPECT_NE(Fingerprint(info), first);
  info.set_driver_version("1.0");
  EXPECT_EQ(Fingerprint(info), first);
  info.set_global_mem_bytes(123456789);  // varies with free RAM on some drivers: not part of the identity
  EXPECT_EQ(Fingerprint(info), first);
}

TEST(DeviceInfoTest, GivenAnOutOfRangeIndex_WeShouldPointToListDevices) {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load();
  if (!api.ok()) GTEST_SKIP() << api.status().ToString();
  Result<cl_device_id> device = PickDevice(**api, 99, 0);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("--list-devices"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet::agent
