#include "common/status.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  TF_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(StatusTest, GivenAnErrorWeShouldSeeItsCodeAndContext) {
  Status s = Status::NotFound("no such task").WithContext("tunefleet best");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "NotFound: tunefleet best: no such task");
  EXPECT_EQ(s.WithNote("see --help").ToString(), "NotFound: tunefleet best: no such task (see --help)");
  EXPECT_EQ(Status::OK().ToString(), "OK");
  EXPECT_TRUE(Status::OK().WithNote("x").ok());
}

TEST(StatusTest, GivenAChainOfResultsTheFirstErrorShouldPropagate) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

}  // namespace
}  // namespace tunefleet
