#include "tuner/fit_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace tunefleet {
namespace {

std::vector<float> RandomScores(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(FitRowsTest, GivenNoMoreRowsThanTheBudget_EveryRowShouldBeKept) {
  const std::vector<float> scores = RandomScores(100, 1);
  const std::vector<size_t> rows = RowsToFit(scores, 100);
  ASSERT_EQ(rows.size(), 100u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i], i);
  EXPECT_EQ(RowsToFit({}, 10).size(), 0u);
}

TEST(FitRowsTest, GivenMoreRowsThanTheBudget_TheNewestTheFastestAndAnEvenStrideShouldFillItExactly) {
  const size_t n = 50000, budget = 1000;
  const std::vector<float> scores = RandomScores(n, 2);
  const std::vector<size_t> rows = RowsToFit(scores, budget);
  ASSERT_EQ(rows.size(), budget);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::set<size_t>(rows.begin(), rows.end()).size(), budget);  // no row twice
  const std::set<size_t> kept(rows.begin(), rows.end());
  for (size_t r = n - budget / 4; r < n; ++r) EXPECT_EQ(kept.count(r), 1u) << "newest row " << r;
  // The budget / 4 fastest older rows are all in.
  std::vector<size_t> older(n - budget / 4);
  for (size_t i = 0; i < older.size(); ++i) older[i] = i;
  std::sort(older.begin(), older.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  for (size_t i = 0; i < budget / 4; ++i) EXPECT_EQ(kept.count(older[i]), 1u) << "fast row " << older[i];
  // The rest is spread over the whole of the older rows: no gap between kept older rows much wider than the stride.
  const size_t stride = (n - budget / 2) / (budget / 2);
  size_t prev = 0, widest = 0;
  for (size_t r : rows) {
    if (r >= n - budget / 4) break;
    widest = std::max(widest, r - prev);
    prev = r;
  }
  EXPECT_LE(widest, stride + 1);
  EXPECT_LE(rows.front(), stride);
}

TEST(FitRowsTest, GivenTheSameScores_TheSameRowsShouldBeKeptEvenWithTies) {
  std::vector<float> scores(20000, 0.5f);  // every score tied: the earlier rows win the fastest share
  for (size_t i = 0; i < scores.size(); i += 7) scores[i] = 0.0f;
  const std::vector<size_t> a = RowsToFit(scores, 2048);
  EXPECT_EQ(a, RowsToFit(scores, 2048));
  ASSERT_EQ(a.size(), 2048u);
  EXPECT_EQ(a[0], 0u);
  EXPECT_EQ(a[1], 1u);  // row 0 is 0.0: taken by the stride; rows 1.. are the first of the tied fastest
  EXPECT_EQ(RowsToFit(scores, 0).size(), 0u);
}

}  // namespace
}  // namespace tunefleet
