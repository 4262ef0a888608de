// Issue 2's end-to-end promise: a real tracker, a real agent on PoCL and the tunefleet CLI tune a small GEMM;
// every trial lands in SQLite, the best config was checked against the reference, the query lists the agent.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/local_fleet.h"
#include "tuner/milliseconds.h"

namespace tunefleet::testing {
namespace {

class TuneGemmE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    fleet_.StartTracker();
    fleet_.StartAgent("pocl");
    ASSERT_TRUE(fleet_.WaitForAgents("pocl", 1)) << fleet_.agent(0).Log();
  }
  // `tune` of the given GEMM tasks under gemm.buffer, batches of 4, one quick timing per trial.
  RunResult TuneGemms(const std::vector<std::string>& specs, const std::string& trials, const std::string& tuner) {
    std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl"};
    for (const std::string& spec : specs) cmd.insert(cmd.end(), {"--task", spec});
    cmd.insert(cmd.end(), {"--template", "gemm.buffer", "--trials", trials, "--tuner", tuner, "--db", fleet_.db(),
                           "--number", "1", "--repeat", "1", "--batch", "4"});
    return fleet_.Cli(cmd);
  }
  LocalFleet fleet_;
};

TEST_F(TuneGemmE2E, GivenOneAgentATuningRunShouldRecordEveryTrialAndAVerifiedBest) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:64,64,64", "--trials", "16", "--tuner",
                            "random", "--db", fleet_.db(), "--number", "1", "--repeat", "2", "--batch", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best gemm:64,64,64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GFLOPS"), std::string::npos) << r.output;

  // One record per trial, each with a status; costs for the successes.
  EXPECT_EQ(fleet_.Sql("SELECT count(*) FROM records")[0][0], "16");
  auto ok = fleet_.Sql("SELECT count(*), min(mean_cost) FROM records WHERE status = 0");
  EXPECT_GE(std::stoi(ok[0][0]), 1) << r.output;
  EXPECT_GT(std::stod(ok[0][1]), 0.0);
  // Every record names the task, template, device and session it belongs to.
  EXPECT_EQ(fleet_.Sql("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id JOIN templates p ON "
                       "p.id = r.template_id JOIN devices d ON d.id = r.device_id JOIN sessions s ON "
                       "s.id = r.session_id WHERE t.spec LIKE 'gemm:64,64,64%'")[0][0],
            "16");
  // The session's args say what shaped the run (a log read later says why it stopped): the batch and the budgets.
  const nlohmann::json args = nlohmann::json::parse(fleet_.Sql("SELECT args FROM sessions")[0][0], nullptr, false);
  ASSERT_TRUE(args.is_object());
  EXPECT_EQ(args["trials"], "16") << args.dump();
  EXPECT_EQ(args["batch"], 8) << args.dump();
  EXPECT_EQ(args["time_budget"], 0) << args.dump();
  EXPECT_EQ(args["devices"], 1) << args.dump();

  // `best` reports a successful (reference-checked: status 0 means it matched) config.
  RunResult best = fleet_.Cli({"best", "--db", fleet_.db(), "--json"}, std::chrono::seconds(30), false);
  ASSERT_EQ(best.exit_code, 0) << best.output;
  EXPECT_NE(best.output.find("gemm:64,64,64"), std::string::npos) << best.output;

  // The query lists the agent with the jobs it did.
  nlohmann::json q = fleet_.Query();
  ASSERT_TRUE(q.is_object());
  ASSERT_EQ(q["agents"].size(), 1u) << q.dump();
  EXPECT_EQ(q["agents"][0]["key"], "pocl");
  EXPECT_GE(q["agents"][0]["jobs_done"].get<int>(), 1) << q.dump();
  RunResult text = fleet_.Cli({"query"}, std::chrono::seconds(15));
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("pocl"), std::string::npos) << text.output;

  // The application's side: the kernel pack of this log runs in tunefleet_runtime_example on the same PoCL
  // device, silently; a pack naming another device still runs, with one warning that says so.
  const std::string pack = fleet_.dir() + "/pack.json";
  RunResult exported = fleet_.Cli({"export", "--db", fleet_.db(), "--format", "kernel-pack", "-o", pack},
                                  std::chrono::seconds(30), false);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  // To standard output, the closing line says so (it said "written to -").
  RunResult csv = fleet_.Cli({"export", "--db", fleet_.db(), "--format", "csv", "-o", "-"}, std::chrono::seconds(30),
                             false);
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("tunefleet export: 16 rows written to standard output"), std::string::npos) << csv.output;
  const std::string example = BinDir() + "/tunefleet_runtime_example";
  RunResult app = tunefleet::testing::Run({example, pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 0) << app.output;
  EXPECT_NE(app.output.find("max abs error vs CPU"), std::string::npos) << app.output;
  EXPECT_EQ(app.output.find("warning"), std::string::npos) << app.output;

  nlohmann::json edited = nlohmann::json::parse(std::ifstream(pack));
  edited["device"]["name"] = "QUALCOMM Adreno(TM) 740";
  std::ofstream(pack) << edited.dump();
  app = tunefleet::testing::Run({example, pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 0) << app.output;
  EXPECT_NE(app.output.find("warning: the pack was tuned on another device (name 'QUALCOMM Adreno(TM) 740')"),
            std::string::npos)
      << app.output;

  // Edits the first kernel's store of C to store (v) * `factor`.
  auto scale_store = [](nlohmann::json& edit, const std::string& factor) {
    for (auto& launch : edit["kernels"][0]["program"]["launches"]) {
      std::string source = launch["source"];
      const std::string store = "#define ST_C(p, off, v) (*(__global floatN*)((p) + (off)) = (v))";
      const size_t at = source.find(store);
      ASSERT_NE(at, std::string::npos) << source;
      source.replace(at, store.size(),
                     "#define ST_C(p, off, v) (*(__global floatN*)((p) + (off)) = (v) * " + factor + ")");
      launch["source"] = source;
    }
  };
  // A kernel that writes NaN computes the wrong thing: it passed with "max abs error vs CPU: 0" (std::max kept 0).
  nlohmann::json poisoned = edited;
  ASSERT_NO_FATAL_FAILURE(scale_store(poisoned, "NAN"));
  const std::string poisoned_pack = fleet_.dir() + "/nan.json";
  std::ofstream(poisoned_pack) << poisoned.dump();
  // The exporter fingerprints each program: an edited one is refused when the pack is loaded, in one line, exit 2
  // (a "#define N 256" in the source wrote past the buffers: free(): invalid pointer).
  app = tunefleet::testing::Run({example, poisoned_pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 2) << app.output;
  EXPECT_NE(app.output.find("kernels[0] (gemm:64,64,64:float32): program_fnv: \""), std::string::npos)
      << app.output;
  EXPECT_NE(app.output.find("the program was edited or is damaged"), std::string::npos) << app.output;
  EXPECT_EQ(CountLines(app.output), 1) << app.output;
  // Without the fingerprints (removed to run an edited kernel on purpose) it runs, and is checked against the CPU.
  // The packs below are edited the same way, to reach the example's later checks.
  for (nlohmann::json* p : {&poisoned, &edited}) {
    for (const char* fingerprint : {"program_fnv", "entry_fnv"}) (*p)["kernels"][0].erase(fingerprint);
  }
  std::ofstream(poisoned_pack) << poisoned.dump();
  app = tunefleet::testing::Run({example, poisoned_pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 1) << app.output;
  EXPECT_NE(app.output.find("elements are NaN or infinite"), std::string::npos) << app.output;
  // A kernel half a percent off is wrong by the tuner's own tolerance; the example's absolute 1e-3 * K (0.064 here)
  // took it (its largest error, half a percent of the largest element, about 9, is below that).
  nlohmann::json skewed = edited;
  ASSERT_NO_FATAL_FAILURE(scale_store(skewed, "1.005f"));
  const std::string skewed_pack = fleet_.dir() + "/skewed.json";
  std::ofstream(skewed_pack) << skewed.dump();
  app = tunefleet::testing::Run({example, skewed_pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 1) << app.output;
  EXPECT_NE(app.output.find("elements outside the tolerance"), std::string::npos) << app.output;

  // A pack that cannot be read is bad input (exit 2); a kernel that does not build fails on the device (exit 1),
  // and the compiler's build log, several lines, comes as one line after the kernel's.
  const std::string broken = fleet_.dir() + "/broken.json";
  std::ofstream(broken) << "{";
  app = tunefleet::testing::Run({example, broken, "gemm:64,64,64:float32"}, std::chrono::seconds(60));
  EXPECT_EQ(app.exit_code, 2) << app.output;
  EXPECT_EQ(CountLines(app.output), 1) << app.output;
  app = tunefleet::testing::Run({example, pack, "gemm:64,64,64:float32", "99"}, std::chrono::seconds(60));
  EXPECT_EQ(app.exit_code, 2) << app.output;
  EXPECT_NE(app.output.find("PLATFORM 99 is out of range: this machine has "), std::string::npos) << app.output;
  EXPECT_EQ(CountLines(app.output), 1) << app.output;  // not the kernel's line first
  // The example fills float32 data: a float16 kernel is refused as bad input (it ran, and "the device fails it").
  nlohmann::json half = edited;
  half["kernels"][0]["task"] = "gemm:64,64,64:float16-acc32";
  half["kernels"][0]["precision"] = "float16-acc32";
  const std::string half_pack = fleet_.dir() + "/half.json";
  std::ofstream(half_pack) << half.dump();
  app = tunefleet::testing::Run({example, half_pack, "gemm:64,64,64:float16-acc32"}, std::chrono::seconds(60));
  EXPECT_EQ(app.exit_code, 2) << app.output;
  EXPECT_NE(app.output.find("the example runs float32 kernels only, and the pack's kernel for this workload is "
                            "gemm:64,64,64:float16-acc32"),
            std::string::npos)
      << app.output;
  // A launch raised by hand, whose extra work-items would read and write past the buffers (the example died of
  // SIGSEGV or SIGABRT in PoCL), is refused before anything runs, as bad input, with what the config gives.
  for (size_t dim : {0, 1, 2}) {
    nlohmann::json raised = edited;
    nlohmann::json& global = raised["kernels"][0]["program"]["launches"][0]["global_size"];
    global[dim] = global[dim].get<uint64_t>() * 4;
    const std::string raised_pack = fleet_.dir() + "/raised.json";
    std::ofstream(raised_pack) << raised.dump();
    app = tunefleet::testing::Run({example, raised_pack, "gemm:64,64,64:float32"}, std::chrono::seconds(60));
    EXPECT_EQ(app.exit_code, 2) << dim << ": " << app.output;
    EXPECT_NE(app.output.find("tunefleet_runtime_example: error: gemm:64,64,64:float32 (gemm.buffer): launch "
                              "'gemm_tuned' asks for global size "),
              std::string::npos)
        << app.output;
    EXPECT_NE(app.output.find("the pack was edited or is damaged"), std::string::npos) << app.output;
    EXPECT_EQ(CountLines(app.output), 1) << app.output;
  }
  for (auto& launch : edited["kernels"][0]["program"]["launches"])
    launch["source"] = "__kernel void " + launch["entry"].get<std::string>() + "(__global float* x) {\n  y = 1;\n"
                       "  z = 2;\n}\n";
  std::ofstream(pack) << edited.dump();
  app = tunefleet::testing::Run({example, pack, "gemm:64,64,64:float32"}, std::chrono::seconds(120));
  EXPECT_EQ(app.exit_code, 1) << app.output;
  // (PoCL's compiler prints "2 errors generated." of its own on stderr.)
  const size_t error = app.output.find("tunefleet_runtime_example: error: clBuildProgram failed");
  ASSERT_NE(error, std::string::npos) << app.output;
  const std::string line = app.output.substr(error, app.output.find('\n', error) - error);
  EXPECT_NE(line.find("undeclared identifier 'y' | "), std::string::npos) << app.output;
  EXPECT_NE(line.find("undeclared identifier 'z'"), std::string::npos) << app.output;
}

TEST_F(TuneGemmE2E, GivenTrialsAllAGridRunShouldMeasureEveryValidConfigExactlyOnce) {
  // pool.worksize's only knob is the local size, one of {driver default, 16, 32, ..., 1024}: 8 configs, all
  // valid on PoCL (max work-group 4096). The fallback config goes first and must not come back from the grid.
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--task", "pool:1,8,8,8,2,2,2,0,mode=max",
                                  "--template", "pool.worksize", "--tuner", "grid", "--trials", "all", "--db",
                                  fleet_.db(), "--number", "1", "--repeat", "1", "--batch", "8"};
  RunResult r = fleet_.Cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
  EXPECT_EQ(fleet_.Count("SELECT count(DISTINCT config_index) FROM records"), 8);
  // Run again: nothing is left to measure.
  RunResult again = fleet_.Cli(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
}

// A space smaller than --trials is said to be measured whole, when the search finds so: the run, and its resumption,
// ended at "trial 8/20" without a word.
TEST_F(TuneGemmE2E, GivenASpaceSmallerThanTheTrialsTheRunShouldSayEveryConfigIsMeasured) {
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--task", "pool:1,8,8,8,2,2,2,0,mode=max",
                                  "--template", "pool.worksize", "--tuner", "random", "--trials", "20", "--db",
                                  fleet_.db(), "--number", "1", "--repeat", "1", "--batch", "8"};
  const std::string says = "task 1/1 pool:1,8,8,8,2,2,2,0:float32 [pool.worksize]: every config of its space is "
                           "measured (8 configs)";
  RunResult r = fleet_.Cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
  RunResult again = fleet_.Cli(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find(says), std::string::npos) << again.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
}

// Per task: its number of records and its first record's cost, which is its fallback config's (the run's first
// round measures each unit's fallback before any first batch).
constexpr char kUnits[] =
    "WITH u AS (SELECT task_id, count(*) AS n, (SELECT f.mean_cost FROM records f WHERE f.task_id = r.task_id "
    "ORDER BY f.id LIMIT 1) AS fallback FROM records r GROUP BY task_id) ";

TEST_F(TuneGemmE2E, GivenTooFewTrialsForEveryTaskTheRunShouldSaySoAtTheStartAndTuneTheSlowestFirst) {
  RunResult r = TuneGemms({"gemm:32,32,32", "gemm:48,48,48", "gemm:64,64,64"}, "8", "random");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--trials 8 leaves 8 trials for 3 task/template units without a trial: after a round that "
                          "measures each one's fallback config, about 2 of them will get a first batch of 4, the "
                          "slowest first (count x the task's latency so far)"),
            std::string::npos)
      << r.output;
  // 3 fallbacks, then the rest of the slowest task's first batch (3 trials) and the last 2 for the next: the
  // fastest has only its fallback.
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
  EXPECT_EQ(fleet_.Count(std::string(kUnits) + "SELECT count(*) FROM u WHERE fallback > 0"), 3);
  EXPECT_EQ(fleet_.Count(std::string(kUnits) + "SELECT count(*) FROM u a JOIN u b ON a.n > b.n AND a.n IN (4, 3) "
                                               "AND b.n IN (3, 1) AND a.fallback >= b.fallback"),
            3)
      << "the more trials a task got, the slower its fallback should have been";
  EXPECT_NE(r.output.find("1 of 3 task/template units have no trial yet beyond their fallback config"),
            std::string::npos)
      << r.output;
  // With every fallback measured, the estimate covers the whole model.
  EXPECT_NE(r.output.find("estimated model latency (sum of count x latency)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no successful measurement"), std::string::npos) << r.output;
  // Random search learns nothing from other tasks' records, so no unit reads or reports them.
  EXPECT_EQ(r.output.find("warm start"), std::string::npos) << r.output;
}

// --confirm with nothing to choose between (one trial) says so: the run said nothing of it.
TEST_F(TuneGemmE2E, GivenConfirmAndOneTrialTheRunShouldSayThereIsNothingToConfirm) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--template", "gemm.buffer",
                            "--trials", "1", "--db", fleet_.db(), "--number", "1", "--repeat", "1", "--confirm", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--confirm 2: nothing to confirm: no unit has two successful configs, or their best are "
                          "confirmed already"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 1);
}

// --confirm: after the trials, each task's best configs are measured twice more, and the best is the config whose
// lower median is lowest, one measured three times: `best` names it at its median record, and the run's summary
// says the same cost.
TEST_F(TuneGemmE2E, GivenConfirmTheBestConfigsShouldBeMeasuredAgainAndRankedByTheirMedian) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:64,64,64", "--template", "gemm.buffer",
                            "--trials", "8", "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat",
                            "1", "--batch", "4", "--confirm", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int ran = fleet_.Count("SELECT count(DISTINCT config_index) FROM (SELECT * FROM records ORDER BY id LIMIT 8) "
                               "WHERE status = 0");
  ASSERT_GE(ran, 2) << r.output;
  const int jobs = 2 * std::min(3, ran);
  EXPECT_NE(r.output.find("--confirm 3: measuring up to the 3 best configs of 1 of 1 unit(s) 2 more times (" +
                          std::to_string(jobs) + " jobs)"),
            std::string::npos)
      << r.output;
  // The round's progress counts repeats, and its last line (forced at the end of each batch) says all were done.
  EXPECT_NE(r.output.find("repeat " + std::to_string(jobs) + "/" + std::to_string(jobs) + " | confirming, task 1/1"),
            std::string::npos)
      << r.output;
  // A later round measures again where a config with one result became the best (the confirmed ones' medians rose
  // past it), so the first round's configs are confirmed and maybe more: each config has 1 or 3 results.
  EXPECT_GE(fleet_.Count("SELECT count(*) FROM records"), 8 + jobs);
  EXPECT_EQ(fleet_.Count("SELECT count(DISTINCT config_index) FROM records"), 8);
  EXPECT_GE(fleet_.Count("SELECT count(*) FROM (SELECT config_index FROM records GROUP BY config_index "
                         "HAVING count(*) = 3)"),
            jobs / 2);
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM (SELECT config_index FROM records GROUP BY config_index "
                         "HAVING count(*) NOT IN (1, 3))"),
            0);

  // The lower median of each config's successful results, the lowest of them, and its record.
  std::map<std::string, std::vector<std::pair<double, std::string>>> by_config;  // index -> (cost, record id)
  // The cost in full: SQLite's text of a REAL has 15 digits, and a cost at a rounding edge of the best line's 4 was
  // formatted here otherwise than in the run's line, which formats the double itself (0.01379 against 0.01380 ms).
  for (const auto& row :
       fleet_.Sql("SELECT config_index, printf('%.17g', mean_cost), id FROM records WHERE status = 0 ORDER BY id"))
    by_config[row[0]].emplace_back(std::stod(row[1]), row[2]);
  double want_cost = 0;
  std::string want_id;
  for (auto& [index, results] : by_config) {
    std::stable_sort(results.begin(), results.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto& median = results[(results.size() - 1) / 2];
    if (want_cost == 0 || median.first < want_cost) std::tie(want_cost, want_id) = median;
  }
  RunResult best = fleet_.Cli({"best", "--db", fleet_.db(), "--json"}, std::chrono::seconds(60), false);
  ASSERT_EQ(best.exit_code, 0) << best.output;
  const nlohmann::json rows = nlohmann::json::parse(best.output);
  ASSERT_EQ(rows.size(), 1u) << best.output;
  EXPECT_EQ(std::to_string(rows[0]["record_id"].get<int64_t>()), want_id) << best.output;
  // The kernel picked was measured three times: a config's one lucky run does not pick it.
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records WHERE status = 0 AND config_index = (SELECT config_index "
                         "FROM records WHERE id = " + want_id + ")"),
            3)
      << r.output;
  const std::string ms = FormatMilliseconds(want_cost * 1e3);
  EXPECT_NE(r.output.find("GFLOPS, " + ms + " ms, config"), std::string::npos) << ms << "\n" << r.output;

  // The same command again measures nothing: its best is confirmed. (It measured more where a config of one result
  // had moved into the 3 best, behind the confirmed best.)
  const int records = fleet_.Count("SELECT count(*) FROM records");
  RunResult again = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:64,64,64", "--template", "gemm.buffer",
                                "--trials", "8", "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat",
                                "1", "--batch", "4", "--confirm", "3"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("--confirm 3: nothing to confirm"), std::string::npos) << again.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), records);
  // A budget below what the log holds measures nothing, and says why.
  RunResult fewer = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:64,64,64", "--template", "gemm.buffer",
                                "--trials", "4", "--db", fleet_.db()});
  ASSERT_EQ(fewer.exit_code, 0) << fewer.output;
  EXPECT_NE(fewer.output.find("resume: 8 trials already recorded, 0 to go, more than --trials 4 already"),
            std::string::npos)
      << fewer.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), records);
}

// A task file's counts weight the tasks as a model's layer counts do: the fastest task, listed as occurring 1000
// times, is the heaviest by count x latency and gets the batch after the fallback round that the slowest got above.
TEST_F(TuneGemmE2E, GivenATaskFileItsTasksShouldBeTunedWithTheirCounts) {
  const std::string file = fleet_.dir() + "/tasks.txt";
  std::ofstream(file) << "# three GEMMs\ngemm:32,32,32 1000\ngemm:48,48,48\n\ngemm:64,64,64 1  # the slowest\n";
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task-file", file, "--template", "gemm.buffer", "--trials",
                            "8", "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat", "1", "--batch",
                            "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                         "WHERE t.spec = 'gemm:32,32,32:float32'"),
            4)
      << r.output;
  EXPECT_EQ(fleet_.Sql("SELECT json_extract(workload, '$.count'), json_extract(workload, '$.models.\"tasks.txt\"') "
                       "FROM tasks ORDER BY spec"),
            (std::vector<std::vector<std::string>>{{"1000", "1000"}, {"1", "1"}, {"1", "1"}}));
  EXPECT_EQ(fleet_.Sql("SELECT json_extract(args, '$.task_file') FROM sessions")[0][0], file);

  // An edited count is the log's count after the next run (it kept the first run's).
  std::ofstream(file) << "gemm:32,32,32 5\ngemm:48,48,48\ngemm:64,64,64\n";
  r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task-file", file, "--template", "gemm.buffer", "--trials", "9",
                  "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat", "1", "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Sql("SELECT json_extract(workload, '$.count') FROM tasks WHERE spec = 'gemm:32,32,32:float32'"),
            (std::vector<std::vector<std::string>>{{"5"}}));
}

// `tasks --specs` writes what `tune --task-file` reads: a generated model's list, piped through a filter (its GEMM
// and pool layers, quick on PoCL) into tune on standard input.
TEST_F(TuneGemmE2E, GivenAModelsTaskListOnStandardInputTuneShouldTuneTheListedTasks) {
  const std::string bin = BinDir(), model = fleet_.dir() + "/r.onnx";
  RunResult made =
      tunefleet::testing::Run({bin + "/tunefleet-make-model", "resnet", "-o", model}, std::chrono::seconds(30));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string list = "'" + bin + "/tunefleet' tasks '" + model + "' --specs";
  RunResult listed = tunefleet::testing::Run({"/bin/sh", "-c", list + " 2>/dev/null"}, std::chrono::seconds(30));
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_EQ(listed.output, "# " + model + ": 7 tasks, SPEC COUNT per line (tunefleet tune --task-file reads this)\n"
                           "conv2d:1,3,32,32,16,3,3,1,1,bias=1:float32 1\n"
                           "conv2d:1,16,32,32,16,3,3,1,1,bias=1:float32 4\n"
                           "conv2d:1,16,32,32,32,3,3,2,1,bias=1:float32 1\n"
                           "conv2d:1,32,16,16,32,3,3,1,1,bias=1:float32 1\n"
                           "conv2d:1,16,32,32,32,1,1,2,0,bias=1:float32 1\n"
                           "pool:1,32,16,16,16,16,1,0,mode=avg,global=1:float32 1\n"
                           "gemm:1,10,32,transb=1,bias=1:float32 1\n");
  RunResult r = tunefleet::testing::Run({"/bin/sh", "-c",
                     list + " | grep -v '^conv2d' | '" + bin + "/tunefleet' tune --rpc-tracker " + fleet_.address() +
                         " --rpc-key pocl --task-file - --trials 4 --tuner random --batch 2 --number 1 --repeat 1 "
                         "--db '" + fleet_.db() + "'"},
                    std::chrono::seconds(300));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Sql("SELECT spec, json_extract(workload, '$.models.\"standard input\"') FROM tasks ORDER BY spec"),
            (std::vector<std::vector<std::string>>{{"gemm:1,10,32,transb=1,bias=1:float32", "1"},
                                                   {"pool:1,32,16,16,16,16,1,0,mode=avg,global=1:float32", "1"}}));
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 4);
}

TEST_F(TuneGemmE2E, GivenABudgetTheFallbackRoundWouldMostlyTakeTheHeaviestByFlopsShouldGoFirstWithoutIt) {
  // 3 fallbacks would take 3 of 5 trials: no round; the first batch (the fallback and 3 picks) goes to the heaviest
  // task by FLOPs, gemm:64, and the last trial to gemm:48, the next heaviest.
  RunResult r = TuneGemms({"gemm:32,32,32", "gemm:48,48,48", "gemm:64,64,64"}, "5", "random");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--trials 5 leaves 5 trials for 3 task/template units without a trial: about 2 of them "
                          "will get a first batch of 4, the heaviest first (count x FLOPs)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("measuring the fallback config"), std::string::npos) << r.output;
  auto records = [&](const std::string& spec) {
    return fleet_.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id WHERE t.spec LIKE '" + spec +
                        "%'");
  };
  EXPECT_EQ(records("gemm:64,64,64"), 4);
  EXPECT_EQ(records("gemm:48,48,48"), 1);
  EXPECT_EQ(records("gemm:32,32,32"), 0);
  // gemm:48's one trial was its fallback: it is not tuned either; gemm:32 has not even that.
  EXPECT_NE(r.output.find("2 of 3 task/template units have no trial yet (1 not even its fallback config)"),
            std::string::npos)
      << r.output;
}

TEST_F(TuneGemmE2E, GivenABudgetThatReachesEveryUnitThereShouldBeNoFallbackRound) {
  // 2 units, 8 trials, batches of 4: each gets its first batch (its fallback and 3 picks), the heavier first.
  RunResult r = TuneGemms({"gemm:32,32,32", "gemm:64,64,64"}, "8", "random");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("measuring the fallback config"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("leaves"), std::string::npos) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                         "WHERE t.spec LIKE 'gemm:64,64,64%' AND r.id <= 4"),
            4);
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
}

// --devices 3 with one agent of the key ran on the one without a word.
TEST_F(TuneGemmE2E, GivenMoreDevicesAskedThanTheKeyHasTheRunShouldSaySoOnceAndTuneOnTheOnesItGot) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--template", "gemm.buffer",
                            "--trials", "8", "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat",
                            "1", "--batch", "4", "--devices", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The reason is the key's: one agent registered (it said "no more were free").
  const std::string says = "--devices 3: the tracker leased 1 device of key 'pocl', fewer than asked (the key has 1 "
                           "agent registered); going on with 1";
  const size_t at = r.output.find(says);
  EXPECT_NE(at, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("fewer than asked", at + says.size()), std::string::npos) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
}

// --early-stopping N stops a unit after N trials without a new best, and says so: a random search of a small GEMM
// in batches of 1 ends long before its 60 trials, exactly 3 trials after its best.
TEST_F(TuneGemmE2E, GivenEarlyStoppingAUnitWithoutANewBestInNTrialsShouldStopAndSaySo) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--template", "gemm.buffer",
                            "--trials", "60", "--tuner", "random", "--seed", "7", "--db", fleet_.db(), "--number", "1",
                            "--repeat", "1", "--batch", "1", "--early-stopping", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gemm:32,32,32:float32 [gemm.buffer]: 3 trials without a new best: stopped early "
                          "(--early-stopping 3)"),
            std::string::npos)
      << r.output;
  EXPECT_LT(fleet_.Count("SELECT count(*) FROM records"), 60);
  // Records are numbered in the order they were measured; the best is the last one with a lower cost than all before.
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records WHERE id > (SELECT id FROM records WHERE status = 0 ORDER BY "
                         "mean_cost, id LIMIT 1)"),
            3)
      << r.output;

  // The same command again: the log stops the unit already, which is said (it measured nothing without a word).
  const int64_t records = fleet_.Count("SELECT count(*) FROM records");
  RunResult again = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--template", "gemm.buffer",
                                "--trials", "60", "--tuner", "random", "--seed", "7", "--db", fleet_.db(), "--number",
                                "1", "--repeat", "1", "--batch", "1", "--early-stopping", "3"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("1 of 1 unit(s) already stopped early: the log holds 3 or more trials without a new "
                              "best (--early-stopping 3); they measure nothing more"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), records);
}

// A unit none of whose trials runs (every job past its 1 ms --timeout) counts from its first trial: it was tuned on
// to the end of the budget, 30 failed trials where 4 say enough. A run of no successful trial at all exits 1 (it
// exited 0, as a run that found kernels), saying so last, its records kept.
TEST_F(TuneGemmE2E, GivenEarlyStoppingAUnitWhoseTrialsAllFailShouldStopAfterNOfThem) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--template", "gemm.buffer",
                            "--trials", "30", "--tuner", "random", "--db", fleet_.db(), "--number", "1", "--repeat",
                            "1", "--batch", "2", "--early-stopping", "4", "--timeout", "0.001"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(
      r.output.find("tunefleet tune: error: no trial succeeded: none of the 4 recorded trial(s) of the run's tasks"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("4 trials without a new best, none of them ran: stopped early (--early-stopping 4)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 4) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records WHERE status = 0"), 0) << r.output;
}

// One task spelled three ways is one unit of the log: it was three, each measuring its own fallback config, and the
// summary listed the task three times.
TEST_F(TuneGemmE2E, GivenOneTaskNamedSeveralWaysItShouldBeTunedOnce) {
  RunResult r = TuneGemms({"gemm:32,32,32", "gemm:32,32,32:float32", "gemm: 32,32,32:fp32"}, "8", "random");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("task gemm:32,32,32:float32 is named more than once: tuned once"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("units"), std::string::npos) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 8);
  EXPECT_EQ(fleet_.Count("SELECT count(DISTINCT config_index) FROM records"), 8);
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM tasks"), 1);
}

TEST_F(TuneGemmE2E, GivenTasksOfOneTemplateOnAnEmptyLogEachShouldWarmStartFromWhatTheRunRecordedBeforeIt) {
  // The fallback round records the 3 fallbacks (10 trials cannot give 3 units a batch of 4 each). Then:
  // - the slowest task's first batch (3 more trials) starts without history: the others' lone fallbacks rank nothing;
  // - the next one's (3 more) learns from the slowest's 4 results, the third task's lone fallback left out;
  // - the fastest gets the last trial, and learns from the 8 results of the other two.
  RunResult r = TuneGemms({"gemm:32,32,32", "gemm:48,48,48", "gemm:64,64,64"}, "10", "xgb");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records"), 10);
  EXPECT_EQ(fleet_.Count(std::string(kUnits) + "SELECT count(*) FROM u a JOIN u b ON a.n = 4 AND b.n = 2 "
                                               "AND a.fallback >= b.fallback"),
            2)
      << "the fastest fallback's task should have come last";
  const size_t warm = r.output.find("[gemm.buffer]: warm start from ");
  ASSERT_NE(warm, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("[gemm.buffer]: warm start from 4 records of other tasks/devices (4 configs)"), warm)
      << r.output;
  const size_t next = r.output.find("[gemm.buffer]: warm start from ", warm + 1);
  EXPECT_EQ(r.output.find("[gemm.buffer]: warm start from 8 records of other tasks/devices (8 configs)"), next)
      << r.output;
  EXPECT_EQ(r.output.find("[gemm.buffer]: warm start from ", next + 1), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tunefleet::testing
