// Issue 2's bad input: one clear line each, non-zero exit, bounded time, nothing recorded is touched. (Bad input
// about tuning logs and outputs is in bad_log_e2e_test.cc.)
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/local_fleet.h"
#include "tests/refused_in_one_line.h"

namespace tunefleet::testing {
namespace {

TEST(BadInputE2E, GivenAMalformedTaskSpecWeShouldGetOneLineAndExit2) {
  LocalFleet fleet;
  RunResult r = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,x,64", "--db", fleet.db()},
                          std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("gemm:64,x,64"), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

TEST(BadInputE2E, GivenAnUnknownXgbObjectiveWeShouldGetOneLineAndExit2) {
  LocalFleet fleet;
  RunResult r = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--xgb-objective", "lambdamart",
                           "--db", fleet.db()},
                          std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--xgb-objective: lambdamart not in {auto,rank,ndcg,reg}"), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

TEST(BadInputE2E, GivenANumberOutOfRangeEachToolShouldNameTheOptionInOneLineAndExit2) {
  // No tracker runs: every one of these must be refused before anything is contacted. An unsigned option takes
  // "-1" as a huge number unless it is checked first.
  LocalFleet fleet;
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  const std::string bin = BinDir();
  const std::string not_pem = fleet.dir() + "/roots.pem";
  { std::ofstream(not_pem) << "not a certificate\n"; }
  const std::vector<Case> cases = {
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--batch", "0"},
       "--batch: expected a whole number from 1 to 1024, got '0'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--batch", "-1"},
       "--batch: expected a whole number from 1 to 1024, got '-1'"},
      // A batch is one message to the tracker: a million configs passed its size limit.
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--batch", "1025"},
       "--batch: expected a whole number from 1 to 1024, got '1025'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--repeat", "0"},
       "--repeat: expected a number above 0"},
      // A job's timeout travels in whole milliseconds: below one it would read as no timeout.
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--timeout", "0.0005"},
       "--timeout: expected a number between 0.001 and"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", ""},
       "the tuning log's path is empty"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", "/dev/null"},
       "/dev/null: not a regular file (a tuning log is an SQLite file)"},
      // A whole-number option refuses what its type cannot hold, rather than clamp, round or wrap it.
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--batch", "99999999999999999999"},
       "--batch: expected a whole number from 1 to 1024, got '99999999999999999999'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--seed", "18446744073709551616"},
       "--seed: expected a whole number from 0 to 18446744073709551615, got '18446744073709551616'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--priority", "9999999999"},
       "--priority: expected a whole number from -2147483648 to 2147483647, got '9999999999'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--number", "2.5"},
       "--number: expected a whole number in decimal digits, got '2.5'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--min-repeat-ms", "99999999999"},
       "--min-repeat-ms: expected a whole number from 0 to 4294967295, got '99999999999'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--wait", "-5"},
       "--wait: expected a number between 0 and 3.1536e+07 (a year at most), got '-5'"},
      // A wait the clock cannot hold ("waiting up to -2147483648 s", then gave up at once, exit 1).
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--wait", "1e12"},
       "--wait: expected a number between 0 and 3.1536e+07 (a year at most), got '1e12'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--device-wait", "1e300"},
       "--device-wait: expected a number between 0 and 3.1536e+07 (a year at most), got '1e300'"},
      {{bin + "/tunefleet", "measure", "--rpc-key", "k", "--task", "gemm:64,64,64", "--wait", "1e12"},
       "--wait: expected a number between 0 and 3.1536e+07 (a year at most), got '1e12'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--time-budget", "0"},
       "--time-budget: expected a number above 0"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--xgb-prior-pool", "65"},
       "--xgb-prior-pool: expected a whole number from 0 to 64, got '65'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--time-budget", "1e300"},
       "--time-budget: expected a number above 0 and at most 3.1536e+07, got '1e300'"},
      {{bin + "/tunefleet", "simulate", "--db", fleet.db(), "--plan-size", "-1"},
       "--plan-size: expected a number above 0, got '-1'"},
      // 2147483647 seeds ran for ever without a word.
      {{bin + "/tunefleet", "simulate", "--db", fleet.db(), "--seeds", "2147483647"},
       "--seeds: expected a number between 1 and 10000 (more runs take hours and no longer move the median), got "
       "'2147483647'"},
      // A size_t or uint64_t option without a check of its own took "-1" and a value past 64 bits, clamped.
      {{bin + "/tunefleet", "simulate", "--db", fleet.db(), "--batch", "99999999999999999999"},
       "--batch: expected a whole number that fits in 64 bits, got '99999999999999999999'"},
      {{bin + "/tunefleet", "simulate", "--db", fleet.db(), "--transfer-trials", "-1"},
       "--transfer-trials: expected a whole number of 0 or more, got '-1'"},
      {{bin + "/tunefleet", "measure", "--rpc-key", "k", "--program", "/dev/zero"}, "/dev/zero: not a file"},
      {{bin + "/tunefleet", "measure", "--rpc-key", "k", "--task", "gemm:64,64,64", "--number", "0"},
       "--number: expected a number above 0"},
      {{bin + "/tunefleet", "query", "--rpc-tracker", fleet.address(), "--timeout", "-1"},
       "--timeout: expected a number above 0 and at most 3600, got '-1'"},
      {{bin + "/tunefleet-tracker", "--lease-ttl", "0"},
       "--lease-ttl: expected a number above 0 and at most 86400, got '0'"},
      {{bin + "/tunefleet-tracker", "--host", ""}, "tunefleet-tracker: error: --host: expected an address, got ''"},
      {{bin + "/tunefleet-tracker", "--host", "999.1.1.1"},
       "tunefleet-tracker: error: --host: expected an IPv4 address of four numbers from 0 to 255, got '999.1.1.1'"},
      {{bin + "/tunefleet-tracker", "--host", "0x7f.1"},
       "tunefleet-tracker: error: --host: expected an IPv4 address of four numbers from 0 to 255, got '0x7f.1'"},
      {{bin + "/tunefleet-tracker", "--host", "127.1"}, "got '127.1'"},
      {{bin + "/tunefleet-tracker", "--host", "010.0.0.1"}, "got '010.0.0.1'"},
      {{bin + "/tunefleet-tracker", "--host", "127.0.0.1:80"},
       "--host: expected an address without a port (the port goes in --port), got '127.0.0.1:80'"},
      {{bin + "/tunefleet-tracker", "--heartbeat-timeout", "1e-300"},
       "--heartbeat-timeout: expected a number between 5 and 86400 (agents send a heartbeat every 3 s), got '1e-300'"},
      {{bin + "/tunefleet-tracker", "--lease-ttl", "1e308"},
       "--lease-ttl: expected a number above 0 and at most 86400, got '1e308'"},
      {{bin + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "evil\n[info] forged line"},
       "tunefleet-agent: error: --key: the key holds a control character (byte 0x0a at 4)"},
      {{bin + "/tunefleet", "tune", "--rpc-key", std::string(200, 'k'), "--task", "gemm:64,64,64"},
       "--rpc-key: the key is 200 bytes long (at most 128)"},
      {{bin + "/tunefleet", "measure", "--rpc-key", " pocl", "--task", "gemm:64,64,64"},
       "--rpc-key: the key starts or ends with a space"},
      {{bin + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--platform", "-1"},
       "tunefleet-agent: error: --platform: expected a number of 0 or more, got '-1'"},
      {{bin + "/tunefleet-tracker", "--max-agents", "0"},
       "--max-agents: expected a whole number from 1 to 100000, got '0'"},
      // Said before the device is opened (its line came first).
      {{bin + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--tls-ca", not_pem},
       "tunefleet-agent: error: TLS root certificates '" + not_pem + "': no PEM certificate in it"},
      // As `query` says it (tune and measure exited 1, found when they connected).
      {{bin + "/tunefleet", "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:8,8,8",
        "--db", fleet.db(), "--tls-ca", not_pem},
       "tunefleet tune: error: TLS root certificates '" + not_pem + "': no PEM certificate in it"},
      {{bin + "/tunefleet", "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:8,8,8",
        "--tls-ca", not_pem},
       "tunefleet measure: error: TLS root certificates '" + not_pem + "': no PEM certificate in it"},
      // SQLite's in-memory database is no log (tune leased a device, then failed on it with exit 1).
      {{bin + "/tunefleet", "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:8,8,8",
        "--db", ":memory:"},
       "tunefleet tune: error: :memory: is SQLite's in-memory database"},
      {{bin + "/tunefleet", "import", "--db", ":memory:", not_pem},
       "tunefleet import: error: :memory: is SQLite's in-memory database"},
      {{bin + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--job-timeout", "99999999999"},
       "tunefleet-agent: error: --job-timeout: '99999999999' is not a value it takes (out of its range, or not a "
       "number of its kind)"},
      {{bin + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--platform", "99"},
       "tunefleet-agent: error: cannot open the OpenCL device: --platform 99 is out of range"},
  };
  for (const Case& c : cases) ExpectRefusedInOneLine(c.argv, c.says);
#if TUNEFLEET_BENCH_TOOLS  // built unless -DTUNEFLEET_BUILD_BENCHMARKS=OFF
  // The bench tool that counts spaces: a mistyped --device is no log to create.
  const std::vector<Case> bench_cases = {
      {{bin + "/tunefleet-space-count", "--device", fleet.dir() + "/h100", "gemm:8,8,8"},
       "tunefleet-space-count: error: --device " + fleet.dir() + "/h100: " + fleet.dir() + "/h100: no such tuning log"},
      {{bin + "/tunefleet-space-count", "--template", "nope", "gemm:8,8,8"}, "unknown template 'nope'"},
      {{bin + "/tunefleet-space-count"}, "give at least one task SPEC"},
      // Each element of a list option is checked as a single value is: these ran ("the strategy proposed 0
      // configs", or for ever).
      {{bin + "/tunefleet-model-speed", "--results", "99999999999999999999"},
       "tunefleet-model-speed: error: --results: expected a number between 1 and 500000 (each result is a config of "
       "the space, measured once), got '99999999999999999999'"},
      {{bin + "/tunefleet-model-speed", "--results", "64,18446744073709551615", "--plan", "4"},
       "--results: expected a number between 1 and 500000 (each result is a config of the space, measured once), got "
       "'18446744073709551615'"},
      {{bin + "/tunefleet-model-speed", "--plan", "4294967297"},
       "--plan: expected a number between 1 and 4096 (AutoTVM plans 64 at a time), got '4294967297'"},
      {{bin + "/tunefleet-model-speed", "--history", "99999999999999999999"},
       "--history: expected a whole number that fits in 64 bits, got '99999999999999999999'"},
      {{bin + "/tunefleet-model-speed", "--results", "99792", "--plan", "4"},
       "tunefleet-model-speed: error: --results 99792 and --plan 4 need 99796 distinct configs, but "
       "conv2d:1,48,28,28,48,3,3,1,1:float32 on conv2d_nchwc.image2d has 99792 valid ones"},
  };
  for (const Case& c : bench_cases) ExpectRefusedInOneLine(c.argv, c.says);
#endif
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/h100"));
  EXPECT_FALSE(std::filesystem::exists("/dev/null-journal"));
  // The token from the environment travels in a protobuf string too, which must be UTF-8.
  RunResult token = fleet.Cli({"query"}, std::chrono::seconds(30), true, {"TUNEFLEET_TOKEN=\xff\xfe"});
  EXPECT_EQ(token.exit_code, 2) << token.output;
  EXPECT_NE(token.output.find("TUNEFLEET_TOKEN is not valid UTF-8"), std::string::npos) << token.output;
  EXPECT_EQ(CountLines(token.output), 1) << token.output;
  // So do the daemons': a tracker whose token no client could send, an agent that could not register.
  RunResult tracker = testing::Run({BinDir() + "/tunefleet-tracker", "--host", "127.0.0.1", "--port", "0"},
                                   std::chrono::seconds(30), {"TUNEFLEET_TOKEN=\xff\xfe"});
  EXPECT_EQ(tracker.exit_code, 2) << tracker.output;
  EXPECT_NE(tracker.output.find("tunefleet-tracker: error: the token (--token or TUNEFLEET_TOKEN) is not valid UTF-8"),
            std::string::npos)
      << tracker.output;
  EXPECT_EQ(CountLines(tracker.output), 1) << tracker.output;
  ExpectRefusedInOneLine({BinDir() + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--token",
                          "\xc3\x28"},
                         "tunefleet-agent: error: the token (--token or TUNEFLEET_TOKEN) is not valid UTF-8");
  RunResult agent = testing::Run({BinDir() + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k"},
                                 std::chrono::seconds(30), {"TUNEFLEET_TOKEN=\xff\xfe"});
  EXPECT_EQ(agent.exit_code, 2) << agent.output;
  EXPECT_EQ(agent.output, "tunefleet-agent: error: the token (--token or TUNEFLEET_TOKEN) is not valid UTF-8\n");
}

// The runtime example read its workload as sscanf("gemm:%d,%d,%d") does, and the pack's Find as strtod does: each of
// these ran the 64^3 kernel. Said before the pack is read.
TEST(BadInputE2E, GivenAWorkloadNotWrittenAsTheTunerWritesItTheRuntimeExampleShouldRefuseIt) {
  LocalFleet fleet;
  const std::string example = BinDir() + "/tunefleet_runtime_example", pack = fleet.dir() + "/pack.json";
  ExpectRefusedInOneLine({example, pack, "gemm:064,64,64:float32"},
                         "gemm:064,64,64:float32: not a gemm:M,N,K:float32 workload (size '064' is not a non-negative "
                         "integer as the tuner writes it (digits only: no sign, space or leading zero))");
  ExpectRefusedInOneLine({example, pack, "gemm:64, 64,64"},
                         "gemm:64, 64,64: not a gemm:M,N,K:float32 workload (size ' 64' is not");
  ExpectRefusedInOneLine({example, pack, "gemm:64,64,64,batch=2:float32"},
                         "the example runs gemm:M,N,K workloads (three sizes, no named parameters)");
  // A pack path's escape sequence reached the terminal as it was.
  const std::string odd = fleet.dir() + "/bad\x1b[31mred.json";
  ExpectRefusedInOneLine({example, odd, "gemm:64,64,64"}, "/bad\\x1b[31mred.json: cannot open kernel pack");
  // A pack cut inside a kernel's source: the JSON library's message quoted the whole source read so far (4 kB).
  std::ofstream(pack) << R"({"format":1,"kernels":[{"source":")" << std::string(5000, 'x');
  RunResult cut = testing::Run({example, pack, "gemm:64,64,64"}, std::chrono::seconds(30));
  EXPECT_EQ(cut.exit_code, 2) << cut.output;
  EXPECT_NE(cut.output.find("not valid JSON: "), std::string::npos) << cut.output;
  EXPECT_EQ(CountLines(cut.output), 1) << cut.output;
  EXPECT_LT(cut.output.size(), 600u) << cut.output;
}

// Each exited 1, saying "cannot open the OpenCL device" of a lock file, or "(set --opencl-lib ...)" to one who had;
// --list-devices listed every platform whatever --platform said, and one out of range too.
TEST(BadInputE2E, GivenALibraryOrLockFileThatCannotBeOpenedOrAPlatformOutOfRangeTheAgentShouldSaySoAndExit2) {
  LocalFleet fleet;  // no tracker: each is refused before one is asked
  const std::string agent = BinDir() + "/tunefleet-agent", no_lib = fleet.dir() + "/none/libOpenCL.so";
  const std::string no_folder = fleet.dir() + "/none/device.lock";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{agent, "--tracker", fleet.address(), "--key", "k", "--opencl-lib", no_lib},
       "cannot load OpenCL from --opencl-lib " + no_lib + ": " + no_lib + ": cannot open shared object file"},
      {{agent, "--list-devices", "--opencl-lib", no_lib},
       "tunefleet-agent: error: cannot load OpenCL from --opencl-lib " + no_lib},
      {{agent, "--tracker", fleet.address(), "--key", "k", "--opencl-lib", ""},
       "tunefleet-agent: error: --opencl-lib: the value is empty"},
      {{agent, "--tracker", fleet.address(), "--key", "k", "--device-lock", no_folder},
       "tunefleet-agent: error: --device-lock: cannot open the device lock " + no_folder +
           ": No such file or directory (give a file path, or 'none')"},
      {{agent, "--tracker", fleet.address(), "--key", "k", "--device-lock", fleet.dir()},
       "tunefleet-agent: error: --device-lock: cannot open the device lock " + fleet.dir() + ": Is a directory"},
      {{agent, "--tracker", fleet.address(), "--key", "k", "--device-lock", ""},
       "tunefleet-agent: error: --device-lock: the value is empty"},
      {{agent, "--list-devices", "--platform", "99"}, "tunefleet-agent: error: --platform 99 is out of range: "},
  };
  for (const auto& [argv, says] : cases) ExpectRefusedInOneLine(argv, says);
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/none"));
  // The default lock in a $TMPDIR that does not exist: the configuration's fault, exit 2 (it exited 1 saying it
  // could not open the OpenCL device).
  RunResult tmp = testing::Run({agent, "--tracker", fleet.address(), "--key", "k"}, std::chrono::seconds(60),
                               {"TMPDIR=" + fleet.dir() + "/none"});
  EXPECT_EQ(tmp.exit_code, 2) << tmp.output;
  EXPECT_EQ(tmp.output.rfind("tunefleet-agent: error: --device-lock (default): cannot open the device lock " +
                                 fleet.dir() + "/none/",
                             0),
            0u)
      << tmp.output;
  EXPECT_EQ(CountLines(tmp.output), 1) << tmp.output;
  // The agent's environment variable is input too.
  RunResult r = testing::Run({agent, "--list-devices"}, std::chrono::seconds(30), {"TUNEFLEET_OPENCL_LIB=" + no_lib});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot load OpenCL from TUNEFLEET_OPENCL_LIB=" + no_lib), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

// An output that is a folder: make-model exited 1 with "cannot write the model", no reason given.
TEST(BadInputE2E, GivenAFolderOrNothingAsItsOutputMakeModelShouldSaySoAndExit2) {
  LocalFleet fleet;
  const std::string bin = BinDir() + "/tunefleet-make-model";
  ExpectRefusedInOneLine({bin, "resnet", "-o", fleet.dir()},
                         "tunefleet-make-model: error: -o " + fleet.dir() +
                             " is a directory: give the path of the .onnx file to write");
  ExpectRefusedInOneLine({bin, "resnet", "-o", ""}, "tunefleet-make-model: error: --output: the value is empty");
  // A folder that does not exist is a failure of the write, exit 1, with the system's reason.
  RunResult r = testing::Run({bin, "resnet", "-o", fleet.dir() + "/none/m.onnx"}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("/none/m.onnx: cannot write the model: No such file or directory"), std::string::npos)
      << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

TEST(BadInputE2E, GivenAnInputThatNeedsNoDeviceItShouldBeRefusedBeforeTheTrackerIsAsked) {
  LocalFleet fleet;  // no tracker: a refusal that came after asking one would say it cannot reach it
  const std::string bin = BinDir() + "/tunefleet";
  const std::string bad_task_file = fleet.dir() + "/tasks.txt";
  std::ofstream(bad_task_file) << "gemm:64,64,64 2\ngemm:32,32,32 x4\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--template",
        "nope", "--db", fleet.db()},
       "unknown template 'nope' (known: gemm.buffer, "},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--template",
        "conv2d_winograd", "--db", fleet.db()},
       "template conv2d_winograd cannot run gemm:64,64,64:float32 on any device"},
      // The reason of the op's templates, not of the other ops' ("not a pool task").
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "conv2d:1,3,8,8,4,9,9,1,0", "--db",
        fleet.db()},
       "no template can run conv2d:1,3,8,8,4,9,9,1,0:float32 on any device (conv2d_nchw.buffer: the kernel is "
       "larger than the padded input)"},
      // A task file: missing, or with a bad line, named by file and line.
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task-file", fleet.dir() + "/none.txt",
        "--db", fleet.db()},
       "tunefleet tune: error: " + fleet.dir() + "/none.txt: cannot read it (No such file or directory)"},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task-file", bad_task_file, "--db",
        fleet.db()},
       "tunefleet tune: error: " + bad_task_file + ":2: the count 'x4' is not a whole number from 1 to 1000000"},
      {{bin, "tasks", "--specs", "--json", "model.onnx"}, "tunefleet tasks: error: --json excludes --specs"},
      // Standard input closed: its number was gRPC's event fd by main, which read as EAGAIN ("exit 1").
      {{"/bin/sh", "-c",
        "exec '" + bin + "' tune --rpc-tracker " + fleet.address() + " --rpc-key k --task-file - --db '" + fleet.db() +
            "' <&-"},
       "tunefleet tune: error: --task-file -: standard input is closed (give the file's path instead)"},
      {{"/bin/sh", "-c", "exec '" + bin + "' import - --db '" + fleet.db() + "' <&-"},
       "tunefleet import: error: -: standard input is closed (give the file's path instead)"},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--tuner",
        "bayes", "--db", fleet.db()},
       "--tuner: bayes not in {xgb,ga,random,grid}"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--template",
        "gemm.buffer", "--config", "{\"bogus\": 1}"},
       "config JSON has unknown knob 'bogus'"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", "/dev/null", "--config",
        "{}"},
       "--config and --template apply to --task; a --program is measured as it is"},
      {{bin, "simulate", "--db", fleet.db(), "--baseline", "annealing"}, "--baseline: annealing not in {"},
      {{bin, "simulate", "--db", fleet.db(), "--xgb-objective", "bogus"}, "--xgb-objective: bogus not in {"},
      {{bin, "simulate", "--db", fleet.db(), "--xgb-ensemble", "0"},
       "--xgb-ensemble: expected a whole number from 1 to 64, got '0'"},
      {{bin, "simulate", "--db", fleet.db(), "--xgb-kappa", "nan"},
       "--xgb-kappa: expected a number of 0 or more, got 'nan'"},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--precision",
        "float16", "--db", fleet.db()},
       "--precision and --mixed-precision-ops apply to a model's tasks"},
      // It had no effect without a --precision that lowers layers, and said nothing.
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "model.onnx", "--mixed-precision-ops", "pool",
        "--db", fleet.db()},
       "--mixed-precision-ops names the layers that --precision lowers; give --precision float16 or float16-acc32"},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "model.onnx", "--precision", "fp32",
        "--mixed-precision-ops", "pool", "--db", fleet.db()},
       "--mixed-precision-ops names the layers that --precision lowers; give --precision float16 or float16-acc32"},
      {{bin, "tasks", "model.onnx", "--precision", "float32", "--mixed-precision-ops", "all"},
       "--mixed-precision-ops names the layers that --precision lowers; give --precision float16 or float16-acc32"},
      {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--input-shape",
        "x:1x3x32x32", "--db", fleet.db()},
       "--input-shape gives a model input's shape; a --task spec names its own sizes"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        "{\"MWG\":"},
       "--config is not valid JSON"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--template",
        "nope"},
       "unknown template 'nope'"},
      // Without --template too: the config is checked against the templates that can run the task.
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        "{\"MWG\": \"64\"}"},
       "knob 'MWG': \"64\" is not an integer"},
      // A config that no device can run (a tile four times the task): said before a device is waited for.
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        R"({"MWG":256,"NWG":64,"MDIMC":8,"NDIMC":8,"KWG":16,"KWI":2,"VWM":1,"VWN":1,"VWK":1,"SA":0,"SB":0,"DB":0})"},
       "config rejected before compiling, on any device: sizes: MWG is more than twice M"},
      // A knob given twice: the last one was taken, unsaid.
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        R"({"MWG":16,"MWG":32})"},
       "--config is JSON with the key \"MWG\" given twice in one object"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        std::string(1000, '[') + std::string(1000, ']')},
       "--config is JSON nested deeper than 64 levels"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "dwconv2d:1,8,8,8,3,3,1,1",
        "--template", "gemm.buffer"},
       "template gemm.buffer cannot run dwconv2d:1,8,8,8,3,3,1,1:float32 on any device"},
  };
  for (const auto& [argv, says] : cases) ExpectRefusedInOneLine(argv, says);
  EXPECT_FALSE(std::filesystem::exists(fleet.db())) << "a refused run left a log";
}

// `tune --input-shape NAME:DIMS model.onnx` took the model path for a second shape (and `--task X model.onnx` for a
// second spec): each option takes one value per use, repeatable, and the model is the model. No tracker runs: each
// line below comes from reading the model, so it proves the path reached it.
TEST(BadInputE2E, GivenAModelPathAfterInputShapeOrTaskTuneShouldTakeItAsTheModel) {
  LocalFleet fleet;
  const std::string bin = BinDir();
  const std::string model = fleet.dir() + "/r.onnx";
  RunResult made = testing::Run({bin + "/tunefleet-make-model", "resnet", "-o", model}, std::chrono::seconds(30));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::vector<std::string> tune = {bin + "/tunefleet", "tune", "--rpc-tracker", fleet.address(), "--rpc-key",
                                         "k", "--db", fleet.db()};
  auto with = [&tune](std::vector<std::string> more) {
    std::vector<std::string> argv = tune;
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  };
  ExpectRefusedInOneLine(with({"--input-shape", "image:1x3x32x32", model}),
                         model + ": --input-shape names 'image', which is not a graph input (inputs: data)");
  ExpectRefusedInOneLine(with({"--input-shape", "data:1x3x32x32", "--input-shape", "image:1x3x32x32", model}),
                         "--input-shape names 'image'");
  // Both specs are tasks (the second one's error is its own), and the path after them is the model.
  ExpectRefusedInOneLine(with({"--task", "gemm:8,8,8", "--task", "gemm:8,x,8", model}), "gemm:8,x,8");
  ExpectRefusedInOneLine(with({"--task", "gemm:8,8,8", "--task", "gemm:16,16,16", fleet.dir() + "/absent.onnx"}),
                         fleet.dir() + "/absent.onnx: cannot open");
  // `tasks` the same: it said "model is required".
  ExpectRefusedInOneLine({bin + "/tunefleet", "tasks", "--input-shape", "image:1x3x32x32", model},
                         model + ": --input-shape names 'image', which is not a graph input (inputs: data)");
  RunResult listed = testing::Run({bin + "/tunefleet", "tasks", "--input-shape", "data:2x3x32x32", model, "--specs"},
                                  std::chrono::seconds(30));
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("conv2d:2,3,32,32,"), std::string::npos) << listed.output;
}

// Options of the cost model with another search, and two transfer options that contradict each other, were accepted
// and ignored: the user believed they took effect.
TEST(BadInputE2E, GivenContradictoryTuneOptionsTheyShouldBeRefusedInOneLine) {
  const std::vector<std::string> tune = {BinDir() + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:8,8,8"};
  auto with = [&tune](std::vector<std::string> more) {
    std::vector<std::string> argv = tune;
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  };
  ExpectRefusedInOneLine(with({"--tuner", "random", "--xgb-objective", "rank"}),
                         "--xgb-objective applies to --tuner xgb (the cost model), not --tuner random");
  ExpectRefusedInOneLine(with({"--tuner", "grid", "--xgb-prior-pool", "0"}),
                         "--xgb-prior-pool applies to --tuner xgb (the cost model), not --tuner grid");
  ExpectRefusedInOneLine(with({"--no-transfer", "--transfer-once"}), "--no-transfer excludes --transfer-once");
  ExpectRefusedInOneLine(with({"--tuner", "random", "--no-transfer"}),
                         "--no-transfer applies to --tuner xgb (the cost model), not --tuner random");
  ExpectRefusedInOneLine(with({"--tuner", "ga", "--transfer-once"}),
                         "--transfer-once applies to --tuner xgb (the cost model), not --tuner ga");
}

// `measure --dump-program` said "no template can run X" and not why; `tune` (and `measure` on a device) say why.
TEST(BadInputE2E, GivenATaskNoTemplateRunsMeasureDumpProgramShouldSayWhy) {
  ExpectRefusedInOneLine({BinDir() + "/tunefleet", "measure", "--task", "conv2d:1,6,8,8,4,3,3,1,1,groups=4",
                          "--dump-program"},
                         "no template can run conv2d:1,6,8,8,4,3,3,1,1,groups=4:float32 on the generic device of "
                         "--dump-program (conv2d_nchw.buffer: channels are not divisible by groups)");
}

// A --config is dumped as given: one of 2048 work-items (PoCL allows 4096, and measured it) was refused against the
// generic device's 1024, so a recorded config could not be inspected.
TEST(BadInputE2E, GivenAConfigPastTheGenericDevicesLimitsMeasureDumpProgramShouldStillDumpIt) {
  RunResult r = testing::Run({BinDir() + "/tunefleet", "measure", "--task", "conv2d:1,16,32,32,32,3,3,1,1",
                              "--template", "conv2d_nchw.buffer", "--config",
                              R"({"auto_unroll_max_step":0,"split_rc":1,"tile_f":[1,1,32,1],"tile_rc":[8,2],)"
                              R"("tile_rx":[1,3],"tile_ry":[1,3],"tile_x":[1,1,8,4],"tile_y":[1,1,8,4],)"
                              R"("unroll_explicit":0})",
                              "--dump-program"},
                             std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json program = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(program.is_object()) << r.output;
  uint64_t items = 1;
  for (const auto& size : program["launches"][0]["localSize"]) items *= std::stoull(size.get<std::string>());
  EXPECT_EQ(items, 2048u) << r.output;
}

// An empty value read as the option not given: `--template ""` tuned with every template, `--precision ""` as
// float32. Each is refused before the tracker is asked; so is a program whose tolerance is NaN (every element would
// have been a wrong answer).
TEST(BadInputE2E, GivenAnEmptyValueOrANaNToleranceItShouldBeRefusedBeforeTheTrackerIsAsked) {
  LocalFleet fleet;  // no tracker
  const std::string bin = BinDir() + "/tunefleet", nan_rtol = fleet.dir() + "/nan-rtol.json";
  std::ofstream(nan_rtol) << R"({"rtol": "NaN", "launches": [{"entry": "k"}], "reference": {"launches": []}})";
  const std::string no_launch = fleet.dir() + "/empty-program.json";
  std::ofstream(no_launch) << "{}";
  // Programs the agent would refuse as malformed (status 2, exit 3 after a lease): refused here in one line, exit 2.
  auto program = [&](const std::string& name, const std::string& json) {
    const std::string path = fleet.dir() + "/" + name + ".json";
    std::ofstream(path) << json;
    return path;
  };
  const std::string launch = R"("launches": [{"entry": "k", "globalSize": [64], "args": [{"buffer": "c"}]}])";
  const std::string buffer_c = R"("buffers": [{"name": "c", "count": 64}])";
  const std::string no_output = program("no-output", R"({"outputBuffer": "out", )" + launch + "}");
  const std::string zero_size =
      program("zero-size", "{" + buffer_c + R"(, "launches": [{"entry": "k", "globalSize": [64, 0]}]})");
  const std::string twice =
      program("twice", R"({"buffers": [{"name": "c", "count": 64}, {"name": "c", "count": 8}], )" + launch + "}");
  const std::string unknown = program("unknown", "{" + launch + "}");
  const std::string bad_reference =
      program("bad-reference", "{" + buffer_c + R"(, "outputBuffer": "c", )" + launch + R"(, "reference": {)" + launch +
                                   "}}");
  // Faults the agent met only on the device (a reference of no output failed as "unknown buffer ''", a compare
  // count past the output as a wrong answer, an empty kernel name as a compile failure, lo > hi taken silently).
  const std::string no_entry = program("no-entry", "{" + buffer_c + R"(, "launches": [{"globalSize": [64]}]})");
  const std::string no_range = program(
      "no-range", R"({"buffers": [{"name": "c", "count": 64, "init": "RANDOM", "lo": 2, "hi": 1}], )" + launch + "}");
  // An init this agent does not know (a newer tuner's) filled zeros without a word.
  const std::string unknown_init =
      program("unknown-init", R"({"buffers": [{"name": "c", "count": 64, "init": 7}], )" + launch + "}");
  // So did a type it does not define (measured as float32).
  const std::string unknown_type =
      program("unknown-type", R"({"buffers": [{"name": "c", "count": 64, "type": 9}], )" + launch + "}");
  const std::string ref_c = R"(, "reference": {)" + buffer_c + ", " + launch;
  const std::string ref_no_output =
      program("ref-no-output", "{" + buffer_c + R"(, "outputBuffer": "c", )" + launch + ref_c + "}}");
  const std::string past_output = program("past-output", "{" + buffer_c + R"(, "outputBuffer": "c", )" + launch +
                                                             R"(, "compareCount": 65)" + ref_c +
                                                             R"(, "outputBuffer": "c"}})");
  const std::string sizes_differ =
      program("sizes-differ", R"({"buffers": [{"name": "c", "count": 32}], "outputBuffer": "c", )" + launch + ref_c +
                                  R"(, "outputBuffer": "c"}})");
  const std::vector<std::string> tune = {bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--db",
                                         fleet.db()};
  auto with = [](std::vector<std::string> argv, const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {with(tune, {"--task", "gemm:64,64,64", "--template", ""}), "--template: the value is empty"},
      {with(tune, {"--task", "gemm:64,64,64", "--trials", ""}), "--trials: the value is empty"},
      {with(tune, {"--task", ""}), "--task: the value is empty"},
      {with(tune, {"model.onnx", "--precision", ""}), "--precision: the value is empty"},
      {with(tune, {"model.onnx", "--mixed-precision-ops", ""}), "--mixed-precision-ops: the value is empty"},
      {{bin, "simulate", "--db", fleet.db(), "--task", ""}, "--task: the value is empty"},
      {{bin, "simulate", "--db", fleet.db(), "--trace", ""}, "--trace: the value is empty"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--config",
        ""},
       "--config: the value is empty"},
      {{bin, "tasks", ""}, "model: the value is empty"},
      {{bin, "best", "--db", fleet.db(), "--task", ""}, "--task: the value is empty"},
      // An empty token ("$SECRET" unset) is refused before the tracker is asked, as the tracker refuses one.
      {with(tune, {"--task", "gemm:64,64,64", "--token", ""}), "--token: the value is empty"},
      {{bin, "query", "--rpc-tracker", fleet.address(), "--token", ""}, "--token: the value is empty"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--token", ""},
       "--token: the value is empty"},
      {{BinDir() + "/tunefleet-agent", "--tracker", fleet.address(), "--key", "k", "--token", ""},
       "tunefleet-agent: error: --token: the value is empty"},
      {with(tune, {"--task", "gemm:64,64,64", "--trials", "010"}),
       "--trials '010': expected a positive number or 'all'"},
      // What an error quotes is shown escaped: one line, no terminal escape sent.
      {with(tune, {"--task", "gemm:64,64,64\n\x1b[2Jx"}),
       "gemm:64,64,64\\x0a\\x1b[2Jx: '64\\x0a\\x1b[2Jx' is not an integer"},
      {with(tune, {"--task", "gemm:8,8,8", "--template", "x\xc2\x9b" "31my"}), "unknown template 'x\\xc2\\x9b31my'"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", nan_rtol},
       nan_rtol + ": rtol nan is not a tolerance (a finite number of 0 or more)"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", no_launch},
       no_launch + ": the program has no timed launch: nothing to measure"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", no_output},
       no_output + ": output buffer 'out' is not declared"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", zero_size},
       zero_size + ": kernel 'k': global size 0"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", twice},
       twice + ": buffer 'c' is declared twice"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", unknown},
       unknown + ": kernel 'k': unknown buffer 'c'"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", bad_reference},
       bad_reference + ": the reference: kernel 'k': unknown buffer 'c'"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", fleet.dir() + "/none.json"},
       "cannot read " + fleet.dir() + "/none.json: No such file or directory"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", no_entry},
       no_entry + ": a launch names no kernel (its entry is empty)"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", no_range},
       no_range + ": buffer 'c': random between lo 2.000000 and hi 1.000000, which is no range"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", unknown_init},
       unknown_init + ": buffer 'c': init 7 is none this agent knows (zeros, random, nans)"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", unknown_type},
       unknown_type + ": buffer 'c': type 9 is none this agent knows (float32, float16, int32)"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", ref_no_output},
       ref_no_output + ": the reference: no output buffer to compare with"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", past_output},
       past_output + ": compare_count 65 exceeds the output (64) or the reference's (64)"},
      {{bin, "measure", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--program", sizes_differ},
       sizes_differ + ": the output has 32 elements, the reference's 64: give compare_count"},
  };
  for (const auto& [argv, says] : cases) ExpectRefusedInOneLine(argv, says);
  EXPECT_FALSE(std::filesystem::exists(fleet.db()));
}

TEST(BadInputE2E, GivenATrackerAddressThatIsNotHostAndPortOrAnUnknownCommandWeShouldGetOneLineAndExit2) {
  const std::string bin = BinDir();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{bin + "/tunefleet", "tune", "--rpc-tracker", "trackerhost", "--rpc-key", "k", "--task", "gemm:64,64,64"},
       "--rpc-tracker: expected host:port (e.g. 127.0.0.1:9190 or [::1]:9190), got 'trackerhost'"},
      {{bin + "/tunefleet", "query", "--rpc-tracker", "::1:9190"}, "--rpc-tracker: expected host:port"},
      {{bin + "/tunefleet", "measure", "--rpc-tracker", "h:70000", "--rpc-key", "k", "--task", "gemm:64,64,64"},
       "--rpc-tracker: expected host:port"},
      {{bin + "/tunefleet-agent", "--tracker", "trackerhost", "--key", "k"},
       "tunefleet-agent: error: --tracker: expected host:port"},
      // Taken, then failed at run time with exit 1 ("unparseable host:port", or a connection to port 1).
      {{bin + "/tunefleet", "query", "--rpc-tracker", "[127.0.0.1]:9190"},
       "--rpc-tracker: expected host:port (e.g. 127.0.0.1:9190 or [::1]:9190), got '[127.0.0.1]:9190'"},
      {{bin + "/tunefleet", "query", "--rpc-tracker", "127.0.0.1: 9190"}, "got '127.0.0.1: 9190'"},
      {{bin + "/tunefleet", "query", "--rpc-tracker", "127.0.0.1:+1"}, "got '127.0.0.1:+1'"},
      {{bin + "/tunefleet", "tuen", "--rpc-key", "k"}, "tunefleet: error: unknown command 'tuen'"},
      {{bin + "/tunefleet-agent", "--key", "k"},
       "tunefleet-agent: error: --tracker host:port and --key KEY are required"},
  };
  for (const auto& [argv, says] : cases) ExpectRefusedInOneLine(argv, says);
}

// An unknown option is what the rest of a command line's faults most often follow from: it is named first (`tune
// --bogus` said "--rpc-key is required"). An option given twice is said so (CLI11 said "--rpc-key: At Most 1 required
// but received 2"), a flag too.
TEST(BadInputE2E, GivenAnUnknownOptionOrAnOptionTwiceEachToolShouldSaySoFirstInOneLine) {
  const std::string bin = BinDir();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // Its prefix and its hint name the command (as its later errors do), whose own help has its options.
      {{bin + "/tunefleet", "tune", "--bogus"},
       "tunefleet tune: error: unknown option '--bogus' (see tunefleet tune --help)"},
      {{bin + "/tunefleet", "--bogus", "tune"}, "tunefleet: error: unknown option '--bogus' (see tunefleet --help)"},
      {{bin + "/tunefleet", "tune", "--task", "gemm:8,8,8", "--batch", "0", "--bogus"},
       "tunefleet tune: error: unknown option '--bogus'"},
      {{bin + "/tunefleet", "best", "--db", "x.db", "--jsno"}, "tunefleet best: error: unknown option '--jsno'"},
      {{bin + "/tunefleet", "tune", "a.onnx", "b.onnx", "--rpc-key", "k"},
       "tunefleet tune: error: unexpected argument 'b.onnx'"},
      {{bin + "/tunefleet-tracker", "--bogus", "--lease-ttl", "0"},
       "tunefleet-tracker: error: unknown option '--bogus'"},
      {{bin + "/tunefleet-agent", "--bogus"}, "tunefleet-agent: error: unknown option '--bogus'"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "a", "--rpc-key", "b", "--task", "gemm:8,8,8"},
       "tunefleet tune: error: --rpc-key is given 2 times; it takes one value"},
      {{bin + "/tunefleet-tracker", "--port", "1", "--port", "2"},
       "tunefleet-tracker: error: --port is given 2 times; it takes one value"},
      // A flag twice, as from two command lines pasted together, was taken silently.
      {{bin + "/tunefleet", "tasks", "--json", "--json", "x.onnx"},
       "tunefleet tasks: error: --json is given 2 times; it is a flag, given once"},
      {{bin + "/tunefleet", "tune", "--rpc-key", "k", "--task", "gemm:8,8,8", "--fresh", "--fresh"},
       "tunefleet tune: error: --fresh is given 2 times; it is a flag, given once"},
      {{bin + "/tunefleet-agent", "--list-devices", "--list-devices"},
       "tunefleet-agent: error: --list-devices is given 2 times; it is a flag, given once"},
  };
  for (const auto& [argv, says] : cases) {
    ExpectRefusedInOneLine(argv, says);
    EXPECT_EQ(testing::Run(argv, std::chrono::seconds(30)).output.find("required"), std::string::npos) << says;
  }
}

TEST(BadInputE2E, GivenNoTrackerListeningTheTunerShouldFailWithinBoundedTime) {
  LocalFleet fleet;  // no tracker started on its port
  auto start = std::chrono::steady_clock::now();
  RunResult r = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", fleet.db()},
                          std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(fleet.address()), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
  // No new, empty log is left behind (nor its lock folder)...
  EXPECT_FALSE(std::filesystem::exists(fleet.db())) << r.output;
  EXPECT_FALSE(std::filesystem::exists(fleet.db() + ".locks"));
  // ... and a log that was there stays as it was.
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  ASSERT_EQ(fleet.Cli({"import", "--db", fleet.db(), empty}, std::chrono::seconds(30), false).exit_code, 0);
  RunResult again = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", fleet.db()},
                              std::chrono::seconds(60));
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find(fleet.address()), std::string::npos) << again.output;
  EXPECT_TRUE(std::filesystem::exists(fleet.db()));
  EXPECT_EQ(fleet.Sql("SELECT count(*) FROM records").at(0).at(0), "0");  // the log's tables are there
  // An empty file given as the log (made for the run) stays empty: it became a log before the tracker was asked.
  const std::string touched = fleet.dir() + "/touched.db";
  { std::ofstream(touched).flush(); }
  RunResult third = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", touched},
                              std::chrono::seconds(60));
  EXPECT_EQ(third.exit_code, 1) << third.output;
  EXPECT_EQ(std::filesystem::file_size(touched), 0u) << third.output;
  EXPECT_FALSE(std::filesystem::exists(touched + ".locks"));
}

TEST(BadInputE2E, GivenNoAgentForTheKeyTheTunerShouldWaitThenSaySo) {
  LocalFleet fleet;
  fleet.StartTracker();
  RunResult r = fleet.Cli({"tune", "--rpc-key", "nobody", "--task", "gemm:64,64,64", "--db", fleet.db(), "--wait",
                           "2"},
                          std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nobody"), std::string::npos) << r.output;
  // The log is created once a device is leased: none is left behind (nor its lock folder).
  EXPECT_FALSE(std::filesystem::exists(fleet.db())) << r.output;
  EXPECT_FALSE(std::filesystem::exists(fleet.db() + ".locks"));
}

TEST(BadInputE2E, GivenAnUnwritableDatabasePathWeShouldSayWhichPath) {
  LocalFleet fleet;
  // A path under a regular file cannot be created, not even by root (CI runs as root, so modes would not do).
  std::string file = fleet.dir() + "/a-file";
  std::ofstream(file) << "x";
  std::string db = file + "/tune.db";
  RunResult r = fleet.Cli({"tune", "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", db},
                          std::chrono::seconds(30));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(db), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

}  // namespace
}  // namespace tunefleet::testing
