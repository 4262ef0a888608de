#include "tuner/tune_summary.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

// A model run cut short: one unit tuned, one whose trials all failed, one the budget never reached.
TuneSummary CutShortRun() {
  TuneSummary s;
  s.tasks.push_back({"conv2d:1,3,224,224,32,3,3,2,1,bias=1:float32", "conv2d_nchw.buffer", 1, 16, 15, 1.25e-3, 17.2,
                     2.5e-3, R"({"tile":[2,8]})"});
  s.tasks.push_back({"dwconv2d:1,32,112,112,3,3,1,1,bias=1:float32", "depthwise_conv2d_nchwc.image2d", 2, 5, 4, 0, 0,
                     0, ""});
  s.tasks.push_back({"gemm:1,1000,1280,transb=1,bias=1:float32", "gemm.buffer", 1, 0, 0, 0, 0, 0, ""});
  return s;
}

TEST(TuneSummaryTest, GivenLongSpecsAndTemplateNamesTheColumnsShouldStayAligned) {
  std::vector<std::string> lines = Lines(FormatTuneSummary(CutShortRun()));
  ASSERT_GE(lines.size(), 4u);
  // Every cell is padded to its column's width, so the header and the three rows are equally long and the
  // "trials" column ends at the same place in each.
  const size_t trials_end = lines[0].find("trials") + std::string("trials").size();
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(lines[i].size(), lines[0].size()) << lines[i];
    EXPECT_NE(lines[i][trials_end - 1], ' ') << lines[i];
    EXPECT_EQ(lines[i][trials_end], ' ') << lines[i];
  }
  EXPECT_NE(lines[2].find("depthwise_conv2d_nchwc.image2d  "), std::string::npos) << lines[2];
}

TEST(TuneSummaryTest, GivenUnitsWithoutASuccessTheTableShouldShowDashesNotZeroGflops) {
  std::vector<std::string> lines = Lines(FormatTuneSummary(CutShortRun()));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[1].find("1.2500"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("17.20"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("2.00x"), std::string::npos) << lines[1];
  for (size_t i : {2u, 3u}) {
    std::vector<std::string> f = Fields(lines[i]);
    ASSERT_EQ(f.size(), 7u) << lines[i];
    EXPECT_EQ(f[4], "-") << lines[i];  // best (ms)
    EXPECT_EQ(f[5], "-") << lines[i];  // GFLOPS
    EXPECT_EQ(f[6], "-") << lines[i];  // speed-up
  }
}

TEST(TuneSummaryTest, GivenUnitsTheBudgetNeverReachedItShouldCountThemInsteadOfCallingThemFailures) {
  const std::string summary = FormatTuneSummary(CutShortRun());
  // Its fallback config was not measured either (no fallback round): "beyond their fallback" would say it was.
  EXPECT_NE(summary.find("1 of 3 task/template units have no trial yet: the budget ended before them"),
            std::string::npos)
      << summary;
  // A run stopped by Ctrl-C did not run out of budget: the same command continues it.
  TuneSummary stopped = CutShortRun();
  stopped.interrupted = true;
  EXPECT_NE(FormatTuneSummary(stopped).find("no trial yet: the run was stopped before them (the same command "
                                            "continues, keeping every record)"),
            std::string::npos)
      << FormatTuneSummary(stopped);
  // The estimate sums the one task with both a tuned and a fallback latency, and says so.
  EXPECT_NE(summary.find("estimated latency of 1 of 3 tasks (sum of count x latency): fallback 2.500 ms -> tuned "
                         "1.250 ms; 2 tasks are not counted"),
            std::string::npos)
      << summary;

  std::vector<std::string> best = Lines(FormatBestLines(CutShortRun()));
  ASSERT_EQ(best.size(), 2u) << FormatBestLines(CutShortRun());
  EXPECT_EQ(best[0],
            R"(best conv2d:1,3,224,224,32,3,3,2,1,bias=1:float32 [conv2d_nchw.buffer]: 17.20 GFLOPS, 1.2500 ms, )"
            R"(config {"tile":[2,8]})");
  EXPECT_EQ(best[1], "best dwconv2d:1,32,112,112,3,3,1,1,bias=1:float32 [depthwise_conv2d_nchwc.image2d]: "
                     "no successful measurement in 5 trials");
}

TEST(TuneSummaryTest, GivenEveryTaskMeasuredTheEstimateShouldSumCountTimesTheBestTemplate) {
  TuneSummary s;
  // Task a: two templates, the faster one (1 ms) counts; its fallback is the lower of the two (3 ms). Task b: twice.
  s.tasks.push_back({"a", "t1", 1, 16, 15, 1e-3, 1, 4e-3, "{}"});
  s.tasks.push_back({"a", "t2", 1, 16, 15, 2e-3, 1, 3e-3, "{}"});
  s.tasks.push_back({"b", "t1", 2, 16, 15, 0.5e-3, 1, 1e-3, "{}"});
  const std::string summary = FormatTuneSummary(s);
  EXPECT_NE(summary.find("fallback 5.000 ms -> tuned 2.000 ms\n"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("no trial yet"), std::string::npos) << summary;
}

TEST(TuneSummaryTest, GivenUnitsWithOnlyTheirFallbackMeasuredTheEstimateShouldCountThemAtItAndSaySo) {
  TuneSummary s;
  // The run's fallback round measured every unit's fallback config; the budget then tuned task a alone.
  s.tasks.push_back({"a", "t1", 1, 17, 16, 1e-3, 1, 4e-3, "{}"});
  s.tasks.push_back({"b", "t1", 2, 1, 0, 2e-3, 1, 2e-3, "{}"});
  const std::string summary = FormatTuneSummary(s);
  EXPECT_NE(summary.find("estimated model latency (sum of count x latency): fallback 8.000 ms -> tuned 5.000 ms\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("1 of 2 task/template units have no trial yet beyond their fallback config"),
            std::string::npos)
      << summary;
}

TEST(TuneSummaryTest, GivenAUnitWhoseSpaceIsItsFallbackAloneItShouldNotBeCountedAsUntuned) {
  TuneSummary s;
  s.tasks.push_back({"a", "t1", 1, 17, 16, 1e-3, 1, 4e-3, "{}"});
  s.tasks.push_back({"b", "t1", 1, 1, 0, 2e-3, 1, 2e-3, "{}", /*exhausted=*/true});
  EXPECT_EQ(FormatTuneSummary(s).find("no trial yet"), std::string::npos) << FormatTuneSummary(s);
}

TEST(TuneSummaryTest, GivenOneTaskOnceThereShouldBeNoModelEstimate) {
  TuneSummary s;
  s.tasks.push_back({"gemm:64,64,64:float32", "gemm.buffer", 1, 8, 7, 1e-4, 5.2, 2e-4, "{}"});
  EXPECT_EQ(FormatTuneSummary(s).find("estimated"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
