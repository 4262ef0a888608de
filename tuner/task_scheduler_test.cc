#include "tuner/task_scheduler.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TaskProgress Measured(int64_t count, double best_cost, uint64_t trials) {
  TaskProgress t;
  t.count = count;
  t.best_cost = best_cost;
  t.trials = trials;
  t.curve.assign(trials, best_cost);
  return t;
}

TEST(TaskSchedulerTest, GivenUntriedTasksOfUnknownWeightEachShouldGetAFirstBatchInTheRunsOrder) {
  TaskScheduler s(8);
  std::vector<TaskProgress> tasks = {Measured(1, 1e-3, 8), TaskProgress{}, TaskProgress{}};
  EXPECT_EQ(s.Next(tasks), 1);
  tasks[1] = Measured(1, 1e-3, 8);
  EXPECT_EQ(s.Next(tasks), 2);
}

TEST(TaskSchedulerTest, GivenAResumedLogAUnitWithLessThanABatchShouldGetItsFirstBatchBeforeTunedUnitsGetMore) {
  // The log a resumed run starts from: a heavy unit tuned for two batches, one with only its fallback (a round's),
  // one stopped after 3 trials of its first batch, one with nothing. Trials count what the log holds, so the heavy
  // unit, with no trial of this run, does not get a first batch again.
  TaskScheduler s(8);
  std::vector<TaskProgress> tasks = {Measured(10, 5e-3, 16), Measured(1, 1e-3, 1), Measured(1, 1e-3, 3),
                                     TaskProgress{}};
  for (int expected : {1, 2, 3}) {
    ASSERT_EQ(s.Next(tasks), expected);
    tasks[expected] = Measured(1, 1e-3, 8);
  }
  EXPECT_EQ(s.Next(tasks), 0);  // then by score: the heavy unit
}

TaskProgress Untried(double flops, double fallback_cost = 0, int group = -1, int64_t count = 1) {
  TaskProgress t;
  t.count = count;
  t.flops = flops;
  t.fallback_cost = fallback_cost;
  t.group = group;
  return t;
}

std::vector<size_t> FirstBatches(std::vector<TaskProgress> tasks) {
  // The order Next gives them in, one first batch at a time.
  TaskScheduler s(8);
  std::vector<size_t> order;
  for (int next; (next = s.Next(tasks)) >= 0 && tasks[next].trials == 0;) {
    order.push_back(static_cast<size_t>(next));
    tasks[next].trials = 8;
    tasks[next].best_cost = 1e-3;
    tasks[next].curve.assign(8, 1e-3);
    tasks[next].done = true;  // enough for this order
  }
  return order;
}

TEST(TaskSchedulerTest, GivenUntriedUnitsWithoutMeasuredFallbacksTheHeaviestByFlopsShouldGoFirst) {
  // A run cut short (by its budget or a stop) has then tuned the layers that weigh most.
  EXPECT_EQ(FirstBatches({Untried(1e9), Untried(3e9), Untried(2e9)}), (std::vector<size_t>{1, 2, 0}));
  // Occurrences count: 2 × 2 GFLOP outweigh 3 GFLOP.
  EXPECT_EQ(FirstBatches({Untried(3e9), Untried(2e9, 0, -1, 2)}), (std::vector<size_t>{1, 0}));
}

TEST(TaskSchedulerTest, GivenMeasuredFallbacksTheSlowestLayerShouldGoFirstWhateverItsFlops) {
  // The heaviest by FLOPs runs its fallback in 1 ms, a lighter layer (a reduction over many channels, say) in 3.
  EXPECT_EQ(FirstBatches({Untried(3e9, 1e-3), Untried(1e9, 3e-3), Untried(2e9, 2e-3)}),
            (std::vector<size_t>{1, 2, 0}));
  // 3 occurrences × 1.5 ms outweigh 1 × 3 ms.
  EXPECT_EQ(FirstBatches({Untried(1e9, 3e-3), Untried(1e9, 1.5e-3, -1, 3)}), (std::vector<size_t>{1, 0}));
}

TEST(TaskSchedulerTest, GivenATasksTemplatesTheFastestOfTheirFallbacksShouldWeighThemAll) {
  // Task 0 runs its fastest template: 1 ms, although its other template's fallback takes 10 ms. Task 1 takes 2
  // ms, so it goes first; then task 0's templates, in the run's order.
  EXPECT_EQ(FirstBatches({Untried(1e9, 10e-3, 0), Untried(1e9, 1e-3, 0), Untried(1e9, 2e-3, 1)}),
            (std::vector<size_t>{2, 0, 1}));
}

TEST(TaskSchedulerTest, GivenATaskOneTemplateTunedItsOtherTemplatesShouldWaitBehindSlowerLayers) {
  // Task 0 runs 3 ms untuned and 1 ms once its first template had a batch (FirstBatches gives every batch 1 ms):
  // task 1, still at its 2 ms fallback, goes before task 0's second template.
  EXPECT_EQ(FirstBatches({Untried(1e9, 3e-3, 0), Untried(1e9, 4e-3, 0), Untried(1e9, 2e-3, 1)}),
            (std::vector<size_t>{0, 2, 1}));
  // Still the slowest at 1 ms, against task 1's 0.5 ms: its second template comes next.
  EXPECT_EQ(FirstBatches({Untried(1e9, 10e-3, 0), Untried(1e9, 12e-3, 0), Untried(1e9, 0.5e-3, 1)}),
            (std::vector<size_t>{0, 1, 2}));
}

TEST(TaskSchedulerTest, GivenATemplateWhoseFallbackFailedTheBestItReachedShouldWeighItsTask) {
  // Task 0's first template had no fallback (it failed) but a batch that reached 1 ms; its other template's
  // fallback ran 5 ms. The task runs 1 ms now, less than task 1's 2 ms.
  TaskProgress tuned = Measured(1, 1e-3, 8);
  tuned.group = 0;
  tuned.flops = 1e9;
  TaskScheduler s(8);
  EXPECT_EQ(s.Next({tuned, Untried(1e9, 5e-3, 0), Untried(1e9, 2e-3, 1)}), 2);
}

TEST(TaskSchedulerTest, GivenAUnitWithoutAFallbackItsFlopsAtTheMedianRateOfTheOthersShouldWeighIt) {
  // Fallback rates 1, 2 and 1 TFLOP/s: the median, 1 TFLOP/s, puts 2.5 GFLOP without a fallback at 2.5 ms,
  // between the measured 3 ms and 2 ms.
  EXPECT_EQ(FirstBatches({Untried(1e9, 1e-3), Untried(4e9, 2e-3), Untried(3e9, 3e-3), Untried(2.5e9)}),
            (std::vector<size_t>{2, 3, 1, 0}));
}

TEST(TaskSchedulerTest, GivenATasksTemplatesOfEqualWeightTheyShouldKeepTheRunsOrder) {
  TaskScheduler s(8);
  TaskProgress a = Untried(2e9, 0, 0), b = Untried(2e9, 0, 0), light = Untried(1e9);
  EXPECT_EQ(s.Next({light, a, b}), 1);
  EXPECT_EQ(s.Next({light, Measured(1, 1e-3, 8), b}), 2);
}

TEST(TaskSchedulerTest, GivenEqualProgressTheHeavierLayerShouldGoFirst) {
  TaskScheduler s(8);
  // 3 occurrences × 1 ms outweigh 1 occurrence × 2 ms.
  std::vector<TaskProgress> tasks = {Measured(1, 2e-3, 16), Measured(3, 1e-3, 16)};
  EXPECT_EQ(s.Next(tasks), 1);
}

TEST(TaskSchedulerTest, GivenATaskStillImprovingItShouldWinOverAStalledOneOfEqualWeight) {
  TaskScheduler s(4);
  TaskProgress stalled = Measured(1, 1e-3, 8);
  TaskProgress improving = Measured(1, 1e-3, 8);
  improving.curve = {4e-3, 4e-3, 4e-3, 4e-3, 2e-3, 2e-3, 1.5e-3, 1e-3};
  EXPECT_GT(s.Score(improving), s.Score(stalled));
  EXPECT_EQ(s.Next({stalled, improving}), 1);
}

TEST(TaskSchedulerTest, GivenEveryTaskDoneItShouldReturnMinusOne) {
  TaskScheduler s(8);
  TaskProgress a = Measured(1, 1e-3, 8), b = Measured(2, 1e-3, 8);
  a.done = b.done = true;
  EXPECT_EQ(s.Next({a, b}), -1);
}

TEST(TaskSchedulerTest, GivenATaskWithNoSuccessYetItShouldBeTriedBeforeMeasuredOnes) {
  TaskScheduler s(8);
  TaskProgress failing;  // measured, nothing succeeded yet
  failing.trials = 8;
  failing.curve.assign(8, 0);
  EXPECT_EQ(s.Next({Measured(10, 1e-2, 8), failing}), 1);
}

// ... for two batches; after that every config it tried failed, and it gets trials only when nothing else is left
// (it had taken every batch until its space was spent).
TEST(TaskSchedulerTest, GivenATaskFailingForTwoBatchesItShouldComeAfterEveryTaskThatRuns) {
  TaskScheduler s(8);
  TaskProgress failing;
  failing.trials = 16;
  failing.curve.assign(16, 0);
  TaskProgress stalled = Measured(1, 1e-2, 400);  // long on a plateau, the lowest score a running task gets
  EXPECT_EQ(s.Next({failing, stalled}), 1);
  stalled.done = true;
  EXPECT_EQ(s.Next({failing, stalled}), 0);
}

TEST(TaskSchedulerTest, GivenTwoTemplatesOfOneTaskTheFasterShouldGetTheNextBatchOnceBothAreEquallyTried) {
  TaskScheduler s(32);
  // Same task (group 0): a template at 1 ms and one at 3 ms, both with 64 trials and no recent gain. Tuning the
  // slow one cannot lower the task's latency unless it overtakes the fast one.
  TaskProgress fast = Measured(1, 1e-3, 64), slow = Measured(1, 3e-3, 64);
  fast.group = slow.group = 0;
  EXPECT_EQ(s.Next({slow, fast}), 1);
  // As separate tasks the slow one is the heavier layer and goes first.
  fast.group = slow.group = -1;
  EXPECT_EQ(s.Next({slow, fast}), 0);
}

TEST(TaskSchedulerTest, GivenSiblingTemplatesEachShouldGetASecondBatchBeforeBeingJudged) {
  TaskScheduler s(32);
  // After one batch each, a template 2× behind its sibling still gets its second (model-guided) batch; a lone
  // template of another task does not get one ahead of the scores.
  TaskProgress fast = Measured(1, 1e-3, 64), slow = Measured(1, 2e-3, 32), lone = Measured(5, 1e-3, 32);
  fast.group = slow.group = 0;
  lone.group = 1;
  EXPECT_EQ(s.Next({fast, lone, slow}), 2);
  // Once it has had two batches it is weighed like the rest: the heavier lone task goes next.
  slow = Measured(1, 2e-3, 64);
  slow.group = 0;
  EXPECT_EQ(s.Next({fast, lone, slow}), 1);
}

TEST(TaskSchedulerTest, GivenATemplateOnALongPlateauASlowerImprovingSiblingShouldGetTheNextBatch) {
  TaskScheduler s(32);
  // The best template reached 1 ms within its first 128 trials and has not moved for 1,280 more; a sibling at
  // 1.6 ms after two batches is still improving. The plateau hands it the next batch.
  TaskProgress best = Measured(1, 1e-3, 1408), sibling = Measured(1, 1.6e-3, 64);
  best.curve.assign(128, 1.2e-3);
  best.curve.resize(1408, 1e-3);
  sibling.curve.assign(32, 1.8e-3);
  sibling.curve.resize(64, 1.6e-3);
  best.group = sibling.group = 0;
  EXPECT_EQ(s.Next({best, sibling}), 1);
  // Had the best one still been improving in its last batch, it would have kept the budget.
  best.curve.back() = 0.9e-3;
  best.best_cost = 0.9e-3;
  EXPECT_EQ(s.Next({best, sibling}), 0);
}

TEST(TaskSchedulerTest, GivenAClosebyTemplateWithFewTrialsExplorationShouldGiveItABatch) {
  TaskScheduler s(32);
  // The best template has had 512 trials; a sibling 15% slower has had two batches: it gets the next one.
  TaskProgress best = Measured(1, 1e-3, 512), sibling = Measured(1, 1.15e-3, 64);
  best.group = sibling.group = 3;
  EXPECT_EQ(s.Next({best, sibling}), 1);
  // Once it has had as many trials without catching up, the best one goes again.
  sibling = Measured(1, 1.15e-3, 512);
  sibling.group = 3;
  EXPECT_EQ(s.Next({best, sibling}), 0);
}

}  // namespace
}  // namespace tunefleet
