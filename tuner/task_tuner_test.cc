#include "tuner/task_tuner.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(t->resumed(), 2u);
  EXPECT_EQ(t->best_index(), valid[0]);
}

}  // namespace
}  // namespace tunefleet
