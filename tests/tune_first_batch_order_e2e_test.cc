// The order of a short run's first batches, live: a real tracker, a real agent on PoCL, `tune` over two 5x5 conv
// tasks that each fit two templates (four units), on a budget that gives two of them a first batch; and a resumed
// run's first batch going to the task the log lacks.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

class TuneFirstBatchOrderE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    fleet_.StartTracker();
    fleet_.StartAgent("pocl");
    ASSERT_TRUE(fleet_.WaitForAgents("pocl", 1)) << fleet_.agent(0).Log();
  }
  LocalFleet fleet_;
};

TEST_F(TuneFirstBatchOrderE2E, GivenAShortBudgetEachFirstBatchShouldGoToTheTaskSlowestSoFarThatHasAnUntriedTemplate) {
  // conv2d_nchw.buffer and conv2d_nchwc.image2d fit each task; 18 trials: a round of 4 fallbacks, then first
  // batches of 7 (the round's trial counts as one of 8) for 2 units. On PoCL the first, conv2d_nchw.buffer, takes
  // its task from 0.5-0.8 ms (its fastest fallback) to about 0.17 ms, below the other task's fallbacks, so the
  // second batch goes to the other task rather than to the first one's other template.
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--trials", "18", "--batch", "8", "--tuner", "random"};
  for (const char* spec : {"conv2d:1,16,16,16,16,5,5,1,2", "conv2d:1,16,16,16,12,5,5,1,2"})
    cmd.insert(cmd.end(), {"--task", spec});
  cmd.insert(cmd.end(), {"--db", fleet_.db(), "--number", "1", "--repeat", "1"});
  RunResult r = fleet_.Cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("measuring the fallback config of 4 units first"), std::string::npos) << r.output;

  const auto rows = fleet_.Sql("SELECT task_id, template_id, status, mean_cost FROM records ORDER BY id");
  ASSERT_EQ(rows.size(), 18u);
  using Unit = std::pair<std::string, std::string>;  // (task, template)
  std::map<Unit, int> records;                       // per unit, so far
  std::map<std::string, double> latency;             // per task: its fastest successful record so far
  auto record = [&](const std::vector<std::string>& row) {
    ++records[{row[0], row[1]}];
    const double cost = std::stod(row[3]);
    if (row[2] != "0" || cost <= 0) return;
    auto [it, fresh] = latency.emplace(row[0], cost);
    if (!fresh && cost < it->second) it->second = cost;
  };
  // The round: each unit's fallback once, all of them run on PoCL (the order below needs every task's latency).
  constexpr size_t kRound = 4;
  for (size_t i = 0; i < kRound; ++i) {
    ASSERT_EQ(rows[i][2], "0") << "fallback record " << i << " failed";
    record(rows[i]);
  }
  ASSERT_EQ(records.size(), kRound);
  ASSERT_EQ(latency.size(), 2u);

  // Then each batch (the records of one unit in a row): a unit's first, given to the task with the largest latency
  // so far among those with a template that has only its fallback. Once a template has tuned a task below another
  // task's latency, the task's other templates wait.
  int batches = 0;
  for (size_t i = kRound; i < rows.size();) {
    const Unit unit{rows[i][0], rows[i][1]};
    EXPECT_EQ(records[unit], 1) << "batch at record " << i << " is not its unit's first";
    std::set<std::string> untried;
    for (const auto& [u, n] : records)
      if (n == 1) untried.insert(u.first);
    std::string slowest;
    double slowest_latency = -1;
    for (const std::string& task : untried)
      if (latency[task] > slowest_latency) slowest_latency = latency[task], slowest = task;
    EXPECT_EQ(unit.first, slowest) << "batch at record " << i << " went to task " << unit.first << " ("
                                   << latency[unit.first] << " s so far), not to " << slowest << " (" << slowest_latency
                                   << " s)";
    for (; i < rows.size() && rows[i][0] == unit.first && rows[i][1] == unit.second; ++i) record(rows[i]);
    ++batches;
  }
  EXPECT_EQ(batches, 2);
}

TEST_F(TuneFirstBatchOrderE2E, GivenAResumedShortRunItsFirstBatchShouldGoToTheTaskSlowestInTheLog) {
  // The first run: a round of 4 fallbacks and one first batch of 4 (--trials 8), which on PoCL takes its task below
  // the other task's fallbacks (as above). The resumed run (--trials 16: 8 more, one batch) has no round to measure:
  // the log holds every unit's fallback, so its first batch goes to the task slowest in the log. Ordered by count x
  // FLOPs, it went to the first task (16 output channels against 12) whatever the log said.
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--batch", "8", "--tuner", "random"};
  for (const char* spec : {"conv2d:1,16,16,16,16,5,5,1,2", "conv2d:1,16,16,16,12,5,5,1,2"})
    cmd.insert(cmd.end(), {"--task", spec});
  cmd.insert(cmd.end(), {"--db", fleet_.db(), "--number", "1", "--repeat", "1", "--trials"});
  auto first = cmd;
  first.push_back("8");
  RunResult r = fleet_.Cli(first);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("measuring the fallback config of 4 units first"), std::string::npos) << r.output;
  auto resumed = cmd;
  resumed.push_back("16");
  r = fleet_.Cli(resumed);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("resume: 8 trials already recorded"), std::string::npos) << r.output;

  const auto rows = fleet_.Sql("SELECT task_id, template_id, status, mean_cost FROM records ORDER BY id");
  ASSERT_EQ(rows.size(), 16u);
  std::map<std::string, double> latency;  // per task: its fastest successful record in the first run
  std::vector<std::pair<std::string, std::string>> units;  // in the run's order (the round's)
  for (size_t i = 0; i < 8; ++i) {
    if (i < 4) units.emplace_back(rows[i][0], rows[i][1]);
    const double cost = std::stod(rows[i][3]);
    if (rows[i][2] != "0" || cost <= 0) continue;
    auto [it, fresh] = latency.emplace(rows[i][0], cost);
    if (!fresh && cost < it->second) it->second = cost;
  }
  ASSERT_EQ(latency.size(), 2u) << "a task had no successful record in the first run";
  // Count x latency, both counts 1; a tie keeps the run's order.
  std::pair<std::string, std::string> expected = units[0];
  for (const auto& u : units)
    if (latency[u.first] > latency[expected.first]) expected = u;
  for (size_t i = 8; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][0], expected.first) << "record " << i << ": the resumed run's batch went to task " << rows[i][0]
                                          << " (" << latency[rows[i][0]] << " s in the log), not to "
                                          << expected.first << " (" << latency[expected.first] << " s)";
    EXPECT_EQ(rows[i][1], expected.second) << "record " << i;
  }
}

TEST_F(TuneFirstBatchOrderE2E, GivenATaskAddedToALogTheResumedRunShouldGiveItsFirstBatchToTheNewTask) {
  // Two GEMMs tuned one batch each, then the same command with a third, lighter one and a budget of one more batch:
  // that batch is the new task's first. Counting only the resumed run's trials, it went to the heaviest task again.
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--batch", "4", "--tuner", "random", "--db",
                                  fleet_.db(), "--number", "1", "--repeat", "1", "--task", "gemm:48,48,48", "--task",
                                  "gemm:32,32,32"};
  auto first = cmd;
  first.insert(first.end(), {"--trials", "8"});
  RunResult r = fleet_.Cli(first);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto resumed = cmd;
  resumed.insert(resumed.end(), {"--task", "gemm:16,16,16", "--trials", "12"});
  r = fleet_.Cli(resumed);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("resume: 8 trials already recorded, 4 to go"), std::string::npos) << r.output;
  // Each resumed unit says so (the first 8 of them; a model of 81 units printed 81 lines); the new task does not.
  EXPECT_NE(r.output.find("gemm:48,48,48:float32 [gemm.buffer]: resuming after 4 recorded trials"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("gemm:32,32,32:float32 [gemm.buffer]: resuming after 4 recorded trials"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("gemm:16,16,16:float32 [gemm.buffer]: resuming"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("more units resume from the log"), std::string::npos) << r.output;

  const auto rows = fleet_.Sql("SELECT t.spec, count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                               "GROUP BY t.spec ORDER BY t.spec");
  std::map<std::string, std::string> per_task;
  for (const auto& row : rows) per_task[row[0]] = row[1];
  const std::map<std::string, std::string> expected = {
      {"gemm:16,16,16:float32", "4"}, {"gemm:32,32,32:float32", "4"}, {"gemm:48,48,48:float32", "4"}};
  EXPECT_EQ(per_task, expected) << r.output;
}

}  // namespace
}  // namespace tunefleet::testing
