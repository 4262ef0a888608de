#include "tuner/task_tuner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "search-spaces/template.h"
#include "tuner/tuning_log_testing.h"

namespace tunefleet {
namespace {

// A real tuning log on disk holding a sibling task's records, read back by a TaskTuner as `tune` does.
class TaskTunerTest : public testing::TuningLogTest {
 protected:
  void SetUp() override {
    testing::TuningLogTest::SetUp();
    gemm_ = FindTemplate("gemm.buffer");
    ASSERT_NE(gemm_, nullptr);
    limits_ = DeviceLimits::From(device_info_);
    opts_.device_id = device_;
    opts_.session_id = session_;
  }

  // Records a sibling task (gemm 32x16x16) as three configs: one measured in three passes, one the device
  // rejected twice (INVALID_CONFIG), one measured once: 6 records.
  void RecordSibling() {
    const Task sibling = Task::Parse("gemm:32,16,16:float32").value();
    const Result<Space> space = gemm_->MakeSpace(sibling, limits_);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    const int64_t tmpl = log_->UpsertTemplate(gemm_->name(), gemm_->version()).value();
    const int64_t sib = log_->UpsertTask(sibling.ToSpec(), "gemm", "{}", gemm_->Flops(sibling)).value();
    const std::vector<uint64_t> valid = testing::FirstValid(*space, 3);
    ASSERT_EQ(valid.size(), 3u);
    for (double c : {1e-3, 0.4e-3, 1.2e-3}) AddRecord(*space, sib, tmpl, valid[0], 0, c);
    AddRecord(*space, sib, tmpl, valid[1], 1, 0);
    AddRecord(*space, sib, tmpl, valid[1], 1, 0);
    AddRecord(*space, sib, tmpl, valid[2], 0, 2e-3);
  }

  std::unique_ptr<TaskTuner> Create() {
    Result<std::unique_ptr<TaskTuner>> t =
        TaskTuner::Create(Task::Parse("gemm:16,16,16:float32").value(), *gemm_, limits_, opts_, log_.get());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  const Template* gemm_ = nullptr;
  DeviceLimits limits_;
  TaskTunerOptions opts_;
};

TEST_F(TaskTunerTest, GivenASiblingRecordedInSeveralPasses_WarmStartShouldUseOneRowPerConfigFailuresIncluded) {
  RecordSibling();
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->Propose(4).ok());
  // 6 records, 3 configs: the failed one enters as the worst, each config once, as `simulate --transfer-from`.
  EXPECT_NE(t->strategy_status().find("warm start 3 history rows"), std::string::npos) << t->strategy_status();
  EXPECT_EQ(t->resumed(), 0u);

  opts_.transfer = false;
  std::unique_ptr<TaskTuner> cold = Create();
  ASSERT_NE(cold, nullptr);
  ASSERT_TRUE(cold->Propose(4).ok());
  EXPECT_EQ(cold->strategy_status().find("warm start"), std::string::npos) << cold->strategy_status();
}

// A model's run creates every unit before it measures any: a unit whose template gets results from other tasks
// before its own first batch (earlier layers of the same run) must learn from them.
TEST_F(TaskTunerTest, GivenSiblingRecordsArrivingAfterCreate_TheFirstBatchShouldBeWarmStartedFromThem) {
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  RecordSibling();
  ASSERT_TRUE(t->Propose(4).ok());
  EXPECT_NE(t->strategy_status().find("warm start 3 history rows"), std::string::npos) << t->strategy_status();
}

// A unit keeps learning from the run's other units: before a later plan it reads the log again, when other tasks
// recorded enough more (16 records here), and its model is refitted on all of it; --transfer-once reads it once.
class TaskTunerRefreshTest : public TaskTunerTest {
 protected:
  // Measures batches of 4 (plans of 8) until the second plan has begun; after the first batch, another task of the
  // template records `new_configs` configs (20). Returns the strategy's status after the first batch, the first plan
  // and the third batch (the second plan's first).
  std::vector<std::string> StatusesWhileASiblingGrows(size_t new_configs = 20) {
    RecordSibling();  // 6 records, 3 configs
    opts_.strategy.plan_size = 8;
    opts_.strategy.early_refits = false;
    std::unique_ptr<TaskTuner> t = Create();
    std::vector<std::string> out;
    if (t == nullptr) return out;
    auto measure_batch = [&] {
      Result<std::vector<CandidateJob>> jobs = t->Propose(4);
      ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
      for (const CandidateJob& j : *jobs) {
        proto::MeasureResult r;
        r.set_status(proto::OK);
        r.add_costs(1e-3 * (1 + static_cast<double>(j.index % 7)));
        ASSERT_TRUE(t->Record(j.index, r).ok());
      }
      out.push_back(t->strategy_status());
    };
    measure_batch();
    const Task other = Task::Parse("gemm:16,32,16:float32").value();
    const Space space = gemm_->MakeSpace(other, limits_).value();
    const int64_t tmpl = log_->UpsertTemplate(gemm_->name(), gemm_->version()).value();
    const int64_t id = log_->UpsertTask(other.ToSpec(), "gemm", "{}", gemm_->Flops(other)).value();
    const std::vector<uint64_t> valid = testing::FirstValid(space, new_configs);
    EXPECT_EQ(valid.size(), new_configs);
    for (size_t i = 0; i < valid.size(); ++i) AddRecord(space, id, tmpl, valid[i], 0, 1e-3 * (1 + i % 5));
    measure_batch();
    measure_batch();
    return out;
  }
};

TEST_F(TaskTunerRefreshTest, GivenSiblingRecordsArrivingDuringTheFirstPlan_TheNextPlanShouldLearnFromThemAll) {
  const std::vector<std::string> status = StatusesWhileASiblingGrows();
  ASSERT_EQ(status.size(), 3u);
  EXPECT_NE(status[0].find("warm start 3 history rows"), std::string::npos) << status[0];
  EXPECT_NE(status[1].find("warm start 3 history rows"), std::string::npos) << "within a plan: " << status[1];
  EXPECT_NE(status[2].find("warm start 23 history rows"), std::string::npos) << status[2];
}

// Fewer new records than 16 (or a tenth of what was read) are not worth a refit's read: the log's count of the
// template's other records says so before any is read.
TEST_F(TaskTunerRefreshTest, GivenTooFewNewSiblingRecords_TheNextPlanShouldKeepTheHistoryItHas) {
  const std::vector<std::string> status = StatusesWhileASiblingGrows(/*new_configs=*/9);
  ASSERT_EQ(status.size(), 3u);
  EXPECT_NE(status[2].find("warm start 3 history rows"), std::string::npos) << status[2];
}

TEST_F(TaskTunerRefreshTest, GivenTransferOnce_TheHistoryShouldBeReadAtTheFirstBatchOnly) {
  opts_.transfer_refresh = false;
  const std::vector<std::string> status = StatusesWhileASiblingGrows();
  ASSERT_EQ(status.size(), 3u);
  EXPECT_NE(status[2].find("warm start 3 history rows"), std::string::npos) << status[2];
}

// Resume: a record's config is what was measured. A stored index that disagrees with it (a log edited by hand) must
// not make the tuner report a config that never ran, and one beyond the space is left out.
TEST_F(TaskTunerTest, GivenRecordsWhoseIndexDisagreesWithTheirConfig_ResumeShouldGoByTheConfig) {
  const Task task = Task::Parse("gemm:16,16,16:float32").value();
  const Space space = gemm_->MakeSpace(task, limits_).value();
  const int64_t tmpl = log_->UpsertTemplate(gemm_->name(), gemm_->version()).value();
  const int64_t id = log_->UpsertTask(task.ToSpec(), "gemm", "{}", gemm_->Flops(task)).value();
  const std::vector<uint64_t> valid = testing::FirstValid(space, 2);
  ASSERT_EQ(valid.size(), 2u);
  AddRecord(space, id, tmpl, valid[0], 0, 1e-3);
  RecordRow r = log_->Records(id, tmpl, 0).value().at(0);
  r.config_index = valid[1];  // the index says valid[1], the config valid[0]
  r.mean_cost = 0.5e-3;
  ASSERT_TRUE(log_->AddRecord(r).ok());
  r.config = "not json";
  r.config_index = space.RawSize() + 5;  // nothing to go by: left out
  ASSERT_TRUE(log_->AddRecord(r).ok());

  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->resumed(), 1u);  // both records measured valid[0]: one trial and a repeat of it
  EXPECT_EQ(t->best_index(), valid[0]);
  EXPECT_EQ(t->best_cost(), 0.5e-3);  // of two results, the faster
}

proto::MeasureResult Ok(double cost) {
  proto::MeasureResult r;
  r.set_status(proto::OK);
  r.set_mean_cost(cost);
  r.add_costs(cost);
  return r;
}

// tune --confirm: a config's lucky first run (0.5 ms) is measured twice more (2 and 3 ms); its median, 2 ms, no longer
// beats the steady 1 ms config, in this run, in a resumed one and in the log's Best. Repeats are no trials.
TEST_F(TaskTunerTest, GivenRepeatsOfTheBestConfig_TheBestShouldBeTheLowestMedian) {
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  const std::vector<uint64_t> valid = testing::FirstValid(t->space(), 3);
  ASSERT_EQ(valid.size(), 3u);
  ASSERT_TRUE(t->Record(valid[0], Ok(1e-3)).ok());
  EXPECT_TRUE(t->ProposeRepeats(4, 2).value().empty()) << "one config that ran: nothing to rank again";
  ASSERT_TRUE(t->Record(valid[1], Ok(0.5e-3)).ok());
  ASSERT_TRUE(t->Record(valid[2], Ok(4e-3)).ok());
  EXPECT_EQ(t->best_index(), valid[1]);
  EXPECT_EQ(t->best_results(), 1u);

  std::vector<CandidateJob> again = t->ProposeRepeats(1, 2).value();
  ASSERT_EQ(again.size(), 2u);
  for (const CandidateJob& j : again) {
    EXPECT_EQ(j.index, valid[1]);
    EXPECT_TRUE(j.program.has_timing());
  }
  ASSERT_TRUE(t->Record(valid[1], Ok(2e-3), 0, /*repeat=*/true).ok());
  ASSERT_TRUE(t->Record(valid[1], Ok(3e-3), 0, /*repeat=*/true).ok());
  EXPECT_EQ(t->trials(), 3u);
  EXPECT_EQ(t->best_index(), valid[0]);
  EXPECT_EQ(t->best_cost(), 1e-3);
  EXPECT_EQ(t->trials_since_best(), 2u);  // counted from trial 1, which measured valid[0]
  // A config with one result is now the best: what --confirm's next round is for. Of the best two, valid[0] (one
  // result) is measured twice more and valid[1] (three) not.
  EXPECT_EQ(t->best_results(), 1u);
  again = t->ProposeRepeats(2, 2).value();
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].index, valid[0]);
  EXPECT_EQ(again[1].index, valid[0]);

  std::unique_ptr<TaskTuner> resumed = Create();
  ASSERT_NE(resumed, nullptr);
  EXPECT_EQ(resumed->resumed(), 3u);
  EXPECT_EQ(resumed->trials(), 3u);
  EXPECT_EQ(resumed->best_index(), valid[0]);
  EXPECT_EQ(resumed->best_results(), 1u);
  EXPECT_EQ(resumed->best_cost(), 1e-3);
  EXPECT_EQ(resumed->trials_since_best(), 2u);
  const std::vector<BestRow> best = log_->Best().value();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].record.config_index, valid[0]);

  ASSERT_TRUE(t->Record(valid[0], Ok(1.1e-3), 0, /*repeat=*/true).ok());
  ASSERT_TRUE(t->Record(valid[0], Ok(0.9e-3), 0, /*repeat=*/true).ok());
  EXPECT_EQ(t->best_index(), valid[0]);
  EXPECT_EQ(t->best_results(), 3u);
  EXPECT_TRUE(t->ProposeRepeats(2, 2).value().empty());
}

// Equal costs: the run's best and the log's Best name the same config, the one whose (median) result came first,
// whatever the configs' indices.
TEST_F(TaskTunerTest, GivenConfigsOfEqualCost_TheRunAndTheLogShouldNameTheSameBest) {
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  const std::vector<uint64_t> valid = testing::FirstValid(t->space(), 3);
  ASSERT_EQ(valid.size(), 3u);
  ASSERT_TRUE(t->Record(valid[2], Ok(1e-3)).ok());
  ASSERT_TRUE(t->Record(valid[1], Ok(1e-3)).ok());
  ASSERT_TRUE(t->Record(valid[0], Ok(0.5e-3)).ok());
  EXPECT_EQ(t->best_index(), valid[0]);
  ASSERT_TRUE(t->Record(valid[0], Ok(3e-3), 0, /*repeat=*/true).ok());
  ASSERT_TRUE(t->Record(valid[0], Ok(3e-3), 0, /*repeat=*/true).ok());
  EXPECT_EQ(t->best_index(), valid[2]);  // measured before valid[1], at the same cost
  EXPECT_EQ(t->best_cost(), 1e-3);
  std::unique_ptr<TaskTuner> resumed = Create();
  ASSERT_NE(resumed, nullptr);
  EXPECT_EQ(resumed->best_index(), valid[2]);
  const std::vector<BestRow> best = log_->Best().value();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].record.config_index, valid[2]);
}

// A lease of two device models: each config ranks within one model, as `best` gives one row per model, so the
// other model's slower repeats do not move this model's lucky-looking result, and the run's best is the fastest row.
TEST_F(TaskTunerTest, GivenResultsOfTwoDeviceModels_EachConfigShouldRankWithinItsModel) {
  proto::DeviceInfo other_info = device_info_;
  other_info.set_name("other-gpu");
  other_info.set_fingerprint("fp-other");
  const int64_t other = log_->UpsertDevice(other_info).value();
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  const std::vector<uint64_t> valid = testing::FirstValid(t->space(), 2);
  ASSERT_EQ(valid.size(), 2u);
  ASSERT_TRUE(t->Record(valid[0], Ok(0.5e-3)).ok());
  ASSERT_TRUE(t->Record(valid[1], Ok(1e-3)).ok());
  ASSERT_TRUE(t->Record(valid[0], Ok(3e-3), other, /*repeat=*/true).ok());
  ASSERT_TRUE(t->Record(valid[0], Ok(3e-3), other, /*repeat=*/true).ok());
  EXPECT_EQ(t->best_index(), valid[0]);
  EXPECT_EQ(t->best_cost(), 0.5e-3);
  const std::vector<BestRow> best = log_->Best().value();
  ASSERT_EQ(best.size(), 2u);
  double fastest = 0;
  for (const BestRow& row : best) {
    EXPECT_EQ(row.record.config_index, valid[0]);
    if (fastest == 0 || row.record.mean_cost < fastest) fastest = row.record.mean_cost;
  }
  EXPECT_EQ(fastest, t->best_cost());
  // A first result on the other model that beats every group is the run's best at once.
  ASSERT_TRUE(t->Record(valid[1], Ok(0.2e-3), other, /*repeat=*/true).ok());
  EXPECT_EQ(t->best_index(), valid[1]);
  EXPECT_EQ(t->best_cost(), 0.2e-3);
  // The two best configs: valid[1] (at its group on the other model) and valid[0] (on this one); valid[1]'s group on
  // this model is the same config and not proposed again. Each is topped up to three results in its best group.
  const std::vector<CandidateJob> again = t->ProposeRepeats(2, 2).value();
  ASSERT_EQ(again.size(), 4u);
  EXPECT_EQ(again[0].index, valid[1]);
  EXPECT_EQ(again[1].index, valid[1]);
  EXPECT_EQ(again[2].index, valid[0]);
  EXPECT_EQ(again[3].index, valid[0]);
}

// tune --confirm measures the fallback again when it is among the best: its speed-up in the summary is then taken
// from its median too, not from its first result, in this run and in a resumed one.
TEST_F(TaskTunerTest, GivenRepeatsOfTheFallbackConfig_ItsCostShouldBeTheirLowerMedian) {
  std::unique_ptr<TaskTuner> t = Create();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->fallback_cost(), 0);
  const std::vector<CandidateJob> fallback = t->ProposeFallback().value();
  ASSERT_EQ(fallback.size(), 1u);
  const uint64_t f = fallback[0].index;
  ASSERT_TRUE(t->Record(f, Ok(0.5e-3)).ok());
  EXPECT_EQ(t->fallback_cost(), 0.5e-3);
  ASSERT_TRUE(t->Record(f, Ok(3e-3), 0, /*repeat=*/true).ok());
  ASSERT_TRUE(t->Record(f, Ok(2e-3), 0, /*repeat=*/true).ok());
  EXPECT_EQ(t->fallback_cost(), 2e-3);
  std::unique_ptr<TaskTuner> resumed = Create();
  ASSERT_NE(resumed, nullptr);
  EXPECT_TRUE(resumed->fallback_recorded());
  EXPECT_EQ(resumed->fallback_cost(), 2e-3);
}

// Two models sharing a task: the log's count is both models' occurrences (it kept the first model's), and a
// resumed run of one of them does not count it twice.
TEST_F(TaskTunerTest, GivenTwoModelsSharingATask_TheLogsCountShouldBeTheSumOfTheirs) {
  auto stored = [&]() {
    const std::vector<TaskRow> tasks = log_->Tasks().value();
    EXPECT_EQ(tasks.size(), 1u);
    return tasks.empty() ? nlohmann::json() : nlohmann::json::parse(tasks[0].workload);
  };
  opts_.model = "resnet18.onnx";
  opts_.count = 4;
  ASSERT_NE(Create(), nullptr);
  EXPECT_EQ(stored()["count"], 4);
  opts_.model = "mobilenet_v2.onnx";
  opts_.count = 2;
  ASSERT_NE(Create(), nullptr);
  EXPECT_EQ(stored()["count"], 6);
  opts_.model = "resnet18.onnx";  // resumed
  opts_.count = 4;
  ASSERT_NE(Create(), nullptr);
  EXPECT_EQ(stored()["count"], 6);
  EXPECT_EQ(stored()["models"], (nlohmann::json{{"mobilenet_v2.onnx", 2}, {"resnet18.onnx", 4}}));
  opts_.model = "";  // a --task run names no model and changes nothing
  opts_.count = 1;
  ASSERT_NE(Create(), nullptr);
  EXPECT_EQ(stored()["count"], 6);
}

}  // namespace
}  // namespace tunefleet
