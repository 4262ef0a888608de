// Bad input about tuning logs and outputs, end to end: a --db that is no log (missing, empty, a FIFO, lacking a table,
// a leftover WAL the reader cannot fold in), an output that is the log itself or cannot be written, and logs whose
// contents no tunefleet writes. Each is refused in one line, and the log is left as it was. (The other bad input is in
// bad_input_e2e_test.cc.)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/leftover_wal_testing.h"
#include "tests/local_fleet.h"
#include "tests/refused_in_one_line.h"

namespace tunefleet::testing {
namespace {

// A FIFO as the log: the reading commands waited on it forever (tune and import refused it already).
TEST(BadInputE2E, GivenAFifoAsTheLogEveryReadingCommandShouldRefuseItInOneLine) {
  LocalFleet fleet;
  const std::string fifo = fleet.dir() + "/log.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string bin = BinDir() + "/tunefleet";
  const std::string says = fifo + ": not a regular file (a tuning log is an SQLite file)";
  ExpectRefusedInOneLine({bin, "best", "--db", fifo}, says);
  ExpectRefusedInOneLine({bin, "report", "--db", fifo, "-o", fleet.dir() + "/r.html"}, says);
  ExpectRefusedInOneLine({bin, "export", "--db", fifo, "--format", "csv", "-o", fleet.dir() + "/r.csv"}, says);
  ExpectRefusedInOneLine({bin, "simulate", "--db", fifo, "--task", "gemm:8,8,8"}, says);
}

// `tasks > /dev/full` (or `best --json > best.json` on a full disk) printed nothing and exited 0.
TEST(BadInputE2E, GivenAnOutputThatCannotBeWrittenTheCommandShouldFailInOneLine) {
  LocalFleet fleet;
  const std::string bin = BinDir();
  const std::string model = fleet.dir() + "/r.onnx";
  RunResult made = testing::Run({bin + "/tunefleet-make-model", "resnet", "-o", model}, std::chrono::seconds(30));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // --json and --specs said it without the cause: their note on standard error (operators left out) flushed
  // standard output first (std::cerr is tied to it), and the failure's errno was gone by the end.
  for (const std::string form : {"", " --json", " --specs"}) {
    for (const char* redirect : {"> /dev/full", ">&-"}) {
      RunResult r = testing::Run({"/bin/sh", "-c", "exec \"$0\" tasks \"$1\"" + form + " " + redirect,
                                  bin + "/tunefleet", model},
                                 std::chrono::seconds(30));
      EXPECT_EQ(r.exit_code, 1) << form << " " << redirect << ": " << r.output;
      // A closed stdout is /dev/full by then (common/standard_streams.h): both say the cause.
      EXPECT_NE(r.output.find("tunefleet tasks: error: standard output: write failed: No space left on device"),
                std::string::npos)
          << r.output;
      EXPECT_EQ(CountLines(r.output), 1) << r.output;
    }
  }
  RunResult fine = testing::Run({"/bin/sh", "-c", "exec \"$0\" tasks \"$1\" > /dev/null", bin + "/tunefleet", model},
                                std::chrono::seconds(30));
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
  // Commands that write their result themselves (`-o -`) say the failure once: the command's line, not a second
  // one of the binary's.
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  ASSERT_EQ(fleet.Cli({"import", "--db", fleet.db(), empty}, std::chrono::seconds(30), false).exit_code, 0);
  for (const std::string command : {"export --format csv -o -", "report -o -"}) {
    RunResult r = testing::Run({"/bin/sh", "-c", "exec \"$0\" " + command + " --db \"$1\" > /dev/full",
                                bin + "/tunefleet", fleet.db()},
                               std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_NE(r.output.find(": error: standard output: write failed"), std::string::npos) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
  }
}

// --help and --version of every binary printed nothing and exited 0 when their output could not be written; the
// tuner's line then lacked the cause.
TEST(BadInputE2E, GivenAnOutputThatCannotBeWrittenHelpAndVersionShouldFailInOneLine) {
  const std::string bin = BinDir();
  for (const std::string tool : {"tunefleet", "tunefleet-tracker", "tunefleet-agent"}) {
    for (const std::string args : {"--help", "--version"}) {
      RunResult r = testing::Run({"/bin/sh", "-c", "exec \"$0\" " + args + " > /dev/full", bin + "/" + tool},
                                 std::chrono::seconds(30));
      EXPECT_EQ(r.exit_code, 1) << tool << " " << args << ": " << r.output;
      EXPECT_EQ(r.output.rfind(tool + ": error: standard output: write failed: No space left on device", 0), 0u)
          << r.output;
      EXPECT_EQ(CountLines(r.output), 1) << r.output;
    }
  }
}

TEST(BadInputE2E, GivenALogPathWithNoFileTheReadingCommandsShouldSaySoAndCreateNothing) {
  LocalFleet fleet;
  const std::string missing = fleet.dir() + "/typo.db";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"best", "--db", missing},
                                             {"export", "--db", missing, "--format", "csv", "-o", fleet.dir() + "/x"},
                                             {"report", "--db", missing, "-o", fleet.dir() + "/r.html"},
                                             {"simulate", "--db", missing}}) {
    RunResult r = fleet.Cli(args, std::chrono::seconds(30), false);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find(missing + ": no such tuning log"), std::string::npos) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(missing)) << args[0] << " created " << missing;
  }
  // A mistyped folder is named: "no such tuning log" alone sent the user looking for the file.
  const std::string in_typo = fleet.dir() + "/runz/tune.db";
  RunResult no_folder = fleet.Cli({"best", "--db", in_typo}, std::chrono::seconds(30), false);
  EXPECT_EQ(no_folder.exit_code, 2) << no_folder.output;
  EXPECT_EQ(no_folder.output, "tunefleet best: error: " + in_typo + ": no such tuning log (its folder " + fleet.dir() +
                                  "/runz does not exist)\n");
  const std::string in_file = fleet.dir() + "/notes.txt/tune.db";
  std::ofstream(fleet.dir() + "/notes.txt") << "a file\n";
  RunResult file_folder = fleet.Cli({"best", "--db", in_file}, std::chrono::seconds(30), false);
  EXPECT_EQ(file_folder.exit_code, 2) << file_folder.output;
  EXPECT_EQ(file_folder.output, "tunefleet best: error: " + in_file + ": no such tuning log (" + fleet.dir() +
                                    "/notes.txt is a file, not a folder)\n");
  // An empty --db (a variable that was not set) is said as such, as tune and import say it (": no such tuning log").
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"best", "--db", ""}, {"report", "--db", "", "-o", fleet.dir() + "/r.html"}, {"simulate", "--db", ""}}) {
    RunResult r = fleet.Cli(args, std::chrono::seconds(30), false);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find("error: the tuning log's path is empty"), std::string::npos) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
  }
}

TEST(BadInputE2E, GivenAnOutputThatIsTheTuningLogItselfEachWriterShouldRefuseItAndKeepTheLog) {
  LocalFleet fleet;
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  RunResult made = fleet.Cli({"import", "--db", fleet.db(), empty}, std::chrono::seconds(30), false);
  ASSERT_EQ(made.exit_code, 0) << made.output;  // an empty tuning log
  const std::string db = fleet.db();
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"export", "--db", db, "--format", "csv", "-o", db}, "-o " + db + " is the tuning log itself"},
           {{"export", "--db", db, "--format", "kernel-pack", "-o", db}, "-o " + db + " is the tuning log itself"},
           {{"report", "--db", db, "-o", db}, "-o " + db + " is the tuning log itself"},
           {{"simulate", "--db", db, "--trace", db}, "--trace " + db + " is the tuning log itself"},
           {{"export", "--db", db, "--format", "csv", "-o", ""}, "-o is empty: give a file path"},
           {{"report", "--db", db, "-o", ""}, "-o is empty: give a file path"},
           {{"report", "--db", db, "-o", db + "-wal"}, "-o " + db + "-wal is SQLite's -wal file of the tuning log"},
           {{"export", "--db", db, "--format", "csv", "-o", db + "-journal"}, "is SQLite's -journal file"},
           // The command's own descriptor of the log (the first file it opens): the name of the log only once it is
           // open. An export through it replaced the log with the CSV.
           {{"export", "--db", db, "--format", "csv", "-o", "/dev/fd/3"}, "-o /dev/fd/3 is the tuning log itself"},
           {{"report", "--db", db, "-o", "/proc/self/fd/3"}, "-o /proc/self/fd/3 is the tuning log itself"},
           {{"simulate", "--db", db, "--trace", "/dev/fd/3"}, "--trace /dev/fd/3 is the tuning log itself"}}) {
    RunResult r = fleet.Cli(args, std::chrono::seconds(30), false);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
    EXPECT_EQ(fleet.Sql("SELECT count(*) FROM records").at(0).at(0), "0") << args[0] << " damaged the log";
  }
  // "-" is standard output, never a file of that name.
  RunResult r = fleet.Cli({"report", "--db", db, "-o", "-"}, std::chrono::seconds(30), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("<html"), std::string::npos) << r.output.substr(0, 200);
  EXPECT_FALSE(std::filesystem::exists("-"));
}

TEST(BadInputE2E, GivenALogFileThatHoldsNoTuningLogEachCommandShouldSaySoInOneLineAndLeaveItAsItIs) {
  LocalFleet fleet;  // no tracker: tune must refuse the log before asking one
  const std::string text = fleet.dir() + "/notes.txt", empty = fleet.dir() + "/empty.db";
  std::ofstream(text) << "not a database, but somebody's notes\n";
  { std::ofstream(empty).flush(); }
  const std::string bin = BinDir() + "/tunefleet";
  for (const auto& [argv, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", text},
            text + ": not a tunefleet tuning log"},
           {{bin, "import", "--db", text, empty}, text + ": not a tunefleet tuning log"},
           {{bin, "import", "--db", fleet.db(), fleet.dir()}, fleet.dir() + ": a directory, not an AutoTVM log"},
           {{bin, "import", "--db", fleet.db(), fleet.dir() + "/absent.log"},
            fleet.dir() + "/absent.log: no such file"},
           {{bin, "import", "--db", fleet.db(), "/dev/zero"}, "/dev/zero: not a file"},  // endless, no newline
           {{bin, "best", "--db", empty}, empty + ": no tuning log in it"},
           {{bin, "report", "--db", empty, "-o", fleet.dir() + "/r.html"}, empty + ": no tuning log in it"}}) {
    ExpectRefusedInOneLine(argv, says);
  }
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  std::ifstream in(text);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "not a database, but somebody's notes");
}

// A table or column dropped by hand or by another tool: every command stops at opening the log, in one line, exit 2
// (the reading commands had exited 1 at their first query, simulate 2, tune only once it had devices).
TEST(BadInputE2E, GivenALogThatLacksATableEachCommandShouldNameItInOneLineAndExit2) {
  LocalFleet fleet;  // no tracker: tune must refuse the log before asking one
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  const std::string db = fleet.db(), no_column = fleet.dir() + "/no-column.db";
  ASSERT_EQ(fleet.Cli({"import", "--db", db, empty}, std::chrono::seconds(30), false).exit_code, 0);
  ASSERT_EQ(fleet.Cli({"import", "--db", no_column, empty}, std::chrono::seconds(30), false).exit_code, 0);
  fleet.ExecSql("DROP TABLE records");
  fleet.ExecSql("ALTER TABLE tasks DROP COLUMN flops", no_column);
  const std::string bin = BinDir() + "/tunefleet", lacks = db + ": not a whole tunefleet tuning log: it lacks the ";
  for (const auto& [argv, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{bin, "best", "--db", db}, lacks + "table 'records'"},
           {{bin, "export", "--db", db, "--format", "csv", "-o", fleet.dir() + "/x.csv"}, lacks + "table 'records'"},
           {{bin, "report", "--db", db, "-o", fleet.dir() + "/r.html"}, lacks + "table 'records'"},
           {{bin, "simulate", "--db", db}, lacks + "table 'records'"},
           {{bin, "import", "--db", db, empty}, lacks + "table 'records'"},
           {{bin, "tune", "--rpc-tracker", fleet.address(), "--rpc-key", "k", "--task", "gemm:64,64,64", "--db", db},
            lacks + "table 'records'"},
           {{bin, "best", "--db", no_column}, no_column + ": not a whole tunefleet tuning log: it lacks the column "
                                                         "'tasks.flops'"}}) {
    ExpectRefusedInOneLine(argv, says);
  }
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/x.csv"));
}

// Imports one AutoTVM record (an NCHWc conv of 1 ms) into the fleet's log, as a log to damage.
void ImportOneRecord(LocalFleet& fleet) {
  const std::string lines = fleet.dir() + "/one.autotvm.log";
  std::ofstream(lines)
      << R"({"input": ["opencl -keys=opencl,gpu -max_num_threads=256 -texture_spatial_limit=16384", )"
         R"("conv2d_nchwc.image2d", [["TENSOR", [1, 4, 8, 8], "float32"], ["TENSOR", [4, 4, 3, 3], "float32"], )"
         R"([1, 1], [1, 1, 1, 1], [1, 1], "float32"], {}], "config": {"index": 0, "code_hash": null, "entity": )"
         R"([["tile_fc", "sp", [-1, 1, 1]], ["tile_y", "sp", [-1, 1, 1]], ["tile_x", "sp", [-1, 1, 1]], )"
         R"(["tile_rcc", "sp", [-1, 1]], ["tile_ry", "sp", [-1, 1]], ["tile_rx", "sp", [-1, 1]], )"
         R"(["auto_unroll_max_step", "ot", 0], ["unroll_explicit", "ot", 0]]}, )"
         R"("result": [[0.001], 0, 1.0, 1700000000.0], "version": 0.2})" "\n";
  RunResult imported = fleet.Cli({"import", "--db", fleet.db(), lines}, std::chrono::seconds(30), false);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
}

// Overwrites the root page of the log's table or index `name` with garbage, as a damaged disk or copy would leave it.
void DamageRootPage(LocalFleet& fleet, const std::string& name) {
  const auto root = fleet.Sql("SELECT rootpage FROM sqlite_master WHERE name = '" + name + "'");
  const auto page_size = fleet.Sql("PRAGMA page_size");
  ASSERT_EQ(root.size(), 1u);
  ASSERT_EQ(page_size.size(), 1u);
  const long size = std::stol(page_size[0][0]);
  std::fstream f(fleet.db(), std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((std::stol(root[0][0]) - 1) * size);
  const std::string garbage(static_cast<size_t>(size), '\x5a');
  f.write(garbage.data(), size);
  ASSERT_TRUE(f.good());
}

// A log whose records' page is damaged after it was written: each reading command says so in one line, naming the
// log once (report and simulate said "LOG: LOG: database disk image is malformed"), and leaves the file as it was.
TEST(BadInputE2E, GivenALogWithADamagedPageEachReadingCommandShouldNameTheLogOnceInOneLine) {
  LocalFleet fleet;
  ImportOneRecord(fleet);
  ASSERT_NO_FATAL_FAILURE(DamageRootPage(fleet, "records"));
  const std::string bin = BinDir() + "/tunefleet", db = fleet.db();
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {bin, "best", "--db", db},
           {bin, "report", "--db", db, "-o", fleet.dir() + "/r.html"},
           {bin, "export", "--db", db, "--format", "csv", "-o", fleet.dir() + "/x.csv"},
           {bin, "simulate", "--db", db}}) {
    RunResult r = testing::Run(argv, std::chrono::seconds(30));
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
    EXPECT_NE(r.output.find(db + ": "), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(db + ": " + db), std::string::npos) << r.output;
    // SQLite's words alone said nothing of what to do.
    EXPECT_NE(r.output.find("database disk image is malformed (the log is damaged: give a copy of it from before "
                            "the damage"),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/r.html"));
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/x.csv"));
}

// A log whose index of records is damaged: the reading commands may not use that page, but a tune or an import
// would fail at the first record that touches it, a tune after leasing a device and measuring. Both refuse the log
// at once, before the tracker is asked (none listens at its address here: that would be said instead), in one line,
// and leave the file as it was: the log here is in rollback-journal mode (as a copy made by another tool may be),
// which a check done after the open's switch to WAL changed before refusing it.
TEST(BadInputE2E, GivenALogWithADamagedIndexTuneAndImportShouldRefuseItBeforeAskingTheTracker) {
  LocalFleet fleet;  // no tracker
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));
  fleet.ExecSql("PRAGMA journal_mode = DELETE");
  ASSERT_EQ(fleet.Sql("PRAGMA journal_mode"), (std::vector<std::vector<std::string>>{{"delete"}}));
  ASSERT_NO_FATAL_FAILURE(DamageRootPage(fleet, "records_by_workload"));
  auto bytes = [&] {
    std::ifstream f(fleet.db(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string before = bytes(), bin = BinDir() + "/tunefleet", db = fleet.db();
  const std::string says = db + ": the log is damaged (SQLite's quick_check: ";
  ExpectRefusedInOneLine({bin, "tune", "--task", "gemm:8,8,8", "--rpc-tracker", "127.0.0.1:1", "--rpc-key", "k",
                          "--trials", "2", "--db", db},
                         says);
  ExpectRefusedInOneLine({bin, "import", "--db", db, fleet.dir() + "/one.autotvm.log"}, says);
  EXPECT_EQ(bytes(), before);
}

// An import into a new log whose only line is refused: it left an empty tuning log behind (a bad --db is still said
// before the file is read); one that adds a record creates the log, and says only its summary line.
TEST(BadInputE2E, GivenANewLogAndAnImportWhoseOnlyLineIsRefusedNoLogShouldBeLeft) {
  LocalFleet fleet;  // no tracker
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));  // writes one.autotvm.log, a record of 1 ms, into a new log
  EXPECT_TRUE(std::filesystem::exists(fleet.db()));
  std::string line;
  std::getline(std::ifstream(fleet.dir() + "/one.autotvm.log"), line);
  ASSERT_NE(line.find("[0.001]"), std::string::npos) << line;
  const std::string neg = fleet.dir() + "/neg.log", db = fleet.dir() + "/new.db";
  std::ofstream(neg) << line.replace(line.find("[0.001]"), 7, "[-1]") << "\n";
  const std::string bin = BinDir() + "/tunefleet";
  ExpectRefusedInOneLine({bin, "import", "--db", db, neg},
                         neg + ":1: cost -1 of a result without error is not a time between 1 ps and 10^6 s");
  EXPECT_FALSE(std::filesystem::exists(db));
  EXPECT_FALSE(std::filesystem::exists(db + ".locks"));
  // A --db where no log can be created is said first, not the file's line.
  const std::string nowhere = fleet.dir() + "/no-such-folder/new.db";
  RunResult r = testing::Run({bin, "import", "--db", nowhere, neg}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(nowhere), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cost -1"), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
  // The good line into a new log: the log, and its summary line. The record is PoCL's (a work-group of 1), which
  // the GPU target of the AutoTVM export cannot run: a note says so, and the summary counts it.
  RunResult good =
      testing::Run({bin, "import", "--db", db, fleet.dir() + "/one.autotvm.log"}, std::chrono::seconds(30));
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("one.autotvm.log:1: imported, but conv2d:1,4,8,8,4,3,3,1,1:float32 "
                             "[conv2d_nchwc.image2d] on target '"),
            std::string::npos)
      << good.output;
  EXPECT_TRUE(good.output.ends_with("tunefleet import: 1 records added to " + db +
                                    ", of which 1 its target cannot run (best passes them over), 0 already present, "
                                    "0 skipped\n"))
      << good.output;
  EXPECT_EQ(CountLines(good.output), 2) << good.output;
  EXPECT_TRUE(std::filesystem::exists(db));
}

// `import -` reads standard input (an AutoTVM log piped in from another tool), its notes naming the input.
TEST(BadInputE2E, GivenAnAutotvmLogPipedIntoImportDashItsRecordsShouldBeAdded) {
  LocalFleet fleet;  // no tracker
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));  // writes one.autotvm.log
  const std::string copy = fleet.dir() + "/copy.db";
  RunResult r = testing::Run({"/bin/sh", "-c", "cat \"$1\" | \"$0\" import - --db \"$2\"", BinDir() + "/tunefleet",
                              fleet.dir() + "/one.autotvm.log", copy},
                             std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("standard input:1: imported, but conv2d:1,4,8,8,4,3,3,1,1:float32"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("tunefleet import: 1 records added to " + copy), std::string::npos) << r.output;
  EXPECT_EQ(fleet.Count("SELECT count(*) FROM records", copy), 1);
}

// A log of two device models holds two kernel packs: `-o pack.json` made a folder of that name; `-` and a file that
// exists are refused too.
TEST(BadInputE2E, GivenALogOfTwoDevicesTheKernelPackExportShouldWantAFolder) {
  LocalFleet fleet;  // no tracker
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));  // writes one.autotvm.log
  std::string line;
  std::getline(std::ifstream(fleet.dir() + "/one.autotvm.log"), line);
  const std::string tiles = R"(["tile_y", "sp", [-1, 1, 1]], ["tile_x", "sp", [-1, 1, 1]])";
  ASSERT_NE(line.find(tiles), std::string::npos) << line;
  line.replace(line.find(tiles), tiles.size(), R"(["tile_y", "sp", [-1, 2, 4]], ["tile_x", "sp", [-1, 1, 8]])");
  // Another device: the target names another thread limit, and its measurement is its own (the same costs at the
  // same time would be one measurement filed twice, which the import adds once).
  std::string other = line;
  other.replace(other.find("-max_num_threads=256"), 20, "-max_num_threads=512");
  ASSERT_NE(other.find("[0.001]"), std::string::npos) << other;
  other.replace(other.find("[0.001]"), 7, "[0.002]");
  const std::string lines = fleet.dir() + "/two.autotvm.log", db = fleet.dir() + "/two.db";
  std::ofstream(lines) << line << "\n" << other << "\n";
  RunResult imported = fleet.Cli({"import", "--db", db, lines}, std::chrono::seconds(30), false);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  const std::string file = fleet.dir() + "/pack.json", existing = fleet.dir() + "/packs.out";
  std::ofstream(existing) << "before\n";  // a file that exists, of any name: it failed with "cannot create directory"
  for (const std::string& out : {file, std::string("-"), existing}) {
    RunResult r = fleet.Cli({"export", "--db", db, "--format", "kernel-pack", "-o", out}, std::chrono::seconds(30),
                            false);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("the log holds 2 device models, one kernel pack each: give -o FOLDER"), std::string::npos)
        << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_EQ(std::filesystem::file_size(existing), 7u);
  const std::string folder = fleet.dir() + "/packs";
  RunResult r = fleet.Cli({"export", "--db", db, "--format", "kernel-pack", "-o", folder}, std::chrono::seconds(30),
                          false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder), std::filesystem::directory_iterator{}), 2);
}

// A config nested 200,000 levels deep in the log: quoted in a message, it overflowed the stack (SIGSEGV).
TEST(BadInputE2E, GivenAConfigNestedDeepInTheLogTheReadingCommandsShouldPassItOver) {
  LocalFleet fleet;
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));
  fleet.ExecSql("UPDATE records SET config = '{\"tile_fc\":' || replace(hex(zeroblob(200000)), '00', '[') || "
                "replace(hex(zeroblob(200000)), '00', ']') || '}'");
  // Each says what it left out; `best` then lists nothing, and the exports have nothing to write, which is their
  // error (the AutoTVM export wrote an empty file and exited 0).
  for (const auto& [args, exit_code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"best", "--db", fleet.db()}, 0},
           {{"export", "--db", fleet.db(), "--format", "autotvm", "-o", fleet.dir() + "/out.log"}, 1},
           {{"export", "--db", fleet.db(), "--format", "kernel-pack", "-o", fleet.dir() + "/packs"}, 1}}) {
    RunResult r = fleet.Cli(args, std::chrono::seconds(60), false);
    EXPECT_EQ(r.exit_code, exit_code) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find("JSON nested deeper than 64 levels"), std::string::npos) << args[0] << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(fleet.dir() + "/out.log"));
}

// A unit whose every config failed (a template the device cannot run) had no row in `best` and no word either: each
// such unit is named on stderr with its count of failures; the table (stdout) stays the successes'.
TEST(BadInputE2E, GivenAUnitWhoseEveryResultFailedBestShouldNameIt) {
  LocalFleet fleet;
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));
  fleet.ExecSql("UPDATE records SET status = 4, costs = '[]', mean_cost = 0");
  const std::string spec = fleet.Sql("SELECT spec FROM tasks").at(0).at(0);
  RunResult r = fleet.Cli({"best", "--db", fleet.db()}, std::chrono::seconds(30), false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tunefleet best: " + spec + " (conv2d_nchwc.image2d) on "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": no successful result, 1 failed (their messages: tunefleet report"), std::string::npos)
      << r.output;
  RunResult report = fleet.Cli({"report", "--db", fleet.db(), "-o", fleet.dir() + "/r.html"}, std::chrono::seconds(30),
                               false);
  EXPECT_EQ(report.output, "wrote " + fleet.dir() + "/r.html: 1 series, 1 record, 1 device\n");  // "1 devices"
  RunResult same = fleet.Cli({"best", "--db", fleet.db(), "--task", spec}, std::chrono::seconds(30), false);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find(": no successful result, 1 failed"), std::string::npos) << same.output;
  // A task the log does not hold is said as such (it read "no successful records for gemm:8,8,8:float32", exit 0).
  RunResult other = fleet.Cli({"best", "--db", fleet.db(), "--task", "gemm:8,8,8"}, std::chrono::seconds(30), false);
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_EQ(other.output, "tunefleet best: error: " + fleet.db() + ": task 'gemm:8,8,8:float32' is not in the log "
                          "(tunefleet best --db " + fleet.db() + " lists the tasks it holds)\n");
}

// A log of no records: the AutoTVM export wrote an empty file (tvmc would take it as tuned with nothing) and exited
// 0; it now fails as the kernel pack's does, and a file that was there is left as it was.
TEST(BadInputE2E, GivenALogOfNoRecordsBothExportsShouldSaySoAndWriteNothing) {
  LocalFleet fleet;
  const std::string empty = fleet.dir() + "/none.autotvm.log";
  { std::ofstream(empty).flush(); }
  ASSERT_EQ(fleet.Cli({"import", "--db", fleet.db(), empty}, std::chrono::seconds(30), false).exit_code, 0);
  const std::string out = fleet.dir() + "/out.log";
  std::ofstream(out) << "before\n";
  for (const std::string format : {"autotvm", "kernel-pack"}) {
    RunResult r = fleet.Cli({"export", "--db", fleet.db(), "--format", format, "-o", out}, std::chrono::seconds(30),
                            false);
    EXPECT_EQ(r.exit_code, 1) << format << ": " << r.output;
    EXPECT_NE(r.output.find(fleet.db() + ": no"), std::string::npos) << format << ": " << r.output;
    EXPECT_EQ(CountLines(r.output), 1) << format << ": " << r.output;
    std::ifstream kept(out);
    std::string line;
    EXPECT_TRUE(std::getline(kept, line) && line == "before") << format << ": " << line;
  }
}

// The path of `name` found through $PATH, or "".
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// A log whose -wal file holds a transaction its file lacks, with no -shm beside it: what a `tune` killed with -9
// leaves. Its one record's mean cost is 1 ms in the file and 0.5 ms with the -wal's transaction.
void LeaveWalBehind(LocalFleet& fleet) {
  ASSERT_NO_FATAL_FAILURE(ImportOneRecord(fleet));
  ASSERT_EQ(fleet.Count("SELECT count(*) FROM records"), 1);
  int changed = 0;
  ASSERT_NO_FATAL_FAILURE(
      WriteIntoLeftoverWal(fleet.db(), "UPDATE records SET costs = '[0.0005]', mean_cost = 0.0005", &changed));
  ASSERT_EQ(changed, 1);
}

// A log in a folder its reader cannot write, with a -wal file that a killed writer left: SQLite reads the -wal only
// through a -shm file, which it cannot create there. The reading commands said "cannot open for writing (read-only
// file or directory)", though they write nothing; they say the real cause, and leave the files as they are. The
// reader is the unprivileged user 65534 (through setpriv) when the test runs as root, who writes any folder.
TEST(BadInputE2E, GivenALeftoverWalInAFolderTheReaderCannotWriteTheReadingCommandsShouldSayWhy) {
  LocalFleet fleet;
  LeaveWalBehind(fleet);
  const std::string db = fleet.db(), folder = fleet.dir(), bin = BinDir() + "/tunefleet";
  const auto wal_bytes = std::filesystem::file_size(db + "-wal");
  std::vector<std::string> as_reader;
  if (::geteuid() == 0) {
    const std::string setpriv = OnPath("setpriv");
    if (setpriv.empty()) GTEST_SKIP() << "root writes any folder, and there is no setpriv to read as another user";
    as_reader = {setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  ASSERT_EQ(::chmod(folder.c_str(), ::geteuid() == 0 ? 0755 : 0555), 0);
  auto reading = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = as_reader;
    argv.push_back(bin);
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  const std::string says = db + ": cannot be read here: its write-ahead file " + db + "-wal holds transactions not " +
                           "yet in it, and SQLite reads them only through a " + db + "-shm file, which it cannot " +
                           "create: " + folder + " is not writable by this user";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"best", "--db", db},
           {"report", "--db", db, "-o", "-"},
           {"export", "--db", db, "--format", "csv", "-o", "-"}}) {
    ExpectRefusedInOneLine(reading(args), says);
  }
  EXPECT_FALSE(std::filesystem::exists(db + "-shm"));
  EXPECT_EQ(std::filesystem::file_size(db + "-wal"), wal_bytes);
  // What the line says to do: the owner's reading command folds the -wal into the log; then it reads, -wal's
  // transaction included.
  ASSERT_EQ(::chmod(folder.c_str(), 0755), 0);
  RunResult owner = fleet.Cli({"best", "--db", db, "--json"}, std::chrono::seconds(30), false);
  ASSERT_EQ(owner.exit_code, 0) << owner.output;
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  }
  RunResult reader = testing::Run(reading({"best", "--db", db, "--json"}), std::chrono::seconds(30));
  ::chmod(folder.c_str(), 0755);
  EXPECT_EQ(reader.exit_code, 0) << reader.output;
  EXPECT_EQ(reader.output, owner.output);
  EXPECT_EQ(fleet.Sql("SELECT mean_cost FROM records").at(0).at(0), "0.0005");
}

}  // namespace
}  // namespace tunefleet::testing
