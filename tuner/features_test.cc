#include "tuner/features.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tunefleet {
namespace {

TEST(FeaturesTest, GivenSplitListAndBoolKnobs_WeShouldEncodeLog2SharesOneHotAndFlag) {
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
  EXPECT_FLOAT_EQ(f[0], -2.0f);  // 4 of 16: log2(1/4)
  EXPECT_FLOAT_EQ(f[1], -2.0f);
  EXPECT_EQ((std::vector<float>{f[2], f[3], f[4]}), (std::vector<float>{0, 0, 1}));
  EXPECT_FLOAT_EQ(f[5], 1.0f);
}

// Sibling tasks of one template split axes of other extents: a factor that takes the whole axis has the same
// feature in both (0), so a model trained on one task's history recognises the idea in the other.
TEST(FeaturesTest, GivenTheWholeAxisInTheInnerFactorOfTwoExtents_TheFeatureShouldBeTheSame) {
  Space small, large;
  small.AddSplit("c", 4, 2);
  large.AddSplit("c", 16, 2);
  FeatureExtractor fs(small, nullptr, nullptr, nullptr), fl(large, nullptr, nullptr, nullptr);
  auto row = [](const Space& s, const FeatureExtractor& fx, std::vector<int64_t> split) {
    Config c(1);
    for (uint32_t i = 0; i < s.knobs()[0].choices.size(); ++i)
      if (s.knobs()[0].choices[i] == split) c[0] = i;
    std::vector<float> f(fx.dim());
    fx.Extract(c, f.data());
    return f;
  };
  EXPECT_EQ(row(small, fs, {1, 4}), (std::vector<float>{-2, 0}));
  EXPECT_EQ(row(large, fl, {1, 16}), (std::vector<float>{-4, 0}));
  EXPECT_EQ(row(large, fl, {2, 8}), (std::vector<float>{-3, -1}));
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
