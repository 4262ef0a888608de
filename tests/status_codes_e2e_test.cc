// Issue 2: what the agent says about bad kernels, through the real tracker and agent on PoCL.
// A deliberately wrong kernel → wrong answer (5); a syntax error → device compile failed (3) with the build log;
// an over-large work-group → invalid config (1), caught before launching.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"

namespace tunefleet::testing {
namespace {

class StatusCodesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    fleet_.StartTracker();
    fleet_.StartAgent("pocl");
    ASSERT_TRUE(fleet_.WaitForAgents("pocl", 1)) << fleet_.agent(0).Log();
    RunResult dump = fleet_.Cli({"measure", "--task", "gemm:64,64,64", "--dump-program"}, std::chrono::seconds(30),
                                false);
    ASSERT_EQ(dump.exit_code, 0) << dump.output;
    gemm_ = nlohmann::json::parse(dump.output.substr(dump.output.find('{')));
  }

  // Measures a program through the tracker; returns the MeasureResult JSON.
  nlohmann::json Measure(const nlohmann::json& program) {
    std::string path = fleet_.dir() + "/program" + std::to_string(n_++) + ".json";
    std::ofstream(path) << program.dump();
    RunResult r = fleet_.Cli({"measure", "--rpc-key", "pocl", "--program", path}, std::chrono::seconds(120));
    nlohmann::json result = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
    // 0 for a program measured ok, 3 for one measured and failed: a script can tell them apart by the code alone.
    EXPECT_EQ(r.exit_code, result.is_object() && result["status"] == 0 ? 0 : 3) << r.output;
    return result;
  }

  // The GEMM task's program with its launches replaced by one kernel writing the output buffer.
  nlohmann::json WithKernel(const std::string& source, const std::string& entry) {
    nlohmann::json p = gemm_;
    std::string out = p["outputBuffer"];
    nlohmann::json count = 0;
    for (const auto& b : p["buffers"])
      if (b["name"] == out) count = b["count"];
    p["launches"] = nlohmann::json::array({{{"source", source},
                                            {"entry", entry},
                                            {"args", {{{"buffer", out}}}},
                                            {"globalSize", {count}}}});
    return p;
  }

  LocalFleet fleet_;
  nlohmann::json gemm_;
  int n_ = 0;
};

TEST_F(StatusCodesE2E, GivenTheTemplatesOwnProgramTheAgentShouldReportSuccessWithCosts) {
  nlohmann::json r = Measure(gemm_);
  EXPECT_EQ(r["status"], 0) << r.dump();
  EXPECT_FALSE(r["costs"].empty()) << r.dump();
  // Which device measured it, as the tuning log names it.
  ASSERT_TRUE(r.contains("deviceFingerprint") && r["deviceFingerprint"].is_string()) << r.dump();
  EXPECT_EQ(r["deviceFingerprint"].get<std::string>().size(), 16u) << r.dump();
  EXPECT_FALSE(r["deviceName"].get<std::string>().empty()) << r.dump();
}

TEST_F(StatusCodesE2E, GivenAKernelThatComputesTheWrongThingWeShouldGetWrongAnswer) {
  nlohmann::json r = Measure(WithKernel("__kernel void wrong(__global float* c) { c[get_global_id(0)] = 1.0f; }",
                                        "wrong"));
  EXPECT_EQ(r["status"], 5) << r.dump();
}

TEST_F(StatusCodesE2E, GivenASyntaxErrorWeShouldGetDeviceCompileFailedWithTheBuildLog) {
  nlohmann::json r = Measure(WithKernel("__kernel void broken(__global float* c) { c[0] = undeclared_name; }",
                                        "broken"));
  EXPECT_EQ(r["status"], 3) << r.dump();
  EXPECT_NE(r["message"].get<std::string>().find("undeclared_name"), std::string::npos) << r.dump();
}

TEST_F(StatusCodesE2E, GivenAWorkGroupLargerThanTheDeviceAllowsWeShouldGetInvalidConfig) {
  nlohmann::json p = gemm_;
  for (auto& l : p["launches"]) {
    l["globalSize"] = {65536, 1};
    l["localSize"] = {65536, 1};
  }
  nlohmann::json r = Measure(p);
  EXPECT_EQ(r["status"], 1) << r.dump();
}

// measure's stdout is its result's JSON alone: the session's lines (waiting for an agent of the key) go to stderr.
// They went to stdout, before the JSON, so `measure ... | jq` failed when the device was busy.
TEST_F(StatusCodesE2E, GivenAWaitForADeviceMeasuresStdoutShouldHoldOnlyTheResult) {
  auto stdout_of = [&](const std::string& key) {
    return testing::Run({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>/dev/null", BinDir() + "/tunefleet", "measure",
                         "--rpc-tracker", fleet_.address(), "--rpc-key", key, "--wait", "1", "--task",
                         "gemm:16,16,16"},
                        std::chrono::seconds(60));
  };
  RunResult none = stdout_of("nokey");  // waits 1 s for an agent of the key, then fails
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.output, "");
  RunResult ok = stdout_of("pocl");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const nlohmann::json result = nlohmann::json::parse(ok.output, nullptr, false);
  ASSERT_TRUE(result.is_object()) << ok.output;
  EXPECT_EQ(result["status"], 0) << ok.output;
}

}  // namespace
}  // namespace tunefleet::testing

namespace tunefleet::testing {
namespace {

// Issue 3's precision promise: a float16 task on a device without cl_khr_fp16 (PoCL here) is refused with the
// reason, never run silently as float32: bad input for this device (exit 2, as `measure` says it; it was 1), and
// no log is left (an empty one was).
TEST_F(StatusCodesE2E, GivenAFloat16TaskOnADeviceWithoutFp16WeShouldBeRefusedWithTheReason) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:64,64,64:float16", "--db", fleet_.db(),
                            "--trials", "4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cl_khr_fp16"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(fleet_.db())) << r.output;
}

// float16-acc32 keeps half only in global memory (vload_half / vstore_half, core OpenCL): the same device runs it,
// and every trial is checked against the half reference.
TEST_F(StatusCodesE2E, GivenAFloat16Acc32TaskOnADeviceWithoutFp16EveryTrialShouldRunAndMatchTheReference) {
  RunResult r = fleet_.Cli({"tune", "--rpc-key", "pocl", "--task", "gemm:40,48,36,bias=1:float16-acc32", "--db",
                            fleet_.db(), "--trials", "4", "--tuner", "random", "--seed", "3", "--number", "1",
                            "--repeat", "1", "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fleet_.Count("SELECT count(*) FROM records r JOIN tasks t ON t.id = r.task_id "
                         "WHERE r.status = 0 AND t.spec LIKE '%:float16-acc32'"),
            4)
      << r.output;
}

}  // namespace
}  // namespace tunefleet::testing
