#include "agent/host_buffer.h"

#include <cmath>
#include <cstring>

#include "agent/half.h"

namespace tunefleet::agent {
namespace {

// splitmix64: tiny, fast, and fully specified, so every agent on every platform draws the same numbers.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exact in float.
  float NextUnit() { return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f); }

 private:
  uint64_t state_;
};

}  // namespace

size_t ElementBytes(proto::ElemType type) { return type == proto::FLOAT16 ? 2 : 4; }

std::vector<uint8_t> InitialContents(const proto::BufferSpec& spec) {
  const size_t element = ElementBytes(spec.type());
  std::vector<uint8_t> bytes(spec.count() * element, 0);
  if (spec.init() == proto::BufferSpec::NANS) {
    const uint16_t half_nan = 0x7e00;
    const uint32_t float_nan = 0x7fc00000u, int_min = 0x80000000u;
    for (uint64_t i = 0; i < spec.count(); ++i) {
      uint8_t* out = bytes.data() + i * element;
      if (spec.type() == proto::FLOAT16) {
        std::memcpy(out, &half_nan, sizeof(half_nan));
      } else {
        std::memcpy(out, spec.type() == proto::INT32 ? &int_min : &float_nan, sizeof(float_nan));
      }
    }
    return bytes;
  }
  if (spec.init() != proto::BufferSpec::RANDOM) return bytes;

  SplitMix64 rng(spec.seed());
  const float lo = spec.lo();
  const float span = spec.hi() - spec.lo();
  for (uint64_t i = 0; i < spec.count(); ++i) {
    const float value = lo + span * rng.NextUnit();
    uint8_t* out = bytes.data() + i * element;
    switch (spec.type()) {
      case proto::FLOAT16: {
        const uint16_t half = FloatToHalf(value);
        std::memcpy(out, &half, sizeof(half));
        break;
      }
      case proto::INT32: {
        const int32_t integer = static_cast<int32_t>(std::floor(value));
        std::memcpy(out, &integer, sizeof(integer));
        break;
      }
      default:
        std::memcpy(out, &value, sizeof(value));
        break;
    }
  }
  return bytes;
}

const std::vector<uint8_t>& CanaryPattern() {
  static const std::vector<uint8_t> canary = [] {
    std::vector<uint8_t> c(kCanaryBytes);
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>(0xA5 ^ (i * 37));
    return c;
  }();
  return canary;
}

std::vector<float> ToFloats(proto::ElemType type, const uint8_t* bytes, size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    switch (type) {
      case proto::FLOAT16: {
        uint16_t half;
        std::memcpy(&half, bytes + 2 * i, sizeof(half));
        values[i] = HalfToFloat(half);
        break;
      }
      case proto::INT32: {
        int32_t integer;
        std::memcpy(&integer, bytes + 4 * i, sizeof(integer));
        values[i] = static_cast<float>(integer);
        break;
      }
      default:
        std::memcpy(&values[i], bytes + 4 * i, sizeof(float));
        break;
    }
  }
  return values;
}

}  // namespace tunefleet::agent
