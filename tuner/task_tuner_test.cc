#include "tuner/task_tuner.h"

#include <gtest/gtest.h>

#include "search-spaces/template.h"
#include "tuner/tuning_log_testing.h"

namespace tunefleet {
namespace {

// A real tuning log on disk holding a sibling task's records, read back by TaskTuner::Create as `tune` does.
using TaskTunerTest = testing::TuningLogTest;

TEST_F(TaskTunerTest, GivenASiblingRecordedInSeveralPasses_WarmStartShouldUseOneRowPerConfigFailuresIncluded) {
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  const DeviceLimits limits = DeviceLimits::From(device_info_);
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
  for (double c : {1e-3, 0.4e-3, 1.2e-3}) AddRecord(*space, sib, tmpl, valid[0], 0, c);
  AddRecord(*space, sib, tmpl, valid[1], 1, 0);
  AddRecord(*space, sib, tmpl, valid[1], 1, 0);
  AddRecord(*space, sib, tmpl, valid[2], 0, 2e-3);

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
