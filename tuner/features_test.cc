#include "tuner/features.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tunefleet {
namespace {

TEST(FeaturesTest, GivenSplitListAndBoolKnobs_WeShouldEncodeLog2FactorsOneHotAndFlag) {
  Space s;
  s.AddSplit("x", 16, 2).AddList("unroll", {1, 2, 4}).AddBool("vec");
  FeatureExtractor fx(s, nullptr, nullptr, nullptr);
  ASSERT_EQ(fx.dim(), 2u + 3u + 1u);

  Config c(3);
  const auto& xs = s.knobs()[0].choices;
  for (uint32_t i = 0; i < xs.size(); ++i) {
    if (xs[i] == std::vector<int64_t>{4, 4}) c[0] = i;
  }
  c[1] = 2;  // unroll 4
  c[2] = 1;  // vec on
  std::vector<float> f(fx.dim());
  fx.Extract(c, f.data());
  EXPECT_FLOAT_EQ(f[0], 2.0f);
  EXPECT_FLOAT_EQ(f[1], 2.0f);
  EXPECT_EQ((std::vector<float>{f[2], f[3], f[4]}), (std::vector<float>{0, 0, 1}));
  EXPECT_FLOAT_EQ(f[5], 1.0f);
}

TEST(FeaturesTest, GivenSeveralIndices_WeShouldReturnOneRowPerIndexInOrder) {
  Space s;
  s.AddList("a", {1, 2}).AddList("b", {8, 16, 32});
  FeatureExtractor fx(s, nullptr, nullptr, nullptr);
  const std::vector<float> m = fx.ExtractIndices({0, 5});
  ASSERT_EQ(m.size(), 2 * fx.dim());
  // index 5 = a[1], b[2] (knob 0 varies fastest).
  EXPECT_EQ((std::vector<float>(m.begin() + 5, m.end())), (std::vector<float>{0, 1, 0, 0, 1}));
}

}  // namespace
}  // namespace tunefleet
