// Test support (header only, used by the tuner's *_test.cc): a synthetic tiling space and a smooth cost
// function over it with a known optimum, so strategies and the cost model are tested without a device; and a
// training/held-out split of it for the cost model's tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "search-spaces/space.h"
#include "tuner/cost_model.h"
#include "tuner/features.h"

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

// `train_n` valid configs of the tiling space, drawn with `seed`, as a training set scored best/cost (knob
// features only), and `test_n` other ones as held-out rows with their truth (higher = faster).
struct HeldOutSplit {
  size_t dim = 0;
  TrainingSet train;
  std::vector<float> test_features;
  std::vector<double> test_truth;
};

inline HeldOutSplit MakeHeldOutSplit(size_t train_n, size_t test_n, uint64_t seed) {
  const Space s = TilingSpace();
  FeatureExtractor fx(s, nullptr, nullptr, nullptr);
  std::vector<uint64_t> valid;
  s.ForEachValid([&](uint64_t i) {
    valid.push_back(i);
    return true;
  });
  std::mt19937_64 rng(seed);
  std::shuffle(valid.begin(), valid.end(), rng);
  const std::vector<uint64_t> train(valid.begin(), valid.begin() + train_n);
  const std::vector<uint64_t> test(valid.begin() + train_n, valid.begin() + train_n + test_n);
  HeldOutSplit out;
  out.dim = fx.dim();
  double best = 1e9;
  for (uint64_t i : train) best = std::min(best, SyntheticCost(s, i));
  out.train.dim = fx.dim();
  out.train.features = fx.ExtractIndices(train);
  for (uint64_t i : train) out.train.scores.push_back(static_cast<float>(best / SyntheticCost(s, i)));
  out.test_features = fx.ExtractIndices(test);
  for (uint64_t i : test) out.test_truth.push_back(-SyntheticCost(s, i));
  return out;
}

}  // namespace tunefleet::testing
