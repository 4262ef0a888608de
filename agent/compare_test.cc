#include "agent/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tunefleet::agent {
namespace {

TEST(CompareTest, GivenOutputsWithinTolerance_WeShouldAcceptThem) {
  CompareResult r = CompareOutputs({1.0f, 2.0f, 100.0f}, {1.0f, 2.0005f, 100.05f}, 0, 1e-4, 1e-3);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.compared, 3u);
  EXPECT_NEAR(r.max_abs_error, 0.05, 1e-4);
}

TEST(CompareTest, GivenOneBadElement_WeShouldReportItsIndexAndTheMaxError) {
  CompareResult r = CompareOutputs({1.0f, 5.0f, 3.0f, 9.0f}, {1.0f, 2.0f, 3.0f, 4.0f}, 0, 1e-5, 1e-5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad, 1);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 5.0);
  EXPECT_NE(r.message.find("element 1"), std::string::npos) << r.message;
}

TEST(CompareTest, GivenNaN_WeShouldCallItWrong) {
  CompareResult r = CompareOutputs({1.0f, NAN}, {1.0f, 2.0f}, 0, 1.0, 1.0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad, 1);
}

TEST(CompareTest, GivenACompareCount_WeShouldIgnoreTheRest) {
  CompareResult r = CompareOutputs({1.0f, 2.0f, 99.0f}, {1.0f, 2.0f, 3.0f}, 2, 0, 0);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.compared, 2u);
}

TEST(CompareTest, GivenDifferentLengths_WeShouldRejectThem) {
  EXPECT_FALSE(CompareOutputs({1.0f}, {1.0f, 2.0f}, 0, 1, 1).ok);
  EXPECT_FALSE(CompareOutputs({1.0f}, {1.0f, 2.0f}, 2, 1, 1).ok);
}

}  // namespace
}  // namespace tunefleet::agent
