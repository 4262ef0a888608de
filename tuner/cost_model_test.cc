#include "tuner/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "tuner/strategy_test_space.h"

namespace tunefleet {
namespace {

// Trains on `train_n` random valid configs of the tiling space and returns Spearman on `test_n` others.
double HeldOutSpearman(const std::string& objective, size_t train_n, size_t test_n) {
  const testing::HeldOutSplit split = testing::MakeHeldOutSplit(train_n, test_n, 7);
  CostModelOptions opts;
  opts.objective = objective;
  CostModel model(opts);
  EXPECT_TRUE(model.Fit(split.train).ok());
  Result<std::vector<float>> pred = model.Predict(split.test_features, split.dim);
  EXPECT_TRUE(pred.ok()) << pred.status().ToString();
  return SpearmanCorrelation(std::vector<double>(pred->begin(), pred->end()), split.test_truth);
}

TEST(CostModelTest, GivenARankModelTrainedOnRandomConfigs_WeShouldRankHeldOutConfigsWell) {
  EXPECT_GT(HeldOutSpearman("rank", 300, 300), 0.8);
}

// ndcg spends the model on the order among the fastest configs, not on the whole order (its Spearman over all
// held-out configs is about 0.4 here): what it must get right is which configs are at the top.
TEST(CostModelTest, GivenAnNdcgModel_ItsTopPredictionsShouldHoldTheFastestHeldOutConfigs) {
  const testing::HeldOutSplit split = testing::MakeHeldOutSplit(300, 2000, 7);
  CostModelOptions opts;
  opts.objective = "ndcg";
  CostModel model(opts);
  ASSERT_TRUE(model.Fit(split.train).ok());
  Result<std::vector<float>> pred = model.Predict(split.test_features, split.dim);
  ASSERT_TRUE(pred.ok()) << pred.status().ToString();
  std::vector<size_t> order(pred->size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*pred)[a] > (*pred)[b]; });
  std::vector<double> truth = split.test_truth;
  std::sort(truth.begin(), truth.end(), std::greater<>());
  const double top_2_percent = truth[truth.size() / 50];
  size_t hits = 0;
  for (size_t k = 0; k < 40; ++k) hits += split.test_truth[order[k]] >= top_2_percent ? 1 : 0;
  // 40 random picks hold 0.8 of the top 2% on average.
  EXPECT_GE(hits, 10u);
}

TEST(CostModelTest, GivenARegressionModel_WeShouldAlsoRankHeldOutConfigsWell) {
  EXPECT_GT(HeldOutSpearman("reg", 300, 300), 0.8);
}

TEST(CostModelTest, GivenAnEmptyTrainingSet_WeShouldRefuseToFit) {
  CostModel model(CostModelOptions{});
  TrainingSet empty;
  empty.dim = 3;
  EXPECT_EQ(model.Fit(empty).code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(model.trained());
  EXPECT_FALSE(model.Predict({1, 2, 3}, 3).ok());
}

TEST(CostModelTest, GivenGroupsWithWeights_WeShouldFitAndPredictEveryRow) {
  TrainingSet set;
  set.dim = 1;
  set.features = {1, 2, 3, 4, 1, 2, 3, 4};
  set.scores = {0.1f, 0.2f, 0.3f, 0.4f, 0.1f, 0.2f, 0.3f, 0.4f};
  set.group_sizes = {4, 4};
  set.group_weights = {0.5f, 1.0f};
  for (const char* objective : {"rank", "ndcg", "reg"}) {
    CostModelOptions opts;
    opts.objective = objective;
    CostModel model(opts);
    ASSERT_TRUE(model.Fit(set).ok()) << objective;
    Result<std::vector<float>> p = model.Predict({1, 4}, 1);
    ASSERT_TRUE(p.ok());
    EXPECT_LT((*p)[0], (*p)[1]) << objective;
  }
}

// A base margin is where the trees start: with features that cannot tell the rows apart, a model fitted on margins
// ranks by them (and without them predicts one value), and a margin vector of the wrong length is refused.
TEST(CostModelTest, GivenBaseMarginsAndFeaturesWithoutContrast_PredictionsShouldFollowTheMargins) {
  TrainingSet set;
  set.dim = 1;
  set.features = {1, 1, 1, 1};
  set.scores = {0.5f, 0.5f, 0.5f, 0.5f};
  set.margins = {-2.0f, 0.0f, -1.0f, -3.0f};
  for (const char* objective : {"rank", "ndcg", "reg"}) {
    CostModelOptions opts;
    opts.objective = objective;
    CostModel model(opts);
    ASSERT_TRUE(model.Fit(set).ok()) << objective;
    Result<std::vector<float>> with = model.Predict(set.features, 1, set.margins);
    ASSERT_TRUE(with.ok()) << with.status().ToString();
    EXPECT_GT((*with)[1], (*with)[2]) << objective;
    EXPECT_GT((*with)[2], (*with)[0]) << objective;
    EXPECT_GT((*with)[0], (*with)[3]) << objective;
    Result<std::vector<float>> without = model.Predict(set.features, 1);
    ASSERT_TRUE(without.ok());
    EXPECT_EQ((*without)[0], (*without)[3]) << objective;
    EXPECT_EQ(model.Predict(set.features, 1, {0.0f}).status().code(), Status::Code::kInvalidArgument);
  }
  TrainingSet ragged = set;
  ragged.margins.pop_back();
  EXPECT_EQ(CostModel(CostModelOptions{}).Fit(ragged).code(), Status::Code::kInvalidArgument);
}

// The trees learn a correction to the margins: where the measured order contradicts them, the fitted model follows
// the measurements. Here the margins favour x = 0 by 1 and every measurement says x = 1 is faster.
TEST(CostModelTest, GivenMarginsTheResultsContradict_TheTreesShouldCorrectThem) {
  TrainingSet set;
  set.dim = 1;
  for (int i = 0; i < 32; ++i) {
    const float x = static_cast<float>(i % 2);
    set.features.push_back(x);
    set.scores.push_back(x > 0 ? 0.9f : 0.3f);
    set.margins.push_back(x > 0 ? 0.0f : 1.0f);
  }
  for (const char* objective : {"rank", "ndcg"}) {
    CostModelOptions opts;
    opts.objective = objective;
    CostModel model(opts);
    ASSERT_TRUE(model.Fit(set).ok()) << objective;
    Result<std::vector<float>> p = model.Predict({0, 1}, 1, {1.0f, 0.0f});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_LT((*p)[0], (*p)[1]) << objective;
  }
}

TEST(CostModelTest, GivenKnownSeries_WeShouldComputeSpearmanWithTies) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(SpearmanCorrelation({1, 1, 2, 3}, {1, 2, 3, 4}), 0.9486832980505138, 1e-12);
  EXPECT_EQ(SpearmanCorrelation({1, 1}, {1, 2}), 0.0);
}

// A correlation that is undefined is no 0.00: a model that predicts one value for everything is degenerate, not one
// that ranks by chance.
TEST(CostModelTest, GivenConstantPredictions_SpearmanTextShouldSayNotApplicableAndWhy) {
  EXPECT_EQ(SpearmanText({1, 2, 3, 4}, {4, 3, 2, 1}), "Spearman -1.00");
  EXPECT_EQ(SpearmanText({1, 1, 2, 3}, {1, 2, 3, 4}), "Spearman 0.95");
  EXPECT_EQ(SpearmanText({0.5, 0.5, 0.5}, {1, 2, 3}), "Spearman n/a (constant predictions)");
  EXPECT_EQ(SpearmanText({0.5, 0.5, 0.5}, {0, 0, 0}), "Spearman n/a (constant predictions)");
  EXPECT_EQ(SpearmanText({1, 2, 3}, {0, 0, 0}), "Spearman n/a (equal measured scores)");
  EXPECT_EQ(SpearmanText({1}, {1}), "Spearman n/a (fewer than 2 configs)");
}

}  // namespace
}  // namespace tunefleet
