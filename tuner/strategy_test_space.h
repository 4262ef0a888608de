// Test support (header only, used by the tuner's *_test.cc): a synthetic tiling space and a smooth cost
// function over it with a known optimum, so strategies and the cost model are tested without a device.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "search-spaces/space.h"

namespace tunefleet::testing {

// tile_x, tile_y: 3-way splits of 64 (28 choices each); unroll in {1,2,4,8}; vec on/off; work-group size
// (tile_x[2] * tile_y[2]) at most 64. About 4,000 valid configs of 6,272 raw.
inline Space TilingSpace() {
  Space s;
  s.AddSplit("tile_x", 64, 3).AddSplit("tile_y", 64, 3).AddList("unroll", {1, 2, 4, 8}).AddBool("vec");
  s.AddConstraint("work-group size <= 64", [](const ConfigView& v) -> std::string {
    const int64_t wg = v.Factors("tile_x")[2] * v.Factors("tile_y")[2];
    return wg <= 64 ? "" : "work-group size " + std::to_string(wg) + " > 64";
  });
  return s;
}

// A made-up runtime in seconds: best near tile_x = {., 4, 8}, tile_y = {., 2, 8}, unroll 4, vec on, with an
// interaction between the two inner tiles. Strictly positive.
inline double SyntheticCost(const Space& s, uint64_t index) {
  const Config c = s.FromIndex(index);
  const ConfigView v(s, c);
  auto l2 = [](int64_t x) { return std::log2(static_cast<double>(x)); };
  const auto& tx = v.Factors("tile_x");
  const auto& ty = v.Factors("tile_y");
  double e = std::pow(l2(tx[1]) - 2, 2) + std::pow(l2(tx[2]) - 3, 2) + 0.7 * std::pow(l2(ty[1]) - 1, 2) +
             0.7 * std::pow(l2(ty[2]) - 3, 2);
  e += 0.3 * std::abs(l2(tx[2]) + l2(ty[2]) - 6);
  e += 0.5 * std::abs(l2(v.Value("unroll")) - 2) + (v.Value("vec") ? 0.0 : 0.8);
  return 1e-3 * (1.0 + e);
}

}  // namespace tunefleet::testing
