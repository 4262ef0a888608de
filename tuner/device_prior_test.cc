#include "tuner/device_prior.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search-spaces/template.h"
#include "tuner/strategy.h"

namespace tunefleet {
namespace {

DeviceLimits Gpu(uint32_t units) {
  DeviceLimits l;
  l.max_work_group_size = 1024;
  l.max_work_item_sizes[0] = l.max_work_item_sizes[1] = l.max_work_item_sizes[2] = 1024;
  l.image_support = true;
  l.image2d_max_width = l.image2d_max_height = 16384;
  l.compute_units = units;
  l.is_gpu = true;
  l.max_registers_per_item = 255;
  l.registers_per_compute_unit = 65536;
  return l;
}

DeviceLimits Cpu(uint32_t cores) {
  DeviceLimits l = Gpu(cores);
  l.is_gpu = false;
  l.max_registers_per_item = 0;
  l.registers_per_compute_unit = 0;
  return l;
}

struct World {
  const Template* tmpl;
  Task task;
  Space space;
};

World Depthwise(const DeviceLimits& limits) {
  const Template* t = FindTemplate("depthwise_conv2d_nchwc.image2d");
  EXPECT_NE(t, nullptr);
  Task task = Task::Parse("dwconv2d:1,64,14,14,3,3,2,1").value();
  Space space = t->MakeSpace(task, limits).value();
  return {t, std::move(task), std::move(space)};
}

// `n` distinct valid configs drawn at random.
std::vector<uint64_t> RandomValid(const Space& s, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  while (out.size() < n) {
    const uint64_t i = *s.SampleValid(rng);
    if (seen.insert(i).second) out.push_back(i);
  }
  return out;
}

double Score(const World& w, const DeviceLimits& limits, uint64_t idx) {
  return DevicePriorScore(w.tmpl->WorkItems(w.task, w.space, w.space.FromIndex(idx)), DeviceCapacity(limits));
}

TEST(DevicePriorTest, GivenAGpuItsCapacityShouldBeWhatItsRegisterFilesHoldAndGivenACpuItsCores) {
  EXPECT_DOUBLE_EQ(DeviceCapacity(Gpu(132)), 132.0 * 2048.0);  // 64K registers / 32 per item
  EXPECT_DOUBLE_EQ(DeviceCapacity(Cpu(2)), 2.0);
  DeviceLimits unknown_file = Gpu(4);
  unknown_file.registers_per_compute_unit = 0;  // limits built by hand: the 64K of DeviceLimits::From
  EXPECT_DOUBLE_EQ(DeviceCapacity(unknown_file), 4.0 * 2048.0);
  DeviceLimits none = Cpu(2);
  none.compute_units = 0;
  EXPECT_DOUBLE_EQ(DeviceCapacity(none), 1.0);
}

TEST(DevicePriorTest, GivenWorkItemsTheScoreShouldFallWithTheirLog2DistanceFromTheCapacity) {
  EXPECT_DOUBLE_EQ(DevicePriorScore(4096, 4096), 0);
  EXPECT_DOUBLE_EQ(DevicePriorScore(2048, 4096), -1);
  EXPECT_DOUBLE_EQ(DevicePriorScore(16384, 4096), -2);
  EXPECT_DOUBLE_EQ(DevicePriorScore(0, 4096), 0);  // unknown: no preference
}

TEST(DevicePriorTest, GivenAGpuOrderShouldPutTheMostParallelConfigsFirstAndGivenACpuTheLeast) {
  for (const DeviceLimits& limits : {Gpu(132), Cpu(2)}) {
    const World w = Depthwise(limits);
    const std::vector<uint64_t> pool = RandomValid(w.space, 200, 3);
    const std::vector<uint64_t> ordered = OrderByDevicePrior(*w.tmpl, w.task, w.space, limits, pool);
    ASSERT_EQ(ordered.size(), pool.size());
    EXPECT_TRUE(std::is_permutation(ordered.begin(), ordered.end(), pool.begin()));
    std::vector<double> items;
    for (uint64_t i : ordered) items.push_back(w.tmpl->WorkItems(w.task, w.space, w.space.FromIndex(i)));
    // Every config of this small layer launches fewer items than the GPU holds and more than the CPU has cores,
    // so the order is by work-items: descending on the GPU, ascending on the CPU.
    EXPECT_LT(*std::max_element(items.begin(), items.end()), DeviceCapacity(Gpu(132)));
    EXPECT_GT(*std::min_element(items.begin(), items.end()), 2.0);
    if (limits.is_gpu) {
      EXPECT_TRUE(std::is_sorted(items.rbegin(), items.rend()));
    } else {
      EXPECT_TRUE(std::is_sorted(items.begin(), items.end()));
    }
    EXPECT_NE(items.front(), items.back()) << "the pool should hold configs of different parallelism";
    // Configs of equal score keep the pool's order.
    for (size_t i = 1; i < ordered.size(); ++i) {
      if (items[i] != items[i - 1]) continue;
      const auto a = std::find(pool.begin(), pool.end(), ordered[i - 1]);
      const auto b = std::find(pool.begin(), pool.end(), ordered[i]);
      EXPECT_LT(a, b);
    }
  }
}

TEST(DevicePriorTest, GivenNoHistoryXgbsFirstPlanShouldComeFromThePriorAndNotWithPool0) {
  const DeviceLimits limits = Gpu(132);
  const World w = Depthwise(limits);
  auto first_batch = [&](size_t pool, std::string* status) {
    StrategyOptions o;
    o.seed = 5;
    o.prior_pool = pool;
    Result<std::unique_ptr<Strategy>> st = MakeStrategy(o, *w.tmpl, w.task, w.space, limits);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ((*st)->StatusLine().rfind("xgb: no plan yet", 0), 0u) << (*st)->StatusLine();
    std::vector<uint64_t> b = (*st)->NextBatch(16);
    *status = (*st)->StatusLine();
    return b;
  };
  auto mean_score = [&](const std::vector<uint64_t>& b) {
    double sum = 0;
    for (uint64_t i : b) sum += Score(w, limits, i);
    return sum / static_cast<double>(b.size());
  };
  std::string with_prior, without;
  const std::vector<uint64_t> prior_batch = first_batch(4, &with_prior);
  const std::vector<uint64_t> random_batch = first_batch(0, &without);
  ASSERT_EQ(prior_batch.size(), 16u);
  ASSERT_EQ(random_batch.size(), 16u);
  EXPECT_NE(with_prior.find("plan #1 (device prior)"), std::string::npos) << with_prior;
  EXPECT_NE(without.find("plan #1 (random)"), std::string::npos) << without;
  // The plan is handed out best first, and the space's median config scores below its first batch.
  for (size_t i = 1; i < prior_batch.size(); ++i) {
    EXPECT_GE(Score(w, limits, prior_batch[i - 1]), Score(w, limits, prior_batch[i]));
  }
  std::vector<double> all;
  for (uint64_t i : RandomValid(w.space, 400, 11)) all.push_back(Score(w, limits, i));
  std::nth_element(all.begin(), all.begin() + 200, all.end());
  EXPECT_GT(Score(w, limits, prior_batch.back()), all[200]);
  EXPECT_GT(mean_score(prior_batch), mean_score(random_batch) + 0.5);
  // The same seed gives the same plan.
  std::string again;
  EXPECT_EQ(first_batch(4, &again), prior_batch);
}

// GEMM opts out (Template::FollowsDevicePrior): its fast configs give each item a register tile, which the prior
// scores down. Its first plan with the default pool is the random one of --xgb-prior-pool 0, and says so.
TEST(DevicePriorTest, GivenAGemmTheFirstPlanShouldBeRandomAsWithPool0) {
  const DeviceLimits limits = Gpu(132);
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  EXPECT_FALSE(gemm->FollowsDevicePrior());
  EXPECT_TRUE(FindTemplate("depthwise_conv2d_nchwc.image2d")->FollowsDevicePrior());
  const Task task = Task::Parse("gemm:1024,1024,1024").value();
  const Space space = gemm->MakeSpace(task, limits).value();
  auto first_batch = [&](size_t pool, std::string* status) {
    StrategyOptions o;
    o.seed = 5;
    o.prior_pool = pool;
    Result<std::unique_ptr<Strategy>> st = MakeStrategy(o, *gemm, task, space, limits);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    std::vector<uint64_t> b = (*st)->NextBatch(16);
    *status = (*st)->StatusLine();
    return b;
  };
  std::string with_pool, without;
  const std::vector<uint64_t> pooled = first_batch(4, &with_pool);
  ASSERT_EQ(pooled.size(), 16u);
  EXPECT_EQ(pooled, first_batch(0, &without));
  EXPECT_NE(with_pool.find("plan #1 (random)"), std::string::npos) << with_pool;
}

// Without history the model starts from the prior (its base margin) and learns a correction to it: where the
// results say nothing the prior did not (here every config measures the same), the next plan still follows the
// prior, where a model fitted on the results alone has nothing to rank by.
TEST(DevicePriorTest, GivenResultsWithoutContrastXgbsNextPlanShouldStillFollowThePrior) {
  const DeviceLimits limits = Cpu(2);
  const World w = Depthwise(limits);
  StrategyOptions o;
  o.seed = 9;
  o.plan_size = 16;
  o.early_refits = false;
  Result<std::unique_ptr<Strategy>> st = MakeStrategy(o, *w.tmpl, w.task, w.space, limits);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  const std::vector<uint64_t> first = (*st)->NextBatch(16);
  ASSERT_EQ(first.size(), 16u);
  std::vector<Observation> results;
  for (uint64_t i : first) results.push_back({i, true, 1e-3});
  (*st)->Update(results);
  const std::vector<uint64_t> second = (*st)->NextBatch(16);
  ASSERT_EQ(second.size(), 16u);
  EXPECT_NE((*st)->StatusLine().find("refit #1"), std::string::npos) << (*st)->StatusLine();
  auto mean_score = [&](const std::vector<uint64_t>& b) {
    double sum = 0;
    for (uint64_t i : b) sum += Score(w, limits, i);
    return sum / static_cast<double>(b.size());
  };
  const double random_mean = mean_score(RandomValid(w.space, 400, 13));
  // The plan's epsilon share (1 of 16 here) is exploration; the rest is the prior's best of what is left.
  EXPECT_GT(mean_score(second), random_mean + 1.0) << "random configs score " << random_mean;
  size_t at_least_first_worst = 0;
  const double first_worst = Score(w, limits, first.back());
  for (uint64_t i : second) at_least_first_worst += Score(w, limits, i) >= first_worst ? 1 : 0;
  EXPECT_GE(at_least_first_worst, 12u);
}

// A warm-started model starts from the prior too, each history record's config scored in its own task: history
// that ranks nothing (every record of a sibling task measured the same) leaves the first plan in the prior's order.
TEST(DevicePriorTest, GivenHistoryWithoutContrastXgbsFirstPlanShouldFollowThePrior) {
  const DeviceLimits limits = Cpu(2);
  const World w = Depthwise(limits);
  const Task sibling_task = Task::Parse("dwconv2d:1,32,14,14,3,3,2,1").value();
  const Space sibling = w.tmpl->MakeSpace(sibling_task, limits).value();
  std::vector<HistoryRecord> history;
  for (uint64_t i : RandomValid(sibling, 200, 17)) {
    history.push_back({"dwconv2d:1,32,14,14,3,3,2,1", "other", sibling.ToJson(sibling.FromIndex(i)).dump(), true,
                       1e-3, 0});
  }
  StrategyOptions o;
  o.seed = 9;
  Result<std::unique_ptr<Strategy>> st = MakeStrategy(o, *w.tmpl, w.task, w.space, limits);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  (*st)->WarmStart(history);
  const std::vector<uint64_t> first = (*st)->NextBatch(64);
  ASSERT_EQ(first.size(), 64u);
  EXPECT_NE((*st)->StatusLine().find("warm start"), std::string::npos) << (*st)->StatusLine();
  double sum = 0;
  for (uint64_t i : first) sum += Score(w, limits, i);
  double random_sum = 0;
  const std::vector<uint64_t> random = RandomValid(w.space, 400, 13);
  for (uint64_t i : random) random_sum += Score(w, limits, i);
  EXPECT_GT(sum / 64.0, random_sum / 400.0 + 1.0);
}

}  // namespace
}  // namespace tunefleet
