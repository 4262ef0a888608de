#include "tuner/annealing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tuner/strategy_test_space.h"

namespace tunefleet {
namespace {

// The "model" is the true synthetic cost, so annealing should find the real optimum.
BatchScoreFn TrueScore(const Space& s) {
  return [&s](const std::vector<uint64_t>& idx) -> Result<std::vector<float>> {
    std::vector<float> out;
    for (uint64_t i : idx) out.push_back(static_cast<float>(-testing::SyntheticCost(s, i)));
    return out;
  };
}

uint64_t TrueBest(const Space& s) {
  uint64_t best = 0;
  double best_cost = 1e9;
  s.ForEachValid([&](uint64_t i) {
    if (testing::SyntheticCost(s, i) < best_cost) best_cost = testing::SyntheticCost(s, i), best = i;
    return true;
  });
  return best;
}

TEST(AnnealingTest, GivenAnExactScore_WeShouldFindTheOptimumAndKeepOnlyValidDistinctConfigs) {
  const Space s = testing::TilingSpace();
  AnnealingOptions opts;
  opts.chains = 32;
  Result<std::vector<ScoredIndex>> top = Anneal(s, TrueScore(s), {}, {}, 16, opts);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 16u);
  EXPECT_EQ(top->front().index, TrueBest(s));
  for (size_t i = 0; i < top->size(); ++i) {
    EXPECT_TRUE(s.ValidIndex((*top)[i].index));
    if (i > 0) {
      EXPECT_GE((*top)[i - 1].score, (*top)[i].score);
    }
  }
}

TEST(AnnealingTest, GivenTheOptimumIsExcluded_WeShouldNeverReturnIt) {
  const Space s = testing::TilingSpace();
  const uint64_t best = TrueBest(s);
  AnnealingOptions opts;
  opts.chains = 32;
  Result<std::vector<ScoredIndex>> top = Anneal(s, TrueScore(s), {best}, {best}, 8, opts);
  ASSERT_TRUE(top.ok());
  for (const auto& t : *top) EXPECT_NE(t.index, best);
}

TEST(AnnealingTest, GivenTheSameSeed_WeShouldReturnTheSameConfigs) {
  const Space s = testing::TilingSpace();
  AnnealingOptions opts;
  opts.chains = 16;
  opts.max_steps = 50;
  auto run = [&] {
    Result<std::vector<ScoredIndex>> top = Anneal(s, TrueScore(s), {}, {}, 10, opts);
    std::vector<uint64_t> v;
    if (top.ok()) {
      for (const auto& t : top.value()) v.push_back(t.index);
    }
    return v;
  };
  EXPECT_EQ(run(), run());
}

TEST(AnnealingTest, GivenNearDuplicateCandidates_TheDiversityFilterShouldSkipThemWhileOthersRemain) {
  Space s;
  s.AddList("a", {1, 2, 3}).AddList("b", {1, 2, 3});
  // Ranked: (0,0), (1,0) differs in one knob from the first, (1,1) differs in two.
  const std::vector<ScoredIndex> ranked = {{s.IndexOf({0, 0}), 3}, {s.IndexOf({1, 0}), 2}, {s.IndexOf({1, 1}), 1}};
  EXPECT_EQ(PickDiverse(s, ranked, 2, 2), (std::vector<uint64_t>{s.IndexOf({0, 0}), s.IndexOf({1, 1})}));
  // Too few far-apart candidates: the threshold relaxes and the plan is still full.
  EXPECT_EQ(PickDiverse(s, ranked, 3, 2).size(), 3u);
}

}  // namespace
}  // namespace tunefleet
