#include "tuner/best_in_space.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir_testing.h"
#include "tuner/export_kernel_pack.h"
#include "tuner/export_testing.h"

namespace tunefleet {
namespace {

constexpr const char* kSpec = "gemm:64,64,64:float32";

// A log of gemm.buffer records on PoclLikeDevice, written the way a hand-edited log would be: config JSON as given.
class BestInSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::move(TuningLog::Open(dir_.File("log.db"))).value();
    tmpl_ = FindTemplate("gemm.buffer");
    ASSERT_NE(tmpl_, nullptr);
    task_ = Task::Parse(kSpec).value();
    space_ = tmpl_->MakeSpace(task_, DeviceLimits::From(PoclLikeDevice())).value();
  }

  int64_t Add(const nlohmann::json& config, double cost, const std::string& tmpl_name = "gemm.buffer") {
    RecordRow r;
    r.device_id = log_->UpsertDevice(PoclLikeDevice()).value();
    r.task_id = log_->UpsertTask(task_.ToSpec(), task_.op, "{}", tmpl_->Flops(task_)).value();
    r.template_id = log_->UpsertTemplate(tmpl_name, tmpl_->version()).value();
    r.config = config.dump();
    r.costs = {cost};
    r.mean_cost = cost;
    r.timestamp = 1;
    return log_->AddRecord(r).value();
  }

  nlohmann::json Fallback() const { return space_.ToJson(tmpl_->Fallback(task_, space_)); }

  // A config of the space's knob values that breaks one of its rules on PoclLikeDevice.
  nlohmann::json Breaking() const {
    for (uint64_t i = 0; i < space_.RawSize(); ++i)
      if (!space_.ValidIndex(i)) return space_.ToJson(space_.FromIndex(i));
    ADD_FAILURE() << "every config of the space is valid";
    return {};
  }

  TempDir dir_;
  std::unique_ptr<TuningLog> log_;
  const Template* tmpl_ = nullptr;
  Task task_;
  Space space_;
  std::ostringstream notes_;
};

TEST_F(BestInSpaceTest, GivenFasterConfigsOutsideTheSpace_WeShouldTakeTheFastestOfTheSpaceAndSayWhy) {
  nlohmann::json unknown_value = Fallback();
  unknown_value["MWG"] = 12;  // no choice of the knob
  Add(unknown_value, 1e-4);
  Add(Breaking(), 2e-4);
  const int64_t valid = Add(Fallback(), 3e-4);
  Add(Fallback(), 5e-4);

  ASSERT_EQ(log_->Best().value().at(0).record.mean_cost, 1e-4);  // what the log alone calls best
  auto best = BestInSpace(*log_, {}, notes_);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].record.id, valid);
  EXPECT_EQ((*best)[0].task, kSpec);
  EXPECT_EQ(notes_.str(), std::string(kSpec) + " (gemm.buffer) on pthread-cpu [fp-cpu]: 2 faster config(s) passed "
                          "over, not in the template's space (record 1: knob 'MWG' has no choice 12)\n");
}

TEST_F(BestInSpaceTest, GivenOnlyConfigsOutsideTheSpace_WeShouldLeaveTheWorkloadOutAndSaySo) {
  Add(Breaking(), 2e-4);
  nlohmann::json unknown_value = Fallback();
  unknown_value["MWG"] = 12;  // no choice of the knob
  Add(unknown_value, 3e-4);
  Add(Breaking(), 4e-4);  // the first config again: one config of two records
  auto best = BestInSpace(*log_, {}, notes_);
  ASSERT_TRUE(best.ok());
  EXPECT_TRUE(best->empty());
  EXPECT_NE(notes_.str().find(": left out: none of its 2 successful config(s) is in the template's space "
                              "(record 1: "),
            std::string::npos)
      << notes_.str();
}

TEST_F(BestInSpaceTest, GivenConfigsOfTheSpace_WeShouldReturnTheLogsBestWithoutNotes) {
  Add(Fallback(), 5e-4);
  const int64_t fast = Add(Fallback(), 3e-4);
  auto best = BestInSpace(*log_, {}, notes_);
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].record.id, fast);
  EXPECT_EQ(notes_.str(), "");
}

TEST_F(BestInSpaceTest, GivenATask_WeShouldReturnAndJudgeThatTasksRowsOnly) {
  Add(Fallback(), 3e-4);
  Add(Breaking(), 1e-4);
  auto none = BestInSpace(*log_, {}, notes_, "gemm:8,8,8:float32");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(notes_.str(), "");  // the other task's record outside its space is not this task's business
  auto mine = BestInSpace(*log_, {}, notes_, kSpec);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_DOUBLE_EQ((*mine)[0].record.mean_cost, 3e-4);
}

TEST_F(BestInSpaceTest, GivenATemplateThisBuildLacks_WeShouldKeepItsBestUnjudged) {
  const int64_t id = Add({{"anything", 1}}, 2e-4, "not.built.here");
  auto best = BestInSpace(*log_, {}, notes_);
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].record.id, id);
  EXPECT_EQ(notes_.str(), "");
}

TEST_F(BestInSpaceTest, GivenAFasterConfigOutsideTheSpace_TheKernelPackShouldHoldTheNextBest) {
  Add(Breaking(), 1e-4);
  Add(Fallback(), 3e-4);
  auto packs = BuildKernelPacks(*log_, {}, notes_);
  ASSERT_TRUE(packs.ok()) << packs.status().ToString();
  ASSERT_EQ(packs->size(), 1u);
  ASSERT_EQ((*packs)[0].pack["kernels"].size(), 1u);
  EXPECT_DOUBLE_EQ((*packs)[0].pack["kernels"][0]["latency_ms"].get<double>(), 0.3);
}

}  // namespace
}  // namespace tunefleet
