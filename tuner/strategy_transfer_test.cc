#include "tuner/strategy_transfer.h"

#include <gtest/gtest.h>

#include <vector>

namespace tunefleet {
namespace {

HistoryRecord Rec(const std::string& device, const std::string& config, bool ok, double cost) {
  return {"conv2d:1,8,8,8,8,3,3,1,1", device, config, ok, cost, 1e6};
}

TEST(CollapseHistoryTest, GivenConfigsRecordedInSeveralPasses_HistoryShouldHoldOneRowEachAtTheLowerMedian) {
  const std::vector<HistoryRecord> records = {
      Rec("dev-a", R"({"t":[1,8]})", true, 3e-5),  Rec("dev-a", R"({"t":[2,4]})", false, 0),
      Rec("dev-a", R"({"t":[4,2]})", false, 0),    Rec("dev-a", R"({"t":[1,8]})", true, 1e-5),
      Rec("dev-a", R"({"t":[2,4]})", true, 4e-5),  Rec("dev-b", R"({"t":[1,8]})", true, 9e-5),
      Rec("dev-a", R"({"t":[1,8]})", true, 2e-5),  Rec("dev-a", R"({"t":[4,2]})", false, 0),
      Rec("dev-a", R"({"t":[2,4]})", true, 6e-5),  Rec("dev-b", R"({"t":[2,4]})", true, 8e-5),
  };
  const std::vector<HistoryRecord> rows = CollapseHistory(records);
  ASSERT_EQ(rows.size(), 5u);
  // In the order of first records; the same config on another device is a row of its own.
  EXPECT_EQ(rows[0].config_json, R"({"t":[1,8]})");
  EXPECT_EQ(rows[0].device_fingerprint, "dev-a");
  EXPECT_TRUE(rows[0].ok);
  EXPECT_DOUBLE_EQ(rows[0].cost, 2e-5);  // 3, 1, 2 -> the median
  EXPECT_EQ(rows[1].config_json, R"({"t":[2,4]})");
  EXPECT_TRUE(rows[1].ok);                // failed once, ran twice: it ran
  EXPECT_DOUBLE_EQ(rows[1].cost, 4e-5);  // 4, 6 -> the faster one
  EXPECT_EQ(rows[2].config_json, R"({"t":[4,2]})");
  EXPECT_FALSE(rows[2].ok);  // never ran: one failed row
  EXPECT_EQ(rows[3].device_fingerprint, "dev-b");
  EXPECT_DOUBLE_EQ(rows[3].cost, 9e-5);
  EXPECT_EQ(rows[3].task_spec, "conv2d:1,8,8,8,8,3,3,1,1");
  EXPECT_DOUBLE_EQ(rows[3].flops, 1e6);
}

TEST(CollapseHistoryTest, GivenATaskAndDeviceWithASingleConfigItsRowShouldBeLeftOut) {
  // dev-b measured one config (twice): as its own best, it would teach the model that it is the best config.
  const std::vector<HistoryRecord> rows =
      CollapseHistory({Rec("dev-a", R"({"t":[1,8]})", true, 3e-5), Rec("dev-b", R"({"t":[1,8]})", true, 9e-5),
                       Rec("dev-a", R"({"t":[2,4]})", false, 0), Rec("dev-b", R"({"t":[1,8]})", true, 8e-5)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].device_fingerprint, "dev-a");
  EXPECT_EQ(rows[1].device_fingerprint, "dev-a");
  EXPECT_TRUE(CollapseHistory({Rec("dev-a", R"({"t":[1,8]})", true, 3e-5)}).empty());
}

// The warm start's collapser, fed one record at a time, gives the same rows and counts the records behind them:
// dev-b's two records of its single config are left out with it.
TEST(CollapseHistoryTest, GivenRecordsOneAtATime_TheCollapserShouldGiveTheSameRowsAndCountTheRecordsBehindThem) {
  const std::vector<HistoryRecord> records = {
      Rec("dev-a", R"({"t":[1,8]})", true, 3e-5), Rec("dev-b", R"({"t":[1,8]})", true, 9e-5),
      Rec("dev-a", R"({"t":[2,4]})", false, 0),   Rec("dev-b", R"({"t":[1,8]})", true, 8e-5),
      Rec("dev-a", R"({"t":[1,8]})", true, 1e-5), Rec("dev-a", R"({"t":[4,2]})", true, 5e-5),
  };
  HistoryCollapser c;
  for (const HistoryRecord& r : records) c.Add(r.task_spec, r.device_fingerprint, r.config_json, r.ok, r.cost, r.flops);
  size_t behind = 0;
  const std::vector<HistoryRecord> rows = c.Rows(&behind);
  EXPECT_EQ(behind, 4u);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].config_json, R"({"t":[1,8]})");
  EXPECT_DOUBLE_EQ(rows[0].cost, 1e-5);  // 3, 1: the lower median
  EXPECT_FALSE(rows[1].ok);
  EXPECT_EQ(rows[2].config_json, R"({"t":[4,2]})");
  const std::vector<HistoryRecord> all = CollapseHistory(records);
  ASSERT_EQ(all.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(all[i].config_json, rows[i].config_json);
  HistoryCollapser moved = std::move(c);  // its rows point into its maps: they move with them
  EXPECT_EQ(moved.Rows().size(), 3u);
  EXPECT_EQ(moved.Rows()[0].task_spec, rows[0].task_spec);
}

}  // namespace
}  // namespace tunefleet
