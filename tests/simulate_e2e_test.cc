// `tunefleet simulate` end to end on a recorded space written into a real tuning log: its progress lines, its
// summary line last, and Ctrl-C.
#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

// A tuning log at fleet.db() recording every config index below `raw` of `template_name` for `task` on a CPU-like
// device (a config that is not valid is recorded too, and never proposed): a space that `simulate` replays whole.
// Config `best` (a valid one) runs in 0.5 ms, the only one within 95% of the best; the others in 1 to 2 ms.
void WriteRecordedSpace(LocalFleet& fleet, const std::string& task, const std::string& op,
                        const std::string& template_name, int raw, int best) {
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  ASSERT_EQ(fleet.Cli({"import", "--db", fleet.db(), empty}, std::chrono::seconds(30), false).exit_code, 0);
  fleet.ExecSql(
      "INSERT INTO devices (fingerprint, name, info_json, first_seen) VALUES ('fp-cpu', 'cpu', "
      "'{\"device_type\":\"CPU\",\"compute_units\":2,\"max_work_group_size\":\"4096\",\"max_work_item_sizes\":"
      "[\"4096\",\"4096\",\"4096\"],\"local_mem_bytes\":\"1048576\",\"image_support\":true,"
      "\"image2d_max_width\":\"16384\",\"image2d_max_height\":\"16384\"}', 0);"
      "INSERT INTO tasks (spec, op) VALUES ('" + task + "', '" + op + "');"
      "INSERT INTO templates (name, version) VALUES ('" + template_name + "', 1);"
      "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < " + std::to_string(raw - 1) + ") "
      "INSERT INTO records (task_id, template_id, device_id, config_index, config, status, mean_cost, timestamp) "
      "SELECT 1, 1, 1, n, '', 0, CASE WHEN n = " + std::to_string(best) + " THEN 0.0005 ELSE 0.001 * (1 + "
      "((n * 7919) % " + std::to_string(raw) + ") / " + std::to_string(raw) + ".0) END, 0 FROM i;");
}

// Progress goes to stderr, a line per run; stdout's header comes first and its summary last.
TEST(SimulateE2E, GivenARecordedSpaceSimulateShouldReportEachRunAndEndWithTheSummary) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);  // 8 configs
  RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid", "--seeds", "3"},
                          std::chrono::seconds(120), false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The header names the replayed device.
  EXPECT_EQ(r.output.rfind("replaying pool:1,8,8,8,2,2,2,0:float32 on pool.worksize, device ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("]: 8 recorded configs of 8 valid\n"), std::string::npos) << r.output;
  for (const char* run : {"grid seed 1/3: the target in ", "grid seed 3/3: the target in ",
                          "random seed 1/3: the target in ", "random seed 3/3: the target in "}) {
    EXPECT_NE(r.output.find(std::string("tunefleet simulate: ") + run), std::string::npos) << run << "\n" << r.output;
  }
  ASSERT_FALSE(r.output.empty());
  const size_t last = r.output.rfind('\n', r.output.size() - 2);
  EXPECT_EQ(r.output.substr(last + 1).rfind("trials-to-95%: grid ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find(" | run 6/6 | elapsed "), std::string::npos) << r.output;
}

// `simulate --seeds` large on a space slow to replay: the header reaches a pipe at once, each run says so, and Ctrl-C
// ends it with exit 130 and how many seeds were done (it had died printing nothing).
TEST(SimulateE2E, GivenALongReplaySigintShouldEndItWith130SayingHowManySeedsWereDone) {
  LocalFleet fleet;
  // 120 valid configs of 2,400, one of which reaches the target: xgb refits every 8 trials, a sixth of a second a
  // seed on this machine, half an hour for its 10,000 seeds: the signal comes long before the end.
  WriteRecordedSpace(fleet, "dwconv2d:1,4,8,8,3,3,1,1", "dwconv2d", "depthwise_conv2d_nchwc.image2d", 2400, 2399);
  Subprocess sim({BinDir() + "/tunefleet", "simulate", "--db", fleet.db(), "--seeds", "10000", "--plan-size", "8"},
                 fleet.dir() + "/simulate.log");
  bool first_run = false;
  for (int i = 0; i < 1200 && !first_run && sim.running(); ++i) {
    first_run = sim.Log().find("tunefleet simulate: xgb seed 1/10000: the target in ") != std::string::npos;
    if (!first_run) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(first_run) << sim.Log();
  // The header was written before the first run, though stdout is a file here (fully buffered).
  EXPECT_EQ(
      sim.Log().rfind("replaying dwconv2d:1,4,8,8,3,3,1,1:float32 on depthwise_conv2d_nchwc.image2d, device ", 0), 0u)
      << sim.Log();
  sim.Signal(SIGINT);
  std::optional<int> code = sim.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << "simulate still running 60 s after SIGINT:\n" << sim.Log();
  EXPECT_EQ(*code, 130) << sim.Log();
  const std::string log = sim.Log();
  const size_t said = log.find("tunefleet simulate: interrupted by SIGINT after ");
  ASSERT_NE(said, std::string::npos) << log;
  EXPECT_NE(log.find(" of 10000 seeds of xgb and 0 of 10000 of random; no summary\n", said), std::string::npos) << log;
  EXPECT_EQ(log.find("trials-to-"), std::string::npos) << log;
}

// A space less than half recorded is refused in one line alone: the "replaying ..." header, on stdout, had come first.
TEST(SimulateE2E, GivenASpaceLessThanHalfRecordedSimulateShouldRefuseItInOneLineWithoutTheHeader) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);  // 8 configs
  fleet.ExecSql("DELETE FROM records WHERE config_index > 2;");                             // 3 of them left
  RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid"}, std::chrono::seconds(60), false);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tunefleet simulate: error: the log records 3 of the 8 valid configs of pool:", 0), 0u)
      << r.output;
  EXPECT_EQ(r.output.find("replaying"), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

// A space mostly recorded replays, and says how many proposals met a config without a record (each a failed trial):
// the count was kept and never shown. Grid proposes configs 0 and 1 first, in each of its 2 x 2 runs.
TEST(SimulateE2E, GivenConfigsWithoutARecordSimulateShouldSayHowManyProposalsMetThem) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);  // 8 configs
  fleet.ExecSql("DELETE FROM records WHERE config_index < 2;");                              // 6 of them left
  RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid", "--baseline", "grid", "--seeds", "2"},
                          std::chrono::seconds(60), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 valid config(s) have no record"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: 8 proposals over all runs were of configs without a record"), std::string::npos)
      << r.output;
}

// A --trace that cannot be written is a failure at run time (1) that says the system's reason, before the replay.
TEST(SimulateE2E, GivenATraceThatCannotBeWrittenSimulateShouldExit1SayingWhyBeforeTheReplay) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);
  for (const auto& [trace, why] : std::vector<std::pair<std::string, std::string>>{
           {fleet.dir() + "/no-such-folder/trace.csv", "No such file or directory"},
           {fleet.dir(), "Is a directory"}}) {
    RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid", "--trace", trace},
                            std::chrono::seconds(60), false);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(r.output, "tunefleet simulate: error: cannot write the trace file " + trace + ": " + why + "\n");
  }
}

// A trace whose writes fail during the replay (a full disk) says the system's reason too (it said "failed" alone),
// and the replay stops at the next batch: 10000 seeds write far more than the stream's buffer, and ran to the end.
TEST(SimulateE2E, GivenATraceOnAFullDiskSimulateShouldStopAndExit1SayingTheCause) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);
  RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid", "--baseline", "random", "--seeds",
                           "10000", "--trace", "/dev/full"},
                          std::chrono::seconds(60), false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("grid seed 1000/10000"), std::string::npos) << "the replay went on after the failure";
  EXPECT_EQ(r.output.find("trials-to-"), std::string::npos) << r.output.substr(r.output.size() - 2000);
  EXPECT_NE(r.output.find("tunefleet simulate: error: writing the trace file /dev/full failed: No space left on "
                          "device\n"),
            std::string::npos)
      << r.output;
}

// A standard output that cannot be written (here /dev/full) ends the replay at its first line, with the cause: the
// progress lines on standard error flushed it again (std::cerr is tied to std::cout), and the error line at the
// end said "write failed" without the reason after the whole replay.
TEST(SimulateE2E, GivenAnOutputThatCannotBeWrittenSimulateShouldStopAtOnceSayingTheCause) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);
  RunResult r = testing::Run({"/bin/sh", "-c", "exec \"$0\" simulate --db \"$1\" --tuner grid > /dev/full",
                              BinDir() + "/tunefleet", fleet.db()},
                             std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "tunefleet simulate: error: standard output: write failed: No space left on device\n");
}

// The model's options when neither strategy is xgb had no effect and were accepted; refused as tune refuses them.
TEST(SimulateE2E, GivenXgbOptionsWithoutAnXgbStrategySimulateShouldRefuseThemInOneLine) {
  LocalFleet fleet;
  WriteRecordedSpace(fleet, "pool:1,8,8,8,2,2,2,0,mode=max", "pool", "pool.worksize", 8, 5);
  for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{{"--xgb-objective", "rank"},
                                                                                      {"--xgb-kappa", "2"},
                                                                                      {"--xgb-ensemble", "1"},
                                                                                      {"--xgb-prior-pool", "0"},
                                                                                      {"--plan-size", "8"}}) {
    RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "random", "--baseline", "grid", option, value},
                            std::chrono::seconds(60), false);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.output;
    EXPECT_EQ(r.output, "tunefleet simulate: error: " + option +
                            " applies to --tuner or --baseline xgb (the cost model), not --tuner random --baseline "
                            "grid\n");
  }
  // xgb as the baseline takes them.
  RunResult r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "grid", "--baseline", "xgb", "--xgb-kappa", "2",
                           "--plan-size", "4", "--seeds", "1"},
                          std::chrono::seconds(120), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The history warm-starts the tuner's cost model only: with another --tuner it changed nothing, while the header
  // said it was used. Refused before the log's sibling is read.
  r = fleet.Cli({"simulate", "--db", fleet.db(), "--tuner", "random", "--baseline", "xgb", "--transfer-from",
                 "pool:1,8,8,8,2,2,2,0,mode=avg"},
                std::chrono::seconds(60), false);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "tunefleet simulate: error: --transfer-from warm-starts the cost model of --tuner xgb; --tuner "
                      "random has none\n");
}

}  // namespace
}  // namespace tunefleet::testing
