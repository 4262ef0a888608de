#include "tuner/progress.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(ProgressTest, GivenDurationsWeShouldPrintThemCompactly) {
  EXPECT_EQ(FormatDuration(12), "12s");
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(3720), "1h02m");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_EQ(FormatGivenDuration(0.05), "0.05s");
  EXPECT_EQ(FormatGivenDuration(2.5), "2.5s");
  EXPECT_EQ(FormatGivenDuration(4), "4s");
  EXPECT_EQ(FormatGivenDuration(90), "1m30s");
}

TEST(ProgressTest, GivenATimeBudgetTheEtaShouldNeverExceedIt) {
  std::FILE* sink = std::tmpfile();
  Progress p(1000000, 60, sink);
  p.Trial();
  EXPECT_LE(p.EtaSeconds(), 60.0);
  EXPECT_GE(p.EtaSeconds(), 0.0);
  std::fclose(sink);
}

TEST(ProgressTest, GivenAFileItShouldPrintOneLinePerForcedShowWithTrialsAndGflops) {
  std::FILE* out = std::tmpfile();
  Progress p(10, 0, out);
  p.Trial();
  p.Show("task 1/1 gemm:64,64,64", 1.5, 2.5, "", false);  // not a terminal: only forced lines print
  p.Show("task 1/1 gemm:64,64,64", 1.5, 2.5, "refit #1", true);
  std::rewind(out);
  char buf[512] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, out);
  std::string s(buf, n);
  std::fclose(out);
  EXPECT_NE(s.find("trial 1/10"), std::string::npos) << s;
  EXPECT_NE(s.find("best 2.50 GFLOPS"), std::string::npos) << s;
  EXPECT_NE(s.find("refit #1"), std::string::npos) << s;
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1) << s;
}

// A failed trial (a run timeout) is said so: "current 0.00 GFLOPS" read as a very slow config.
TEST(ProgressTest, GivenAFailedTrialTheLineShouldSayCurrentFailed) {
  std::FILE* out = std::tmpfile();
  Progress p(10, 0, out);
  p.Trial();
  p.Show("task 1/1 gemm:64,64,64", -1, 2.5, "", true);
  std::rewind(out);
  char buf[512] = {0};
  const std::string s(buf, std::fread(buf, 1, sizeof buf - 1, out));
  std::fclose(out);
  EXPECT_NE(s.find("| current failed | best 2.50 GFLOPS"), std::string::npos) << s;
}

// Before any success the best is "-", as the current is: "best 0.00 GFLOPS" read as a success at 0.
TEST(ProgressTest, GivenNoSuccessYetTheLineShouldSayBestDash) {
  std::FILE* out = std::tmpfile();
  Progress p(10, 0, out);
  p.Trial();
  p.Show("task 1/1 gemm:64,64,64", -1, 0, "", true);
  std::rewind(out);
  char buf[512] = {0};
  const std::string s(buf, std::fread(buf, 1, sizeof buf - 1, out));
  std::fclose(out);
  EXPECT_NE(s.find("| current failed | best - | elapsed"), std::string::npos) << s;
}

// Without a terminal, a trial that ends when the last line is older than `quiet` prints one too: a slow batch was
// silent for minutes (300 s in a run with --min-repeat-ms 1500).
TEST(ProgressTest, GivenAFileAndAQuietSpellATrialShouldPrintALine) {
  std::FILE* out = std::tmpfile();
  Progress p(10, 0, out, std::chrono::milliseconds(200));
  p.Trial();
  p.Show("task 1/1 gemm:64,64,64", 1.5, 2.5, "", false);  // within the quiet spell: nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  p.Trial();
  p.Show("task 1/1 gemm:64,64,64", 1.5, 2.5, "", false);
  p.Show("task 1/1 gemm:64,64,64", 1.5, 2.5, "", false);  // just printed: nothing
  std::rewind(out);
  char buf[512] = {0};
  const std::string s(buf, std::fread(buf, 1, sizeof buf - 1, out));
  std::fclose(out);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1) << s;
  EXPECT_NE(s.find("trial 2/10"), std::string::npos) << s;
}

// tune --confirm's round counts repeats, not trials, on its own line.
TEST(ProgressTest, GivenANounTheLineShouldCountInIt) {
  std::FILE* out = std::tmpfile();
  Progress p(8, 0, out);
  p.SetNoun("repeat");
  p.Trial();
  p.Show("confirming, task 1/1 gemm:64,64,64", 1.5, 2.5, "", true);
  std::rewind(out);
  char buf[512] = {0};
  const std::string s(buf, std::fread(buf, 1, sizeof buf - 1, out));
  std::fclose(out);
  EXPECT_EQ(s.rfind("repeat 1/8 | confirming, task 1/1", 0), 0u) << s;
  EXPECT_EQ(s.find("trial"), std::string::npos) << s;
}

}  // namespace
}  // namespace tunefleet
