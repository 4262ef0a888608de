#include "tuner/task_tuner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// A real tuning log on disk holding a sibling task's records, read back by TaskTuner::Create as `tune` does.
class TaskTunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tf_task_tuner_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Result<std::unique_ptr<TuningLog>> log = TuningLog::Open((dir_ / "log.db").string());
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
    info_.set_name("pocl-cpu");
    info_.set_fingerprint("fp-pocl");
    info_.set_compute_units(2);
    info_.set_max_work_group_size(256);
    for (int i = 0; i < 3; ++i) info_.add_max_work_item_sizes(256);
    info_.set_local_mem_bytes(32 * 1024);
    device_ = log_->UpsertDevice(info_).value();
    session_ = log_->BeginSession("{}").value();
  }
  void TearDown() override {
    log_.reset();
    fs::remove_all(dir_);
  }

  void Record(const Space& s, int64_t task, int64_t tmpl, uint64_t index, int status, double cost) {
    RecordRow r;
    r.session_id = session_;
    r.task_id = task;
    r.template_id = tmpl;
    r.device_id = device_;
    r.config_index = index;
    r.config = s.ToJson(s.FromIndex(index)).dump();
    r.status = status;
    r.mean_cost = cost;
    if (status == 0) r.costs = {cost};
    ASSERT_TRUE(log_->AddRecord(r).ok());
  }

  fs::path dir_;
  proto::DeviceInfo info_;
  std::unique_ptr<TuningLog> log_;
  int64_t device_ = 0, session_ = 0;
};

TEST_F(TaskTunerTest, GivenASiblingRecordedInSeveralPasses_WarmStartShouldUseOneRowPerConfigFailuresIncluded) {
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  const DeviceLimits limits = DeviceLimits::From(info_);
  const Task sibling = Task::Parse("gemm:32,16,16:float32").value();
  const Result<Space> space = gemm->MakeSpace(sibling, limits);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  const int64_t tmpl = log_->UpsertTemplate(gemm->name(), gemm->version()).value();
  const int64_t sib = log_->UpsertTask(sibling.ToSpec(), "gemm", "{}", gemm->Flops(sibling)).value();
  std::vector<uint64_t> valid;
  space->ForEachValid([&](uint64_t i) {
    valid.push_back(i);
    return valid.size() < 3;
  });
  ASSERT_EQ(valid.size(), 3u);
  // Three passes of one config, a config the device rejected twice (INVALID_CONFIG), one measured once.
  for (double c : {1e-3, 0.4e-3, 1.2e-3}) Record(*space, sib, tmpl, valid[0], 0, c);
  Record(*space, sib, tmpl, valid[1], 1, 0);
  Record(*space, sib, tmpl, valid[1], 1, 0);
  Record(*space, sib, tmpl, valid[2], 0, 2e-3);

  TaskTunerOptions opts;
  opts.device_id = device_;
  opts.session_id = session_;
  Result<std::unique_ptr<TaskTuner>> t =
      TaskTuner::Create(Task::Parse("gemm:16,16,16:float32").value(), *gemm, limits, opts, log_.get());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // 6 records, 3 configs: the failed one enters as the worst, each config once, as `simulate --transfer-from`.
  EXPECT_NE((*t)->strategy_status().find("warm start 3 history rows"), std::string::npos) << (*t)->strategy_status();
  EXPECT_EQ((*t)->resumed(), 0u);

  opts.transfer = false;
  Result<std::unique_ptr<TaskTuner>> cold =
      TaskTuner::Create(Task::Parse("gemm:16,16,16:float32").value(), *gemm, limits, opts, log_.get());
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  EXPECT_EQ((*cold)->strategy_status().find("warm start"), std::string::npos) << (*cold)->strategy_status();
}

}  // namespace
}  // namespace tunefleet
