// ResultProblem: what the tracker accepts from an agent as a result.
#include "tracker/result_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tunefleet::tracker {
namespace {

proto::MeasureResult Ok(std::initializer_list<double> costs, double mean) {
  proto::MeasureResult r;
  r.set_status(proto::OK);
  for (double c : costs) r.add_costs(c);
  r.set_mean_cost(mean);
  return r;
}

TEST(ResultCheckTest, GivenAMeasuredKernelWithFinitePositiveCosts_ItShouldPass) {
  EXPECT_EQ(ResultProblem(Ok({1e-5, 2e-5}, 1.5e-5)), std::nullopt);
}

TEST(ResultCheckTest, GivenAnOkResultWithACostThatIsNotASecondCount_ItShouldSaySo) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, inf, -1e-5, 0.0, 1e-300, 1e7}) {
    EXPECT_EQ(ResultProblem(Ok({1e-5, bad}, 1e-5)), "is OK with a cost that is not a time between 1 ps and 10^6 s")
        << bad;
    EXPECT_EQ(ResultProblem(Ok({1e-5}, bad)), "is OK with a mean cost that is not a time between 1 ps and 10^6 s")
        << bad;
  }
  EXPECT_EQ(ResultProblem(Ok({1e-9 / 1000}, 1e-9 / 1000)), std::nullopt);  // 1 ns over --number 1000: the least
  EXPECT_EQ(ResultProblem(Ok({}, 1e-5)), "is OK without a cost");
}

TEST(ResultCheckTest, GivenAFailureItNeedsNoCostAndMayCarryANanError) {
  proto::MeasureResult r;
  r.set_status(proto::WRONG_ANSWER);
  r.set_max_abs_error(std::nan(""));  // a kernel that writes NaN is a wrong answer, not a broken agent
  r.set_message("max abs error nan");
  EXPECT_EQ(ResultProblem(r), std::nullopt);
}

TEST(ResultCheckTest, GivenAStatusTheProtocolDoesNotDefineOrAHugeMessage_ItShouldSaySo) {
  proto::MeasureResult r;
  r.set_status(static_cast<proto::MeasureStatus>(77));
  EXPECT_EQ(ResultProblem(r), "has status 77, which the protocol does not define");
  r.set_status(proto::DEVICE_COMPILE_FAILED);
  r.set_message(std::string(kMaxResultMessageBytes, 'x'));
  EXPECT_EQ(ResultProblem(r), std::nullopt);
  r.set_message(std::string(kMaxResultMessageBytes + 1, 'x'));
  EXPECT_EQ(ResultProblem(r), "has a message of 65537 bytes (at most 65536)");
}

}  // namespace
}  // namespace tunefleet::tracker
