// IEEE 754 binary16 ("half") conversions for FLOAT16 buffers and images. Pure functions, thread-safe.
#pragma once

#include <cstdint>

namespace tunefleet::agent {

// Round to nearest, ties to even; overflow gives +-infinity, NaN stays NaN, tiny values become subnormals or zero.
uint16_t FloatToHalf(float value);
// Exact (every half is a float).
float HalfToFloat(uint16_t bits);

}  // namespace tunefleet::agent
