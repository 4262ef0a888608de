#include "search-spaces/space.h"

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tunefleet {
namespace {

// A small space: tile split of 16 into 2 parts, unroll list, vector bool; constraint tile inner * unroll <= 16.
Space SmallSpace() {
  Space s;
  s.AddSplit("tile", 16, 2).AddList("unroll", {1, 2, 4, 8}).AddBool("vec");
  s.AddConstraint("budget", [](const ConfigView& v) {
    int64_t inner = v.Factors("tile")[1];
    return inner * v.Value("unroll") <= 16 ? "" : "tile*unroll > 16";
  });
  s.AddConstraint("vec_needs_even", [](const ConfigView& v) {
    return v.Value("vec") == 1 && v.Factors("tile")[1] % 2 != 0 ? "odd tile with vectors" : "";
  });
  return s;
}

TEST(SpaceTest, GivenADivisorSplitWeShouldListEveryOrderedFactorization) {
  Space s;
  s.AddSplit("x", 12, 3);
  std::set<std::vector<int64_t>> got(s.knobs()[0].choices.begin(), s.knobs()[0].choices.end());
  std::set<std::vector<int64_t>> want;
  for (int64_t a = 1; a <= 12; ++a)
    for (int64_t b = 1; b <= 12; ++b)
      for (int64_t c = 1; c <= 12; ++c)
        if (a * b * c == 12) want.insert({a, b, c});
  EXPECT_EQ(got, want);
}

TEST(SpaceTest, GivenAPow2SplitWithACapWeShouldCoverTheAxisWithARestPart) {
  Space s;
  s.AddSplit("x", 100, 2, /*pow2=*/true, /*max_factor=*/16);
  std::vector<std::vector<int64_t>> want = {{100, 1}, {50, 2}, {25, 4}, {13, 8}, {7, 16}};
  EXPECT_EQ(s.knobs()[0].choices, want);
  EXPECT_EQ(s.ToTvmEntity(s.FromIndex(3)).dump(), R"([["x","sp",[-1,8]]])");
}

TEST(SpaceTest, GivenAnyIndexWeShouldRoundTripThroughConfigAndJson) {
  Space s = SmallSpace();
  ASSERT_EQ(s.RawSize(), 5u * 4u * 2u);
  for (uint64_t i = 0; i < s.RawSize(); ++i) {
    Config c = s.FromIndex(i);
    EXPECT_EQ(s.IndexOf(c), i);
    auto back = s.FromJson(nlohmann::json::parse(s.ToJson(c).dump()));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, c);
  }
}

TEST(SpaceTest, GivenIndexOneWeShouldSeeKnobZeroVaryFastest) {
  Space s = SmallSpace();
  EXPECT_EQ(s.FromIndex(1), (Config{1, 0, 0}));
  EXPECT_EQ(s.FromIndex(5), (Config{0, 1, 0}));
  EXPECT_EQ(s.FromIndex(20), (Config{0, 0, 1}));
}

TEST(SpaceTest, GivenASmallSpaceWeShouldCountValidConfigsLikeBruteForceLoops) {
  Space s = SmallSpace();
  uint64_t expected = 0;
  for (int64_t inner : {1, 2, 4, 8, 16})
    for (int64_t unroll : {1, 2, 4, 8})
      for (int vec : {0, 1})
        if (inner * unroll <= 16 && !(vec == 1 && inner % 2 != 0)) ++expected;
  EXPECT_EQ(s.CountValid(), expected);
  uint64_t visited = 0;
  s.ForEachValid([&](uint64_t i) {
    EXPECT_TRUE(s.ValidIndex(i));
    ++visited;
    return true;
  });
  EXPECT_EQ(visited, expected);
}

TEST(SpaceTest, GivenARejectedConfigWeShouldNameTheConstraint) {
  Space s = SmallSpace();
  Config c = {4, 3, 0};  // tile inner 16, unroll 8
  EXPECT_EQ(s.Check(c), "budget: tile*unroll > 16");
}

TEST(SpaceTest, GivenSamplingWeShouldOnlyYieldValidConfigsAndReachMostOfThem) {
  Space s = SmallSpace();
  std::mt19937_64 rng(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    auto idx = s.SampleValid(rng);
    ASSERT_TRUE(idx.has_value());
    EXPECT_TRUE(s.ValidIndex(*idx));
    seen.insert(*idx);
  }
  EXPECT_EQ(seen.size(), s.CountValid());
}

TEST(SpaceTest, GivenAnImpossibleSpaceSamplingShouldGiveUp) {
  Space s;
  s.AddList("a", {1, 2}).AddConstraint("never", [](const ConfigView&) { return "no"; });
  std::mt19937_64 rng(1);
  EXPECT_FALSE(s.SampleValid(rng, 50).has_value());
  EXPECT_EQ(s.CountValid(), 0u);
}

TEST(SpaceTest, GivenAConfigItsNeighboursShouldDifferInExactlyOneKnobAndBeValid) {
  Space s = SmallSpace();
  uint64_t base = s.IndexOf({1, 1, 1});
  ASSERT_TRUE(s.ValidIndex(base));
  auto ns = s.Neighbors(base);
  EXPECT_FALSE(ns.empty());
  Config b = s.FromIndex(base);
  for (uint64_t n : ns) {
    Config c = s.FromIndex(n);
    int diff = 0;
    for (size_t k = 0; k < c.size(); ++k) diff += c[k] != b[k];
    EXPECT_EQ(diff, 1);
    EXPECT_TRUE(s.ValidIndex(n));
  }
}

TEST(SpaceTest, GivenAMillionPointSpaceWeShouldCountAndEnumerateLazily) {
  Space s;
  for (int k = 0; k < 6; ++k) s.AddList("k" + std::to_string(k), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ASSERT_EQ(s.RawSize(), 1000000u);
  int k0 = s.KnobIndex("k0"), k1 = s.KnobIndex("k1");
  s.AddConstraint("sum", [k0, k1](const ConfigView& v) { return v.Value(k0) + v.Value(k1) == 11 ? "" : "no"; });
  EXPECT_EQ(s.CountValid(), 10u * 10000u);
  int seen = 0;
  s.ForEachValid([&](uint64_t) { return ++seen < 3; });
  EXPECT_EQ(seen, 3);
}

TEST(SpaceTest, GivenBadJsonWeShouldRejectItClearly) {
  Space s = SmallSpace();
  EXPECT_FALSE(s.FromJson(nlohmann::json::parse(R"({"tile":[4,4],"unroll":3,"vec":0})")).ok());
  EXPECT_FALSE(s.FromJson(nlohmann::json::parse(R"({"tile":[4,4],"unroll":2})")).ok());
  auto extra = s.FromJson(nlohmann::json::parse(R"({"tile":[4,4],"unroll":2,"vec":0,"zz":1})"));
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("zz"), std::string::npos);
  auto tvm = s.FromJson(nlohmann::json::parse(R"({"tile":[-1,4],"unroll":2,"vec":true})"));
  ASSERT_TRUE(tvm.ok());
  EXPECT_EQ(*tvm, (Config{2, 1, 1}));
}

}  // namespace
}  // namespace tunefleet
