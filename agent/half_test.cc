#include "agent/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tunefleet::agent {
namespace {

TEST(HalfTest, GivenExactlyRepresentableValues_WeShouldRoundTripThem) {
  for (float value : {0.0f, 1.0f, -2.0f, 0.5f, 1024.0f, 65504.0f, -0.375f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(value)), value) << value;
  }
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
}

TEST(HalfTest, GivenValuesBetweenHalves_WeShouldRoundToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
}

TEST(HalfTest, GivenOverflowInfinityAndNaN_WeShouldKeepTheirMeaning) {
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e6f), 0xfc00);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds up past the largest half
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HalfTest, GivenTinyValues_WeShouldProduceSubnormalsAndZero) {
  const float smallest = std::ldexp(1.0f, -24);
  EXPECT_EQ(FloatToHalf(smallest), 0x0001);
  EXPECT_EQ(HalfToFloat(0x0001), smallest);
  EXPECT_EQ(HalfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(FloatToHalf(-std::ldexp(1.0f, -26)), 0x8000);
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {  // every finite positive half survives a round trip
    ASSERT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(bits))), bits);
  }
}

}  // namespace
}  // namespace tunefleet::agent
