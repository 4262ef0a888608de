// CompareDevice against the first OpenCL device (PoCL here): a pack naming this device as it reports itself
// matches; one tuned on another device or with another driver is told apart, and by which fields.
#include "deploy/runtime/pack_device.h"

#include <gtest/gtest.h>

namespace tunefleet::runtime {
namespace {

std::string Info(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  EXPECT_EQ(clGetDeviceInfo(device, param, 0, nullptr, &size), CL_SUCCESS);
  std::string value(size, '\0');
  EXPECT_EQ(clGetDeviceInfo(device, param, size, value.data(), nullptr), CL_SUCCESS);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

class PackDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform = nullptr;
    ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
    ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr), CL_SUCCESS);
    same_.name = Info(device_, CL_DEVICE_NAME);
    same_.vendor = Info(device_, CL_DEVICE_VENDOR);
    same_.driver = Info(device_, CL_DRIVER_VERSION);
    same_.opencl_version = Info(device_, CL_DEVICE_VERSION);
    ASSERT_FALSE(same_.name.empty());
  }
  cl_device_id device_ = nullptr;
  PackDevice same_;  // this device, as an agent on it would have written it into a pack
};

TEST_F(PackDeviceTest, GivenAPackTunedOnThisDevice_ThereShouldBeNoDifference) {
  auto c = CompareDevice(same_, device_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->differences.empty()) << c->Describe();
  EXPECT_FALSE(c->OtherModel());

  PackDevice padded = same_;  // drivers pad some strings; the padding is not part of the value
  padded.vendor = " " + padded.vendor + "  ";
  auto p = CompareDevice(padded, device_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->differences.empty()) << p->Describe();
}

TEST_F(PackDeviceTest, GivenAPackThatLeavesOutItsDriverAndVersion_OnlyWhatItSaysShouldBeCompared) {
  PackDevice terse = same_;  // "driver" and "opencl_version" are optional in a pack
  terse.driver.clear();
  terse.opencl_version.clear();
  auto c = CompareDevice(terse, device_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->differences.empty()) << c->Describe();
  terse.name = "Mali-G78";
  c = CompareDevice(terse, device_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->differences.size(), 1u) << c->Describe();
  EXPECT_EQ(c->differences[0].field, "name");
}

TEST_F(PackDeviceTest, GivenAPackTunedOnAnotherDevice_TheNameShouldBeTheDifferenceAndBothNamesSaid) {
  PackDevice phone = same_;
  phone.name = "QUALCOMM Adreno(TM) 740";
  auto c = CompareDevice(phone, device_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->differences.size(), 1u);
  EXPECT_EQ(c->differences[0].field, "name");
  EXPECT_EQ(c->differences[0].device_value, same_.name);
  EXPECT_TRUE(c->OtherModel());
  const std::string line = c->Describe();
  EXPECT_NE(line.find("tuned on another device"), std::string::npos) << line;
  EXPECT_NE(line.find("Adreno(TM) 740"), std::string::npos) << line;
  EXPECT_NE(line.find(same_.name), std::string::npos) << line;
}

TEST_F(PackDeviceTest, GivenAPackTunedWithAnotherDriver_ItShouldBeTheSameModelWithAnotherDriver) {
  PackDevice older = same_;
  older.driver = "0.1-old";
  older.opencl_version = "OpenCL 1.2 old";
  auto c = CompareDevice(older, device_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->differences.size(), 2u);
  EXPECT_EQ(c->differences[0].field, "driver");
  EXPECT_EQ(c->differences[1].field, "opencl_version");
  EXPECT_FALSE(c->OtherModel());
  EXPECT_NE(c->Describe().find("tuned with another driver"), std::string::npos) << c->Describe();
}

TEST_F(PackDeviceTest, GivenControlBytesInThePacksDeviceName_TheLineShouldShowThemEscaped) {
  PackDevice odd = same_;
  odd.name = "evil\x1b[2Jname";
  auto c = CompareDevice(odd, device_);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Describe().find('\x1b'), std::string::npos) << c->Describe();
}

}  // namespace
}  // namespace tunefleet::runtime
