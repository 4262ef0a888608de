#include "search-spaces/device_limits.h"

#include <gtest/gtest.h>

#include "proto/tunefleet.pb.h"

namespace tunefleet {
namespace {

TEST(DeviceLimitsTest, GivenAGpuDeviceInfoWeShouldCopyItsLimits) {
  proto::DeviceInfo info;
  info.set_device_type("GPU");
  info.set_max_work_group_size(1024);
  info.add_max_work_item_sizes(1024);
  info.add_max_work_item_sizes(1024);
  info.add_max_work_item_sizes(64);
  info.set_local_mem_bytes(48 * 1024);
  info.set_compute_units(132);
  info.set_extensions("cl_khr_global_int32_base_atomics cl_khr_fp16");
  DeviceLimits l = DeviceLimits::From(info);
  EXPECT_EQ(l.max_work_group_size, 1024u);
  EXPECT_EQ(l.max_work_item_sizes[2], 64u);
  EXPECT_EQ(l.local_mem_bytes, 48u * 1024);
  EXPECT_EQ(l.compute_units, 132u);
  EXPECT_TRUE(l.is_gpu);
  EXPECT_TRUE(l.fp16);
  EXPECT_FALSE(l.image_support);
  EXPECT_GT(l.max_registers_per_item, 0u);
}

// A device imported from AutoTVM records knows its work-group size only: each dimension may take all of it.
TEST(DeviceLimitsTest, GivenNoSizePerDimensionEachShouldBeBoundedByTheWorkGroupSize) {
  proto::DeviceInfo info;
  info.set_max_work_group_size(256);
  DeviceLimits l = DeviceLimits::From(info);
  for (uint64_t size : l.max_work_item_sizes) EXPECT_EQ(size, 256u);
  EXPECT_EQ(l.CheckWorkGroup({4, 7, 8}), "");
  info.add_max_work_item_sizes(256);
  info.add_max_work_item_sizes(16);  // a device that reports two dimensions has no third
  l = DeviceLimits::From(info);
  EXPECT_EQ(l.max_work_item_sizes[1], 16u);
  EXPECT_EQ(l.max_work_item_sizes[2], 1u);
}

TEST(DeviceLimitsTest, GivenLaunchesBeyondTheLimitsWeShouldSayWhy) {
  DeviceLimits l;  // 256 items, 32 KiB
  EXPECT_EQ(l.CheckWorkGroup({16, 16}), "");
  EXPECT_EQ(l.CheckWorkGroup({32, 16}), "work-group of 512 items exceeds the device maximum 256");
  EXPECT_NE(l.CheckWorkGroup({512, 1}).find("dimension 0"), std::string::npos);
  EXPECT_EQ(l.CheckLocalMemory(32 * 1024), "");
  EXPECT_EQ(l.CheckLocalMemory(40000), "needs 40000 bytes of local memory, the device has 32768");
  EXPECT_EQ(l.CheckImage2d(4, 4), "device has no image support");
  EXPECT_EQ(l.CheckRegisters(1000, 256), "");  // CPU default: no register budget
  l.max_registers_per_item = 255;
  l.registers_per_compute_unit = 65536;
  EXPECT_NE(l.CheckRegisters(300, 64), "");
  EXPECT_NE(l.CheckRegisters(128, 1024), "");
  EXPECT_EQ(l.CheckRegisters(128, 256), "");
}

}  // namespace
}  // namespace tunefleet
