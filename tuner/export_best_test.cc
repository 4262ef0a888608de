#include "tuner/export_best.h"
#include "tuner/milliseconds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace tunefleet {
namespace {

BestRow Row(const std::string& task, double mean_cost, int64_t id) {
  BestRow b;
  b.task = task;
  b.template_name = "gemm.buffer";
  b.template_version = 2;
  b.device_name = "Adreno 740";
  b.device_fingerprint = "fp";
  b.flops = 2e9;
  b.record.id = id;
  b.record.mean_cost = mean_cost;
  b.record.config = R"({"MWG":32})";
  return b;
}

TEST(ExportBestTest, GivenBestRows_TheTableShouldShowMillisecondsGflopsAndConfig) {
  std::string table = FormatBestTable({Row("gemm:1024,1024,1024:float32", 0.004, 17)});
  EXPECT_NE(table.find("task"), std::string::npos);
  EXPECT_NE(table.find("gemm:1024,1024,1024:float32"), std::string::npos);
  EXPECT_NE(table.find("gemm.buffer@2"), std::string::npos);
  EXPECT_NE(table.find("4.0000"), std::string::npos) << table;  // ms
  EXPECT_NE(table.find("500.00"), std::string::npos) << table;  // 2e9 flops / 4 ms
  EXPECT_NE(table.find(R"({"MWG":32})"), std::string::npos);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 2);
}

// A kernel of microseconds kept 4 decimals of milliseconds: 1.77 us showed as 0.0018, and below 0.05 us as 0.0000.
TEST(ExportBestTest, GivenAKernelOfMicroseconds_TheTableShouldKeepFourSignificantDigits) {
  std::string table = FormatBestTable({Row("gemm:8,8,8:float32", 1.7666e-6, 3), Row("gemm:4,4,4:float32", 4e-8, 4)});
  EXPECT_NE(table.find("0.001767 "), std::string::npos) << table;
  EXPECT_NE(table.find("0.00004000 "), std::string::npos) << table;
  EXPECT_EQ(table.find(" 0.0000 "), std::string::npos) << table;
}

// Two device models of one name: each row names its fingerprint (the table showed two rows alike but for the time).
TEST(ExportBestTest, GivenTwoDevicesOfOneName_TheTableShouldTellThemApartByFingerprint) {
  BestRow other = Row("gemm:64,64,64:float32", 0.002, 4);
  other.device_fingerprint = "2b2b";
  std::string table = FormatBestTable({Row("gemm:64,64,64:float32", 0.004, 3), other});
  EXPECT_NE(table.find("Adreno 740 (fp)"), std::string::npos) << table;
  EXPECT_NE(table.find("Adreno 740 (2b2b)"), std::string::npos) << table;
  std::string alone = FormatBestTable({Row("gemm:64,64,64:float32", 0.004, 3)});
  EXPECT_EQ(alone.find("(fp)"), std::string::npos) << alone;
  // A log whose other device of that name has no row here (best --task) still names the fingerprint.
  std::string one_of_two = FormatBestTable({Row("gemm:64,64,64:float32", 0.004, 3)}, {"Adreno 740"});
  EXPECT_NE(one_of_two.find("Adreno 740 (fp)"), std::string::npos) << one_of_two;
}

TEST(ExportBestTest, GivenTimesAtTheEdgeOfADecade_MillisecondsShouldKeepFourSignificantDigitsAfterRounding) {
  EXPECT_EQ(FormatMilliseconds(0.09999996), "0.1000");
  EXPECT_EQ(FormatMilliseconds(0.0099996), "0.01000");
  EXPECT_EQ(FormatMilliseconds(0.0017666), "0.001767");
  EXPECT_EQ(FormatMilliseconds(2.5), "2.5000");
  EXPECT_EQ(FormatMilliseconds(0), "0.0000");
  EXPECT_EQ(FormatMilliseconds(1e-9), "0.000000001000");
}

TEST(ExportBestTest, GivenTextWithControlCharactersTheTableShouldShowThemEscapedNotForgeARow) {
  BestRow row = Row("gemm:64,64,64:float32", 0.004, 3);
  row.device_name = "GPU\x1b[2J\nfake row";
  std::string table = FormatBestTable({row});
  EXPECT_NE(table.find("GPU\\x1b[2J\\x0afake row"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 2);
}

TEST(ExportBestTest, GivenFlopsOrACostThatIsNoNumber_GflopsShouldBeZeroNotInfiniteOrNegative) {
  BestRow row = Row("gemm:64,64,64:float32", 0.004, 3);
  row.flops = -1e30;
  EXPECT_EQ(row.gflops(), 0);
  row.flops = std::numeric_limits<double>::infinity();
  EXPECT_EQ(row.gflops(), 0);
  row.flops = 2e9;
  row.record.mean_cost = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(row.gflops(), 0);
}

TEST(ExportBestTest, GivenBestRows_TheJsonShouldCarryEveryColumn) {
  auto j = BestToJson({Row("gemm:8,8,8:float32", 0.001, 3)});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["record_id"], 3);
  EXPECT_DOUBLE_EQ(j[0]["best_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j[0]["gflops"].get<double>(), 2.0 * 1e9 / 0.001 / 1e9);
  EXPECT_EQ(j[0]["config"]["MWG"], 32);
  EXPECT_EQ(j[0]["template_version"], 2);
}

}  // namespace
}  // namespace tunefleet
