// Issue 5's resume promise: a tuning run killed with SIGKILL and started again measures exactly the remaining
// trials — no config is recorded twice and the total is what was asked.
#include <signal.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

TEST(ResumeE2E, GivenARunKilledMidwayTheSameCommandShouldMeasureExactlyTheRemainingTrials) {
  LocalFleet fleet;
  fleet.StartTracker();  // default lease ttl, 30 s: the killed run's lease is released, not waited out
  fleet.StartAgent("pocl");
  ASSERT_TRUE(fleet.WaitForAgents("pocl", 1));
  std::vector<std::string> cmd = {"tune", "--rpc-key", "pocl", "--task", "gemm:48,48,48", "--trials", "20",
                                  "--tuner", "random", "--db", fleet.db(), "--number", "1", "--repeat", "1",
                                  "--batch", "2", "--wait", "30"};
  auto first = fleet.CliAsync(cmd);
  ASSERT_TRUE(fleet.WaitForRecords(5, std::chrono::seconds(240))) << first->Log();
  first->Signal(SIGKILL);
  first->Wait(std::chrono::seconds(10));
  int before = fleet.Count("SELECT count(*) FROM records");
  ASSERT_GE(before, 5);
  ASSERT_LT(before, 20) << "the run finished before it could be killed";

  // The same command releases the lease the dead tuner noted beside the log, then resumes.
  RunResult again = fleet.Cli(cmd, std::chrono::seconds(600));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("resum"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("released the lease that run pid " + std::to_string(first->pid()) + " of this log"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(again.output.find("is leased by"), std::string::npos) << again.output;  // it did not wait
  for (const auto& entry : std::filesystem::directory_iterator(fleet.dir())) {
    EXPECT_EQ(entry.path().filename().string().find(".lease."), std::string::npos) << entry.path();
    EXPECT_NE(entry.path().extension(), ".locks") << entry.path();  // the killed run's lock went with it
  }
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records"), 20);
  EXPECT_EQ(fleet.Count("SELECT count(DISTINCT config_index) FROM records"), 20);
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM sessions"), 2);
  // The killed run could not end its session; the next run saw its run lock free and ended it, at its last record.
  EXPECT_NE(again.output.find("session 1 (on "), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("marked 'killed'"), std::string::npos) << again.output;
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM sessions WHERE id = 1 AND state = 'killed' AND ended = "
                        "(SELECT max(timestamp) FROM records WHERE session_id = 1)"),
            1);
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM sessions WHERE id = 2 AND state = 'done'"), 1);
  // A third run has nothing left to do and measures nothing.
  RunResult third = fleet.Cli(cmd, std::chrono::seconds(120));
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records"), 20);
}

// A second run on a key whose only agent is leased (by a live run here; by a killed one until its lease runs out)
// says so, and by whom, before it waits, and a run on a key without agents says that instead. A second run on the
// log itself is refused.
TEST(ResumeE2E, GivenTheOnlyAgentLeasedASecondRunShouldSayWhoHoldsItBeforeWaiting) {
  LocalFleet fleet;
  fleet.StartTracker();
  fleet.StartAgent("pocl");
  ASSERT_TRUE(fleet.WaitForAgents("pocl", 1));
  // Every job lasts at least 3 x 300 ms: the first run holds the lease while the others ask.
  auto first = fleet.CliAsync({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--trials", "40", "--tuner",
                               "random", "--db", fleet.db(), "--number", "1", "--repeat", "3", "--min-repeat-ms",
                               "300", "--batch", "8", "--wait", "30"});
  ASSERT_TRUE(fleet.WaitForRecords(1, std::chrono::seconds(240))) << first->Log();

  const std::string other_db = fleet.dir() + "/other.db";
  RunResult second = fleet.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--trials", "4", "--db",
                                other_db, "--wait", "1"},
                               std::chrono::seconds(60));
  EXPECT_NE(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("every agent of key 'pocl' (1) is leased by 'tunefleet tune pid "), std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("waiting up to 1 s for one"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("every agent of key 'pocl' (1) stayed leased for 1.0 s (the client's wait; tune "
                               "--wait, measure --wait); leased at its end by 'tunefleet tune pid "),
            std::string::npos)
      << second.output;
  EXPECT_EQ(second.output.find("ahead of this one"), std::string::npos) << second.output;  // none waited

  // With a run waiting already, the next one says that it waits behind it.
  auto waiter = fleet.CliAsync({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--trials", "4", "--db",
                                fleet.dir() + "/waiter.db", "--wait", "120"});
  bool queued = false;
  for (int i = 0; i < 600 && !queued; ++i) {
    const nlohmann::json q = fleet.Query();
    queued = q.is_object() && q["keys"].size() == 1 && q["keys"][0]["queue"].size() == 1;
    if (!queued) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(queued) << waiter->Log();
  RunResult behind = fleet.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--trials", "4", "--db",
                                other_db, "--wait", "1"},
                               std::chrono::seconds(60));
  EXPECT_NE(behind.output.find(" is leased by 'tunefleet tune pid "), std::string::npos) << behind.output;
  EXPECT_NE(
      behind.output.find("; 1 run waits ahead of this one (`tunefleet query` lists the queue); waiting up to 1 s"),
      std::string::npos)
      << behind.output;
  waiter->Signal(SIGINT);
  waiter->Wait(std::chrono::seconds(30));

  RunResult nobody = fleet.Cli({"tune", "--rpc-key", "nobody", "--task", "gemm:32,32,32", "--trials", "4", "--db",
                                other_db, "--wait", "1"},
                               std::chrono::seconds(60));
  EXPECT_NE(nobody.exit_code, 0) << nobody.output;
  EXPECT_NE(nobody.output.find("no agent of key 'nobody' is registered with tracker " + fleet.address() +
                               " yet; waiting up to 1 s for one"),
            std::string::npos)
      << nobody.output;
  // Neither refused run leaves a new, empty log (nor a lock folder) behind.
  EXPECT_FALSE(std::filesystem::exists(other_db)) << second.output << nobody.output;
  EXPECT_FALSE(std::filesystem::exists(other_db + ".locks"));

  // The same task and key of the log while the first run tunes it: refused at once, naming that run, and its lock
  // left alone.
  RunResult twice = fleet.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:32,32,32", "--trials", "40", "--db",
                               fleet.db(), "--wait", "1"},
                              std::chrono::seconds(60));
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_NE(twice.output.find("tunefleet tune: error: " + fleet.db() +
                              ": task gemm:32,32,32:float32 on key pocl is being tuned by tunefleet tune pid " +
                              std::to_string(first->pid()) + "@"),
            std::string::npos)
      << twice.output;
  EXPECT_EQ(CountLines(twice.output), 1) << twice.output;
  EXPECT_TRUE(std::filesystem::exists(fleet.db() + ".locks"));

  first->Signal(SIGINT);
  first->Wait(std::chrono::seconds(60));
  EXPECT_FALSE(std::filesystem::exists(fleet.db() + ".locks"));  // an interrupted run removes its locks
}

// DESIGN: several tuners may write one log at once. Two runs of other tasks on one key (an agent each) tune into one
// log side by side; each finishes with every trial it asked for, and the log holds both runs' records. A run of the
// first one's task through another key of the same device model is refused once it has its device.
TEST(ResumeE2E, GivenTwoRunsOfOtherTasksOnOneLogBothShouldFinishWithEveryRecord) {
  LocalFleet fleet;
  fleet.StartTracker();
  fleet.StartAgent("pocl");
  fleet.StartAgent("pocl");
  fleet.StartAgent("pocl-twin");  // the same device under another key
  ASSERT_TRUE(fleet.WaitForAgents("pocl", 2));
  ASSERT_TRUE(fleet.WaitForAgents("pocl-twin", 1));
  auto run = [&](const std::string& task, const std::string& min_repeat_ms) {
    return fleet.CliAsync({"tune", "--rpc-key", "pocl", "--task", task, "--trials", "6", "--tuner", "random",
                           "--db", fleet.db(), "--number", "1", "--repeat", "3", "--min-repeat-ms", min_repeat_ms,
                           "--batch", "2", "--wait", "60"});
  };
  // The first run's trials last at least 3 x 500 ms each: after its first record it has at least 7.5 s to go, in
  // which the refused run asks and the second run (quick trials) starts, leases the other agent and records.
  auto first = run("gemm:32,32,32", "500");
  ASSERT_TRUE(fleet.WaitForRecords(1, std::chrono::seconds(240))) << first->Log();
  RunResult twin = fleet.Cli({"tune", "--rpc-key", "pocl-twin", "--task", "gemm:32,32,32", "--trials", "6", "--db",
                              fleet.db(), "--wait", "30"},
                             std::chrono::seconds(120));
  EXPECT_EQ(twin.exit_code, 1) << twin.output;
  EXPECT_NE(twin.output.find("tunefleet tune: error: " + fleet.db() + ": task gemm:32,32,32:float32 on device '"),
            std::string::npos)
      << twin.output;
  EXPECT_NE(twin.output.find(") is being tuned by tunefleet tune pid " + std::to_string(first->pid()) + "@"),
            std::string::npos)
      << twin.output;
  auto second = run("gemm:16,16,16", "1");
  EXPECT_EQ(first->Wait(std::chrono::seconds(300)), 0) << first->Log();
  EXPECT_EQ(second->Wait(std::chrono::seconds(300)), 0) << second->Log();
  // They ran at once: the second run's first record came before the first run's last.
  EXPECT_LT(fleet.Count("SELECT min(r.id) FROM records r JOIN tasks t ON t.id = r.task_id "
                        "WHERE t.spec = 'gemm:16,16,16:float32'"),
            fleet.Count("SELECT max(r.id) FROM records r JOIN tasks t ON t.id = r.task_id "
                        "WHERE t.spec = 'gemm:32,32,32:float32'"));
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                        "WHERE t.spec = 'gemm:32,32,32:float32'"),
            6);
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                        "WHERE t.spec = 'gemm:16,16,16:float32'"),
            6);
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM sessions"), 2);  // the refused run began none
  EXPECT_FALSE(std::filesystem::exists(fleet.db() + ".locks"));
}

}  // namespace
}  // namespace tunefleet::testing
