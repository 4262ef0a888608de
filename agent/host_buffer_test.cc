#include "agent/host_buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace tunefleet::agent {
namespace {

proto::BufferSpec Spec(proto::ElemType type, uint64_t seed, float lo, float hi, uint64_t count = 1000) {
  proto::BufferSpec spec;
  spec.set_name("x");
  spec.set_type(type);
  spec.set_count(count);
  spec.set_init(proto::BufferSpec::RANDOM);
  spec.set_seed(seed);
  spec.set_lo(lo);
  spec.set_hi(hi);
  return spec;
}

TEST(HostBufferTest, GivenTheSameSeed_WeShouldProduceTheSameBytes) {
  EXPECT_EQ(InitialContents(Spec(proto::FLOAT32, 7, -1, 1)), InitialContents(Spec(proto::FLOAT32, 7, -1, 1)));
  EXPECT_NE(InitialContents(Spec(proto::FLOAT32, 7, -1, 1)), InitialContents(Spec(proto::FLOAT32, 8, -1, 1)));
}

TEST(HostBufferTest, GivenARange_WeShouldStayInsideIt) {
  for (proto::ElemType type : {proto::FLOAT32, proto::FLOAT16}) {
    std::vector<uint8_t> bytes = InitialContents(Spec(type, 1, -2, 3));
    ASSERT_EQ(bytes.size(), 1000 * ElementBytes(type));
    for (float v : ToFloats(type, bytes.data(), 1000)) {
      EXPECT_GE(v, -2.0f);
      EXPECT_LE(v, 3.0f);  // half rounding may reach the upper bound
    }
  }
  std::vector<uint8_t> ints = InitialContents(Spec(proto::INT32, 1, 0, 10));
  for (float v : ToFloats(proto::INT32, ints.data(), 1000)) {
    EXPECT_EQ(v, static_cast<int>(v));
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 10);
  }
}

TEST(HostBufferTest, GivenZerosInit_WeShouldProduceZeros) {
  proto::BufferSpec spec = Spec(proto::FLOAT16, 1, 5, 6, 10);
  spec.set_init(proto::BufferSpec::ZEROS);
  EXPECT_EQ(InitialContents(spec), std::vector<uint8_t>(20, 0));
}

// An output the launches must write whole starts as NaN, so that an element left unwritten fails the check.
TEST(HostBufferTest, GivenNansInit_EveryElementShouldBeANan) {
  proto::BufferSpec spec = Spec(proto::FLOAT32, 1, 5, 6, 10);
  spec.set_init(proto::BufferSpec::NANS);
  const std::vector<uint8_t> bytes = InitialContents(spec);
  ASSERT_EQ(bytes.size(), 40u);
  for (size_t i = 0; i < 10; ++i) {
    float v = 0;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    EXPECT_TRUE(std::isnan(v)) << i;
  }
  spec.set_type(proto::FLOAT16);
  const std::vector<uint8_t> halves = InitialContents(spec);
  ASSERT_EQ(halves.size(), 20u);
  for (size_t i = 0; i < 10; ++i) {
    uint16_t h = 0;
    std::memcpy(&h, halves.data() + i * 2, 2);
    EXPECT_EQ(h & 0x7c00, 0x7c00) << i;  // exponent all ones
    EXPECT_NE(h & 0x03ff, 0) << i;       // and a mantissa: NaN, not infinity
  }
}

TEST(HostBufferTest, GivenTheCanary_WeShouldSeeANonTrivialPattern) {
  std::vector<uint8_t> canary = CanaryPattern();
  ASSERT_EQ(canary.size(), kCanaryBytes);
  EXPECT_NE(canary[0], canary[1]);
  EXPECT_NE(canary, std::vector<uint8_t>(kCanaryBytes, 0));
}

}  // namespace
}  // namespace tunefleet::agent
