#include "tuner/cost_ensemble.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tuner/strategy_test_space.h"

namespace tunefleet {
namespace {

using testing::HeldOutSplit;

HeldOutSplit MakeSplit(size_t train_n, size_t test_n) { return testing::MakeHeldOutSplit(train_n, test_n, 11); }

// Member k of an ensemble of `opts` over `base`, built and fitted on its own as the ensemble documents it: seed
// base.seed + 7919 k, opts.subsample, objective opts.objectives[k % size] (the base's when empty).
CostModel FitMemberAlone(const CostModelOptions& base, const EnsembleOptions& opts, int k, const TrainingSet& train) {
  CostModelOptions m = base;
  m.seed = base.seed + 7919 * static_cast<uint64_t>(k);
  m.subsample = opts.subsample;
  if (!opts.objectives.empty()) m.objective = opts.objectives[k % opts.objectives.size()];
  CostModel member(m);
  EXPECT_TRUE(member.Fit(train).ok()) << "member " << k;
  return member;
}

TEST(CostEnsembleTest, GivenOneMember_ItShouldPredictExactlyAsOneCostModelOnAllRows) {
  const HeldOutSplit split = MakeSplit(64, 200);
  CostModelOptions base;
  base.seed = 3;
  CostEnsemble ensemble(base, EnsembleOptions{1, 0.8, 2.0, {}});
  CostModel model(base);
  ASSERT_TRUE(ensemble.Fit(split.train).ok());
  ASSERT_TRUE(model.Fit(split.train).ok());
  Result<std::vector<float>> one = model.Predict(split.test_features, split.dim);
  Result<std::vector<float>> mean = ensemble.Predict(split.test_features, split.dim);
  Result<std::vector<float>> acq = ensemble.Acquisition(split.test_features, split.dim);
  ASSERT_TRUE(one.ok() && mean.ok() && acq.ok());
  EXPECT_EQ(*mean, *one);  // no subsampling, no spread: `--xgb-ensemble 1` replays the single-model strategy
  EXPECT_EQ(*acq, *one);
}

TEST(CostEnsembleTest, GivenFiveMembers_AcquisitionShouldBeTheirMeanPlusKappaTimesTheirSpread) {
  const HeldOutSplit split = MakeSplit(64, 200);
  CostModelOptions base;
  base.seed = 5;
  const EnsembleOptions opts{5, 0.8, 1.5, {}};
  CostEnsemble ensemble(base, opts);
  ASSERT_TRUE(ensemble.Fit(split.train).ok());
  Result<std::vector<float>> mean = ensemble.Predict(split.test_features, split.dim);
  Result<std::vector<float>> acq = ensemble.Acquisition(split.test_features, split.dim);
  ASSERT_TRUE(mean.ok() && acq.ok());

  // The same members fitted one by one.
  const size_t rows = split.test_truth.size();
  std::vector<double> sum(rows, 0), sum_sq(rows, 0);
  for (int k = 0; k < opts.members; ++k) {
    const CostModel member = FitMemberAlone(base, opts, k, split.train);
    Result<std::vector<float>> p = member.Predict(split.test_features, split.dim);
    ASSERT_TRUE(p.ok());
    for (size_t i = 0; i < rows; ++i) {
      sum[i] += (*p)[i];
      sum_sq[i] += double((*p)[i]) * (*p)[i];
    }
  }
  size_t disagree = 0;
  for (size_t i = 0; i < rows; ++i) {
    const double m = sum[i] / opts.members;
    const double sd = std::sqrt(std::max(0.0, sum_sq[i] / opts.members - m * m));
    EXPECT_NEAR((*mean)[i], m, 1e-4) << i;
    EXPECT_NEAR((*acq)[i], m + opts.kappa * sd, 1e-4) << i;
    if (sd > 1e-3) ++disagree;
  }
  // Bagging makes the members disagree somewhere, else there is no spread to plan by.
  EXPECT_GT(disagree, rows / 2);
}

TEST(CostEnsembleTest, GivenFiveBaggedMembers_TheirMeanShouldStillRankHeldOutConfigsWell) {
  const HeldOutSplit split = MakeSplit(300, 300);
  CostEnsemble ensemble(CostModelOptions{}, EnsembleOptions{});
  ASSERT_TRUE(ensemble.Fit(split.train).ok());
  Result<std::vector<float>> mean = ensemble.Predict(split.test_features, split.dim);
  ASSERT_TRUE(mean.ok());
  EXPECT_GT(SpearmanCorrelation(std::vector<double>(mean->begin(), mean->end()), split.test_truth), 0.8);
}

TEST(CostEnsembleTest, GivenMixedObjectives_EachMemberShouldBeStandardizedOnItsTrainingRowsBeforeTheMean) {
  const HeldOutSplit split = MakeSplit(300, 300);
  CostModelOptions base;
  base.seed = 7;
  const EnsembleOptions opts{5, 0.8, 1.0, {"rank", "ndcg"}};
  CostEnsemble ensemble(base, opts);
  EXPECT_EQ(ensemble.objectives(), (std::vector<std::string>{"rank", "ndcg"}));
  ASSERT_TRUE(ensemble.Fit(split.train).ok());
  Result<std::vector<float>> mean = ensemble.Predict(split.test_features, split.dim);
  ASSERT_TRUE(mean.ok());

  // The members fitted one by one (rank, ndcg, rank, ndcg, rank), each scaled by the mean and standard deviation
  // of its predictions on the training rows. The two objectives' raw scores differ in scale, so a plain mean
  // would be another number.
  const size_t rows = split.test_truth.size();
  std::vector<double> by_hand(rows, 0), raw(rows, 0);
  for (int k = 0; k < opts.members; ++k) {
    const CostModel member = FitMemberAlone(base, opts, k, split.train);
    ASSERT_EQ(member.options().objective, k % 2 == 0 ? "rank" : "ndcg");
    Result<std::vector<float>> on_train = member.Predict(split.train.features, split.dim);
    Result<std::vector<float>> p = member.Predict(split.test_features, split.dim);
    ASSERT_TRUE(on_train.ok() && p.ok());
    double sum = 0, sum_sq = 0;
    for (float v : *on_train) {
      sum += v;
      sum_sq += double(v) * v;
    }
    const double mu = sum / on_train->size();
    const double sd = std::sqrt(sum_sq / on_train->size() - mu * mu);
    ASSERT_GT(sd, 0) << "member " << k << " predicts one value";
    for (size_t i = 0; i < rows; ++i) {
      by_hand[i] += ((*p)[i] - mu) / sd / opts.members;
      raw[i] += (*p)[i] / opts.members;
    }
  }
  double off_raw = 0;
  for (size_t i = 0; i < rows; ++i) {
    EXPECT_NEAR((*mean)[i], by_hand[i], 1e-3) << i;
    off_raw = std::max(off_raw, std::abs((*mean)[i] - raw[i]));
  }
  EXPECT_GT(off_raw, 0.1);
  // And the mixed mean still ranks configs it was not trained on.
  EXPECT_GT(SpearmanCorrelation(std::vector<double>(mean->begin(), mean->end()), split.test_truth), 0.8);
}

TEST(CostEnsembleTest, GivenNoFitOrBadRows_WeShouldGetErrorsNotScores) {
  CostEnsemble ensemble(CostModelOptions{}, EnsembleOptions{});
  EXPECT_FALSE(ensemble.trained());
  EXPECT_FALSE(ensemble.Predict({1, 2, 3}, 3).ok());
  TrainingSet empty;
  empty.dim = 3;
  EXPECT_EQ(ensemble.Fit(empty).code(), Status::Code::kInvalidArgument);
  const HeldOutSplit split = MakeSplit(64, 10);
  ASSERT_TRUE(ensemble.Fit(split.train).ok());
  EXPECT_EQ(ensemble.fits(), 1);
  EXPECT_EQ(ensemble.Acquisition({1, 2, 3}, split.dim).status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet
