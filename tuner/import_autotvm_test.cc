#include "tuner/import_autotvm.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tuner/deferred_log.h"
#include "tuner/export_autotvm_workload.h"
#include "tuner/export_kernel_pack.h"
#include "tuner/export_testing.h"

namespace tunefleet {
namespace {

class ImportAutotvmTest : public ::testing::Test {
 protected:
  std::unique_ptr<TuningLog> Open(const std::string& name) {
    auto log = TuningLog::Open(dir_.File(name));
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return std::move(log).value();
  }
  static std::string Export(TuningLog& log) {
    std::ostringstream out, notes;
    EXPECT_TRUE(ExportAutotvm(log, {false, {}}, out, notes).ok());
    return out.str();
  }
  // The AutoTVM line of one measured record (cost `seconds`) of an Adreno conv2d, exported from first.db.
  std::string ExportedConvRecord(double seconds) {
    auto first = Open("first.db");
    AddTestRecord(*first, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d",
                  ConvConfig(), 0, {seconds}, 1700000000);
    return Export(*first);
  }
  // One record of a registered template's config `c`, in `space` (made for `device`), measured at 0.5 ms.
  static void AddRegisteredRecord(TuningLog& log, const proto::DeviceInfo& device, const Task& task,
                                  const Template& t, const Space& space, const Config& c) {
    RecordRow r;
    r.device_id = log.UpsertDevice(device).value();
    r.task_id = log.UpsertTask(task.ToSpec(), task.op, "{}", t.Flops(task)).value();
    r.template_id = log.UpsertTemplate(t.name(), t.version()).value();
    r.config_index = space.IndexOf(c);
    r.config = space.ToJson(c).dump();
    r.costs = {0.0005};
    r.mean_cost = 0.0005;
    r.timestamp = 1700000000;
    ASSERT_TRUE(log.AddRecord(r).ok());
  }
  Result<ImportCounts> Import(const std::string& text, TuningLog& log) {
    std::istringstream in(text);
    return ImportAutotvm(in, "tvm.log", log, {}, notes_);
  }

  TempDir dir_;
  std::ostringstream notes_;
};

TEST_F(ImportAutotvmTest, GivenAnExportedLog_ImportThenExportShouldGiveTheSameLines) {
  auto first = Open("first.db");
  AddTestRecord(*first, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d",
                ConvConfig(), 0, {0.00025, 0.0003}, 1700000000.25);
  AddTestRecord(*first, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d",
                ConvConfig(), 5, {}, 1700000001);
  AddTestRecord(*first, AdrenoDevice(), "dwconv2d:1,32,28,28,3,3,2,1:float16", "depthwise_conv2d_nchwc.image2d",
                {{"tile_fc", {2, 1, 4}}, {"tile_y", {7, 1, 2}}, {"tile_x", {1, 2, 7}}, {"tile_ry", {1, 3}},
                 {"tile_rx", {3, 1}}, {"auto_unroll_max_step", 0}, {"unroll_explicit", 0}},
                0, {0.0001}, 1700000002);
  std::string lines = Export(*first);
  ASSERT_EQ(std::count(lines.begin(), lines.end(), '\n'), 3);

  auto second = Open("second.db");
  auto counts = Import(lines, *second);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 3u);
  EXPECT_EQ(Export(*second), lines);
}

// An AutoTVM target names max_num_threads only, not the size per dimension: the imported device's kernels still go
// into its kernel pack (they were refused as "work-group size 20 in dimension 2 exceeds the device maximum 1").
TEST_F(ImportAutotvmTest, GivenImportedRecords_TheirKernelPackShouldHoldTheirKernels) {
  auto first = Open("first.db");
  proto::DeviceInfo adreno = AdrenoDevice();  // as its agent reports it
  for (int i = 0; i < 3; ++i) adreno.add_max_work_item_sizes(1024);
  const Template* t = FindTemplate("depthwise_conv2d_nchwc.image2d");
  ASSERT_NE(t, nullptr);
  Task task = Task::Parse("dwconv2d:1,32,28,28,3,3,2,1:float16").value();
  Space space = t->MakeSpace(task, DeviceLimits::From(adreno)).value();
  // A config whose work-group spans the third dimension.
  std::optional<Config> wide;
  space.ForEachValid([&](uint64_t i) {
    Config c = space.FromIndex(i);
    Result<proto::KernelProgram> program = t->Generate(task, space, c);
    if (!program.ok()) return true;
    for (const auto& launch : program->launches()) {
      const auto& local = launch.local_size();
      if (launch.phase() == proto::KernelLaunch::TIMED && local.size() == 3 && local[2] > 1) wide = c;
    }
    return !wide.has_value();
  });
  ASSERT_TRUE(wide.has_value());
  ASSERT_NO_FATAL_FAILURE(AddRegisteredRecord(*first, adreno, task, *t, space, *wide));
  std::ostringstream lines, notes;
  ASSERT_TRUE(ExportAutotvm(*first, {false, {}}, lines, notes).ok());
  auto second = Open("second.db");
  std::istringstream in(lines.str());
  auto counts = ImportAutotvm(in, "tvm.log", *second, {}, notes_);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  ASSERT_EQ(counts->added, 1u);
  auto packs = BuildKernelPacks(*second, {}, notes);
  ASSERT_TRUE(packs.ok()) << packs.status().ToString() << notes.str();
  ASSERT_EQ(packs->size(), 1u);
  EXPECT_EQ((*packs)[0].pack["kernels"].size(), 1u) << notes.str();
}

TEST_F(ImportAutotvmTest, GivenAnExportedLogOfAnotherDeviceWithImages_ImportThenExportShouldGiveTheSameLines) {
  proto::DeviceInfo pocl;  // not an Adreno: its target had no texture limit, and the import refused the records
  pocl.set_vendor("AuthenticAMD");
  pocl.set_name("pthread-skylake-avx512-AMD EPYC");
  pocl.set_device_type("CPU");
  pocl.set_max_work_group_size(4096);
  pocl.set_image_support(true);
  pocl.set_image2d_max_width(65536);
  pocl.set_image2d_max_height(65536);
  pocl.set_fingerprint("pocl-cpu");
  auto first = Open("first.db");
  AddTestRecord(*first, pocl, "conv2d:1,32,16,16,32,3,3,1,1:float32", "conv2d_nchwc.image2d", ConvConfig(), 0,
                {0.00025}, 1700000000);
  const std::string lines = Export(*first);
  ASSERT_NE(lines.find("-texture_spatial_limit=65536"), std::string::npos) << lines;
  auto second = Open("second.db");
  auto counts = Import(lines, *second);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(Export(*second), lines);
}

TEST_F(ImportAutotvmTest, GivenTheSameFileTwice_WeShouldNotDuplicateRecords) {
  std::string lines = ExportedConvRecord(0.001);
  auto second = Open("second.db");
  ASSERT_TRUE(Import(lines, *second).ok());
  auto again = Import(lines, *second);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->added, 0u);
  EXPECT_EQ(again->duplicate, 1u);
  EXPECT_EQ(second->Records(0, 0, 0).value().size(), 1u);
}

// A log's own export imported back into it adds nothing: the imported device is another row (named by the target), but
// a measurement is its config, time, status and costs. It added every record again, and the next export wrote each
// line twice.
TEST_F(ImportAutotvmTest, GivenALogsOwnExport_ImportingItBackShouldAddNothing) {
  auto first = Open("first.db");
  AddTestRecord(*first, AdrenoDevice(), "conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d",
                ConvConfig(), 0, {0.00025}, 1700000000);
  const std::string lines = Export(*first);
  auto counts = Import(lines, *first);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 0u);
  EXPECT_EQ(counts->duplicate, 1u);
  EXPECT_EQ(first->Records(0, 0, 0).value().size(), 1u);
  EXPECT_EQ(Export(*first), lines);
}

// A config the target's device cannot run by this build's rules (a CPU's records exported under a GPU target) is
// imported, and counted and noted: `best` and the exports pass it over, which the import had not said.
TEST_F(ImportAutotvmTest, GivenAConfigTheTargetCannotRun_ItShouldBeImportedCountedAndNoted) {
  std::string line = ExportedConvRecord(0.001);
  const size_t at = line.find("-max_num_threads=");
  ASSERT_NE(at, std::string::npos) << line;
  const size_t end = line.find_first_of(" \"", at);
  line.replace(at, end - at, "-max_num_threads=8");  // the config's work-groups are larger
  auto log = Open("log.db");
  auto counts = Import(line, *log);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(counts->outside_space, 1u);
  EXPECT_NE(notes_.str().find("tvm.log:1: imported, but conv2d:1,32,16,16,32,3,3,1,1:float16 [conv2d_nchwc.image2d] "
                              "on target '"),
            std::string::npos)
      << notes_.str();
  EXPECT_NE(notes_.str().find("best, the report and the exports pass such records over"), std::string::npos)
      << notes_.str();
}

// One measurement under two targets in one file is added once: the second target's lines meet the first's whether or
// not those were written yet (records are written 256 at a time; the second copy was added while the first waited).
TEST_F(ImportAutotvmTest, GivenOneMeasurementUnderTwoTargetsInOneFile_ItShouldBeAddedOnce) {
  const std::string line = ExportedConvRecord(0.001);
  std::string other = line;
  const size_t at = other.find("-max_num_threads=");
  ASSERT_NE(at, std::string::npos) << other;
  other.insert(at, "-model=other-phone ");
  auto log = Open("log.db");
  auto counts = Import(line + other, *log);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(counts->duplicate, 1u);
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 1u);
}

// Records are written 256 to a transaction: a bad line after 300 good ones keeps the 300 (the second batch, not yet
// written when the line was read, included) and says so.
TEST_F(ImportAutotvmTest, GivenABadLineAfterMoreThanABatchOfRecords_EveryRecordBeforeItShouldBeKept) {
  const std::string line = ExportedConvRecord(0.001);
  const size_t cost = line.find("[[0.001]");
  ASSERT_NE(cost, std::string::npos) << line;
  std::string text;
  for (int i = 0; i < 300; ++i) {
    std::string copy = line;
    copy.replace(cost, 8, "[[0.00" + std::to_string(1000 + i) + "]");
    text += copy;
  }
  text += "{\"input\": 3}\n";
  auto log = Open("log.db");
  auto counts = Import(text, *log);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().ToString().find("tvm.log:301"), std::string::npos) << counts.status().ToString();
  EXPECT_NE(counts.status().ToString().find("300 records before it added"), std::string::npos)
      << counts.status().ToString();
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 300u);
}

// A line longer than any AutoTVM record is refused, naming it, without being read whole.
TEST_F(ImportAutotvmTest, GivenALineOfMoreThanAMebibyte_WeShouldNameItAsNoRecord) {
  auto log = Open("log.db");
  auto counts = Import("# comment\n{\"input\": \"" + std::string(3 << 20, 'x') + "\"}\n", *log);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message(), "tvm.log:2: a line of more than 1048576 bytes: no AutoTVM record is so long");
}

// Standard input that never ends a line (`import - </dev/zero`): refused once the line passes the bound, not read on
// (it was skipped to its end, which a stream without a newline never reaches).
TEST_F(ImportAutotvmTest, GivenAStreamWithoutANewline_WeShouldStopReadingAtTheBound) {
  class Endless final : public std::streambuf {
   public:
    size_t taken = 0;

   protected:
    int_type underflow() override { return taken < (size_t{64} << 20) ? 'x' : traits_type::eof(); }
    int_type uflow() override {
      const int_type c = underflow();
      if (c != traits_type::eof()) ++taken;
      return c;
    }
  } endless;
  std::istream in(&endless);
  auto log = Open("log.db");
  auto counts = ImportAutotvm(in, "standard input", *log, {}, notes_);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message(),
            "standard input:1: a line of more than 1048576 bytes: no AutoTVM record is so long");
  EXPECT_LE(endless.taken, (size_t{1} << 20) + 1);
}

// Two results of one config at one time that differ are two measurements, both imported; the file again adds none.
TEST_F(ImportAutotvmTest, GivenTwoResultsOfOneConfigAtOneTime_BothShouldBeImportedOnce) {
  // Written by hand from one exported line: an export writes a config measured twice once, at its median.
  const std::string one = ExportedConvRecord(0.001);
  std::string other = one;
  ASSERT_NE(other.find("[[0.001]"), std::string::npos) << other;
  other.replace(other.find("[[0.001]"), 8, "[[0.002]");
  const std::string lines = one + other;
  ASSERT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2) << lines;
  auto second = Open("second.db");
  auto first = Import(lines, *second);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->added, 2u);
  EXPECT_EQ(first->duplicate, 0u);
  auto again = Import(lines, *second);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->added, 0u);
  EXPECT_EQ(again->duplicate, 2u);
  EXPECT_EQ(second->Records(0, 0, 0).value().size(), 2u);
}

// A result without a time could not be told from the same result imported again (it was given the import's time).
TEST_F(ImportAutotvmTest, GivenATimestampThatIsNotATime_WeShouldNameTheLine) {
  const std::string good = ExportedConvRecord(0.00025);
  const size_t at = good.find("1700000000");
  ASSERT_NE(at, std::string::npos) << good;
  const size_t end = good.find_first_of(",]", at);  // the number as the export wrote it
  ASSERT_NE(end, std::string::npos) << good;
  int n = 0;
  for (const std::string bad : {"0", "-1", "\"now\"", "1e300", "null"}) {
    std::string line = good;
    line.replace(at, end - at, bad);
    auto second = Open("second-" + std::to_string(++n) + ".db");
    auto counts = Import(line, *second);
    ASSERT_FALSE(counts.ok()) << bad;
    EXPECT_NE(counts.status().message().find("tvm.log:1: "), std::string::npos) << counts.status().message();
    EXPECT_NE(counts.status().message().find("is not a time in seconds since 1970"), std::string::npos)
        << counts.status().message();
    EXPECT_TRUE(second->Records(0, 0, 0).value().empty());
  }
}

// A record an older build imported carries the index of that build's space (the limits of imported devices changed):
// importing the file again still finds it, by its config.
TEST_F(ImportAutotvmTest, GivenTheSameFileImportedByABuildOfOtherIndicesItShouldNotBeAddedAgain) {
  std::string lines = ExportedConvRecord(0.001);
  auto second = Open("second.db");
  ASSERT_TRUE(Import(lines, *second).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(second->path().c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE records SET config_index = config_index + 1", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto again = Import(lines, *second);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->added, 0u);
  EXPECT_EQ(again->duplicate, 1u);
}

TEST_F(ImportAutotvmTest, GivenALineOfAnUnknownTvmTask_WeShouldSkipItWithANote) {
  auto log = Open("log.db");
  auto counts = Import(
      R"({"input": ["opencl", "dense_small_batch.gpu", [["TENSOR", [1, 64], "float32"]], {}], )"
      R"("config": {"index": 1, "code_hash": null, "entity": []}, "result": [[0.1], 0, 1.0, 1.0], "version": 0.2})",
      *log);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->skipped, 1u);
  EXPECT_NE(notes_.str().find("dense_small_batch.gpu"), std::string::npos) << notes_.str();
}

// TVM before 0.6 wrote v0.1 lines: the config inside the input list, at input[5], its entity as "e".
TEST_F(ImportAutotvmTest, GivenAV01Line_WeShouldImportItAsItsV02Form) {
  const std::string v02 = ExportedConvRecord(0.00025);
  nlohmann::json line = nlohmann::json::parse(v02);
  nlohmann::json input = line["input"];
  input.push_back(nullptr);  // the task's workload tuple, unused
  input.push_back({{"i", line["config"]["index"]}, {"t", ""}, {"c", nullptr}, {"e", line["config"]["entity"]}});
  const nlohmann::json v01 = {{"i", input}, {"r", line["result"]}, {"v", 0.1}};

  auto log = Open("log.db");
  auto counts = Import(v01.dump() + "\n", *log);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(Export(*log), v02);
}

TEST_F(ImportAutotvmTest, GivenABrokenLine_WeShouldNameTheFileAndLine) {
  auto log = Open("log.db");
  auto counts = Import("\n{\"input\": 3}\n", *log);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("tvm.log:2"), std::string::npos) << counts.status().ToString();
}

// A dimension of 0 or below is refused as such; channels that differ without dividing are not called a grouped
// convolution (the message was "grouped convolution is not supported" for both).
TEST(TvmWorkloadTest, GivenAShapeWithAZeroDimOrChannelsThatDisagree_WeShouldSayWhich) {
  auto args = [](int64_t data_c, int64_t kernel_c) {
    return nlohmann::json::array({nlohmann::json::array({"TENSOR", {1, data_c, 16, 16}, "float32"}),
                                  nlohmann::json::array({"TENSOR", {32, kernel_c, 3, 3}, "float32"}), {1, 1},
                                  {1, 1, 1, 1}, {1, 1}, "float32"});
  };
  auto zero = TaskFromTvmWorkload("conv2d_nchwc.image2d", args(0, 0));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "data shape [1,0,16,16] has a dimension below 1");
  auto differ = TaskFromTvmWorkload("conv2d_nchwc.image2d", args(32, 5));
  ASSERT_FALSE(differ.ok());
  EXPECT_EQ(differ.status().message(),
            "conv2d_nchwc.image2d: the kernel takes 5 input channels, the data has 32");
  auto grouped = TaskFromTvmWorkload("conv2d_nchwc.image2d", args(32, 8));
  ASSERT_FALSE(grouped.ok());
  EXPECT_EQ(grouped.status().message(), "conv2d_nchwc.image2d: grouped convolution is not supported");
  EXPECT_TRUE(TaskFromTvmWorkload("conv2d_nchwc.image2d", args(32, 32)).ok());
}

TEST(TvmTargetTest, GivenATargetOptionThatIsNotACount_WeShouldSayWhichNotThrow) {
  for (const std::string bad : {"abc", "0", "99999999999999999999999", "-4"}) {
    auto info = DeviceFromTvmTarget("opencl -keys=opencl,gpu -max_num_threads=" + bad + " -thread_warp_size=1");
    ASSERT_FALSE(info.ok()) << bad;
    EXPECT_NE(info.status().message().find("-max_num_threads=" + bad + " is not a count from 1 to 2147483648"),
              std::string::npos)
        << info.status().message();
  }
  auto info = DeviceFromTvmTarget("opencl -device=adreno -max_num_threads=256 -texture_spatial_limit=x");
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("-texture_spatial_limit=x is not a count"), std::string::npos);
  info = DeviceFromTvmTarget("opencl -device=adreno -max_num_threads=256 -texture_spatial_limit=16384");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->max_work_group_size(), 256u);
  EXPECT_EQ(info->image2d_max_width(), 16384u);
  EXPECT_EQ(info->name(), "adreno");
}

// An exported target names its device's model (-model): the imported device takes it as its name, so that two device
// models of one log are told apart in best and report by name too (both were called "opencl").
TEST(TvmTargetTest, GivenATargetWithAModel_TheImportedDeviceShouldBeNamedByIt) {
  proto::DeviceInfo h200;
  h200.set_vendor("NVIDIA Corporation");
  h200.set_name("NVIDIA H200");
  h200.set_max_work_group_size(1024);
  auto info = DeviceFromTvmTarget(TvmTarget(h200));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->name(), "nvidia-h200");
  EXPECT_EQ(TvmTarget(*info), TvmTarget(h200)) << "the import gives back the target it was exported with";
}

// The states of a log's sessions, comma-separated in id order.
std::string SessionStates(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT state FROM sessions ORDER BY id", -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        out += (out.empty() ? "" : ",") + std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      }
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// An import holds a run lock as a tune run does (tuner/run_session.h), so that a later run can tell an import that was
// killed from one still going: its session names the lock, and the lock file goes with the import.
TEST_F(ImportAutotvmTest, GivenAnImport_ItsSessionShouldNameARunLockThatIsGoneOnceItEnds) {
  const std::string lines = ExportedConvRecord(0.001);
  auto second = Open("second.db");
  std::istringstream in(lines);
  std::ostringstream notes;
  auto counts = ImportAutotvm(in, "tvm.log", *second, {}, notes);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(SessionStates(second->path()), "done");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(second->path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT run_lock FROM sessions", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const std::string lock = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(lock.rfind("session-", 0), 0u) << lock;
  EXPECT_FALSE(std::filesystem::exists(second->path() + ".locks/" + lock));
}

// The lock is housekeeping: where it cannot be taken (LOG.locks/ made by another user's run, or a file of that name),
// the import goes on with a session that names none, as imports did before they took one.
TEST_F(ImportAutotvmTest, GivenALockFolderThatCannotBeUsed_TheImportShouldStillAddItsRecords) {
  const std::string lines = ExportedConvRecord(0.001);
  auto second = Open("second.db");
  std::ofstream(second->path() + ".locks") << "not a folder";
  std::istringstream in(lines);
  std::ostringstream notes;
  auto counts = ImportAutotvm(in, "tvm.log", *second, {}, notes);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(SessionStates(second->path()), "done");
}

TEST_F(ImportAutotvmTest, GivenCostsThatAreNotSecondsAboveZero_WeShouldNameTheLineAndEndTheSessionAsFailed) {
  const std::string good = ExportedConvRecord(0.00025);
  int n = 0;
  for (const std::string bad : {"[-1.0,-2.0]", "[0.0]", "[1e-300]", "[1e9]", "[]", "[\"a\"]", "[null]"}) {
    std::string line = good;
    line.replace(line.find("[0.00025]"), 9, bad);
    auto second = Open("second-" + std::to_string(++n) + ".db");
    auto counts = Import(good + line, *second);  // one good line, then the bad one
    ASSERT_FALSE(counts.ok()) << bad;
    EXPECT_NE(counts.status().message().find("tvm.log:2: "), std::string::npos) << counts.status().message();
    EXPECT_TRUE(counts.status().message().find("not a time between 1 ps and 10^6 s") != std::string::npos ||
                counts.status().message().find("has no cost") != std::string::npos)
        << counts.status().message();
    EXPECT_NE(counts.status().message().find("(1 record before it added; importing the file again once it is "
                                             "mended skips them)"),
              std::string::npos)
        << counts.status().message();
    EXPECT_EQ(SessionStates(second->path()), "failed") << bad;
  }
}

// A bad line after lines already in the log: the error said nothing of what was added (a disk full at the first batch
// said "database or disk is full" alone).
TEST_F(ImportAutotvmTest, GivenABadLineAfterOnlyDuplicates_TheErrorShouldSayNoRecordWasAdded) {
  const std::string good = ExportedConvRecord(0.00025);
  auto second = Open("second.db");
  ASSERT_TRUE(Import(good, *second).ok());
  auto counts = Import(good + "{\"input\": 3}\n", *second);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("tvm.log:2: "), std::string::npos) << counts.status().message();
  EXPECT_NE(counts.status().message().find("(no record was added)"), std::string::npos) << counts.status().message();
  EXPECT_EQ(second->Records(0, 0, 0).value().size(), 1u);
}

// An import into a new log creates it only when it first writes: a file refused at its first line left an empty
// tuning log (and `tune` leaves none where it records nothing); so did one refused for its config, which is read
// against the space after the workload's rows were written.
TEST_F(ImportAutotvmTest, GivenANewLogAndAFileWhoseOnlyLineIsRefused_NoLogShouldBeCreated) {
  const std::string good = ExportedConvRecord(0.00025);
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    EXPECT_NE(line.find(from), std::string::npos) << from;
    if (line.find(from) != std::string::npos) line.replace(line.find(from), from.size(), to);
    return line;
  };
  const size_t entity = good.find("\"entity\":");
  ASSERT_NE(entity, std::string::npos) << good;
  const std::string entity_list = good.substr(entity, good.find("]]}", entity) + 3 - entity);
  for (const auto& [line, says] : std::vector<std::pair<std::string, std::string>>{
           {edited("[0.00025]", "[-1]"), "tvm.log:1: cost -1 of a result without error"},
           {edited(R"(["tile_fc","sp",[-1,2,4]])", R"(["tile_fc","sp",[-1,999,999]])"),
            "tvm.log:1: split [\"tile_fc\",\"sp\",[-1,999,999]] is not a choice of knob 'tile_fc'"},
           {edited(entity_list, "\"entity\":\"x\"}"), "tvm.log:1: "}}) {
    const std::string path = dir_.File("new.db");
    Result<DeferredLog> log = DeferredLog::Open(path);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    std::istringstream in(line);
    auto counts = ImportAutotvm(in, "tvm.log", *log, {}, notes_);
    ASSERT_FALSE(counts.ok()) << line;
    EXPECT_NE(counts.status().message().find(says), std::string::npos) << counts.status().message();
    EXPECT_EQ(log->IfOpen(), nullptr) << line;
    EXPECT_FALSE(std::filesystem::exists(path)) << line;
    EXPECT_FALSE(std::filesystem::exists(path + ".locks")) << line;
  }
}

TEST_F(ImportAutotvmTest, GivenANewLogAndALineToAdd_TheLogShouldBeCreatedWithItsRecord) {
  const std::string lines = ExportedConvRecord(0.001);
  const std::string path = dir_.File("new.db");
  Result<DeferredLog> log = DeferredLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_FALSE(std::filesystem::exists(path));
  std::istringstream in(lines);
  auto counts = ImportAutotvm(in, "tvm.log", *log, {}, notes_);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  ASSERT_NE(log->IfOpen(), nullptr);
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(Export(*log->IfOpen()), lines);
  EXPECT_EQ(SessionStates(path), "done");
}

// A long import says how far it is on the progress stream, at most one line each `every` of the clock (a test clock
// here that moves one second each time it is read, so no line depends on how fast the machine is).
TEST_F(ImportAutotvmTest, GivenALongImport_ItShouldWriteAProgressLineEachIntervalOfItsClock) {
  const std::string good = ExportedConvRecord(0.00025);
  std::string lines;
  for (int i = 1; i <= 12; ++i) {  // 12 measurements of one config, told apart by their costs
    std::string line = good;
    line.replace(line.find("[0.00025]"), 9, "[0.000" + std::to_string(100 + i) + "]");
    lines += line;
  }
  lines += good + good;  // the 13th, and then the same again: 1 already present
  auto log = Open("log.db");
  std::ostringstream progress_out;
  std::chrono::steady_clock::time_point now{};
  ImportProgress progress;
  progress.out = &progress_out;
  progress.every = std::chrono::seconds(5);
  progress.clock = [&now] { return now += std::chrono::seconds(1); };
  std::istringstream in(lines);
  auto counts = ImportAutotvm(in, "tvm.log", *log, {}, notes_, {}, progress);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 13u);
  EXPECT_EQ(counts->duplicate, 1u);
  // Read at 1 s (the start), then before each line at 2 s, 3 s, ...: a line before the 5th (4 read in 5 s) and
  // before the 10th (9 in 10 s); stdout and the notes are not where it goes.
  EXPECT_EQ(progress_out.str(),
            "tvm.log: 4 lines read (1 a second): 4 records added, 0 already present, 0 skipped\n"
            "tvm.log: 9 lines read (1 a second): 9 records added, 0 already present, 0 skipped\n");
  EXPECT_EQ(notes_.str(), "");
}

TEST_F(ImportAutotvmTest, GivenAnImportShorterThanTheInterval_ItShouldWriteNoProgressLine) {
  const std::string lines = ExportedConvRecord(0.001);
  auto log = Open("log.db");
  std::ostringstream progress_out;
  std::chrono::steady_clock::time_point now{};
  ImportProgress progress;
  progress.out = &progress_out;
  progress.clock = [&now] { return now += std::chrono::seconds(1); };  // 5 s, the default, never pass
  std::istringstream in(lines);
  auto counts = ImportAutotvm(in, "tvm.log", *log, {}, notes_, {}, progress);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(progress_out.str(), "");
}

// An Adreno target without -texture_spatial_limit cannot run the image templates: its lines are skipped with a note,
// the rest of the file imported (the import stopped at it).
TEST_F(ImportAutotvmTest, GivenATargetThatCannotRunTheTemplate_ItsLinesShouldBeSkippedAndTheRestImported) {
  auto first = Open("first.db");
  const Template* t = FindTemplate("conv2d_nchwc.image2d");
  ASSERT_NE(t, nullptr);
  Task task = Task::Parse("conv2d:1,32,16,16,32,3,3,1,1:float16").value();
  Space space = t->MakeSpace(task, DeviceLimits::From(AdrenoDevice())).value();
  ASSERT_NO_FATAL_FAILURE(AddRegisteredRecord(*first, AdrenoDevice(), task, *t, space, t->Fallback(task, space)));
  std::ostringstream lines, notes;
  ASSERT_TRUE(ExportAutotvm(*first, {false, {}}, lines, notes).ok());
  const std::string good = lines.str();
  const size_t at = good.find(" -texture_spatial_limit=");
  ASSERT_NE(at, std::string::npos) << good;
  std::string bad = good;
  bad.erase(at, good.find_first_of(" \"", at + 1) - at);
  auto second = Open("second.db");
  std::istringstream in(bad + bad + good);
  auto counts = ImportAutotvm(in, "tvm.log", *second, {}, notes_);  // the registered template, which needs images
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(counts->skipped, 2u);
  EXPECT_NE(notes_.str().find("tvm.log:1: skipped: conv2d_nchwc.image2d cannot run conv2d:1,32,16,16,32,3,3,1,1:float16"
                              " on target '"),
            std::string::npos)
      << notes_.str();
  EXPECT_EQ(notes_.str().find("tvm.log:2"), std::string::npos) << notes_.str();  // said once
}

// A TVM task whose types are no tunefleet precision (a float64 output) was imported as a float32 task.
TEST_F(ImportAutotvmTest, GivenAnOutDtypeThatIsNoPrecision_TheLineShouldBeSkippedWithANote) {
  const std::string good = ExportedConvRecord(0.00025);  // float16 data, kernel and output
  const std::string out = R"([1,1],"float16"],{}])";
  const size_t at = good.find(out);
  ASSERT_NE(at, std::string::npos) << good;
  std::string bad = good;
  bad.replace(at, out.size(), R"([1,1],"float64"],{}])");
  auto log = Open("second.db");
  std::istringstream in(bad + good);
  auto counts = ImportAutotvm(in, "tvm.log", *log, {}, notes_);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->added, 1u);
  EXPECT_EQ(counts->skipped, 1u);
  EXPECT_NE(notes_.str().find("tvm.log:1: skipped: conv2d_nchwc.image2d: data float16, kernel float16 and "
                              "out_dtype float64 are no tunefleet precision"),
            std::string::npos)
      << notes_.str();
}

TEST_F(ImportAutotvmTest, GivenAnErrorNoThatIsNotAMeasureErrorNo_WeShouldSaySo) {
  std::string line = ExportedConvRecord(0.00025);
  const size_t at = line.find("[0.00025],0,");
  ASSERT_NE(at, std::string::npos) << line;
  line.replace(at, 12, "[0.00025],1.5,");
  auto second = Open("second.db");
  auto counts = Import(line, *second);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("tvm.log:1: error_no 1.5 is not a whole number from 0 to 8"),
            std::string::npos)
      << counts.status().message();
}

TEST_F(ImportAutotvmTest, GivenAnEntityThatIsNotInTheSpace_WeShouldSayWhichKnob) {
  std::string line = ExportedConvRecord(0.001);
  line.replace(line.find("[-1,2,4]"), 8, "[-1,3,4]");
  auto second = Open("second.db");
  auto counts = Import(line, *second);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("tile_fc"), std::string::npos) << counts.status().ToString();
}

// Values a hand-made or damaged line may hold where a split's factors go, a knob given twice, a number past int64, and
// JSON nested so deep that quoting it in a message overflowed the stack: each is refused naming its line.
TEST_F(ImportAutotvmTest, GivenOddValuesInALine_WeShouldRefuseItNamingTheLineAndTheValue) {
  const std::string good = ExportedConvRecord(0.001);
  std::string deep = good;
  deep.replace(deep.find("[-1,2,4]"), 8, std::string(100000, '[') + std::string(100000, ']'));
  std::string twice = good;
  twice.replace(twice.find("[\"tile_y\""), 0, R"(["tile_fc","sp",[-1,2,4]],)");
  std::string huge_stride = good;
  huge_stride.replace(huge_stride.find("[1,1],[1,1,1,1]"), 5, "[18446744073709551615,1]");
  int n = 0;
  for (const auto& [line, says] : std::vector<std::pair<std::string, std::string>>{
           {std::string(good).replace(good.find("[-1,2,4]"), 8, R"([-1,"x",4])"),
            R"(holds "x", not a whole number)"},
           {std::string(good).replace(good.find("[-1,2,4]"), 8, "[-1,2.0,4]"), "holds 2.0, not a whole number"},
           {twice, "knob 'tile_fc' is given twice"},
           {deep, "tvm.log:1: JSON nested deeper than 64 levels"},
       }) {
    auto log = Open("odd-" + std::to_string(++n) + ".db");
    auto counts = Import(line, *log);
    ASSERT_FALSE(counts.ok()) << says;
    EXPECT_NE(counts.status().message().find("tvm.log:1: "), std::string::npos) << counts.status().message();
    EXPECT_NE(counts.status().message().find(says), std::string::npos) << counts.status().message();
  }
  auto log = Open("stride.db");
  auto counts = Import(huge_stride, *log);  // a workload that maps to no task: skipped with a note
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->skipped, 1u);
  EXPECT_NE(notes_.str().find("strides holds a number out of range"), std::string::npos) << notes_.str();
}

// The same round trip with each Adreno template's fallback config (the one a tune run measures first), read from the
// log by the registered templates themselves.
TEST_F(ImportAutotvmTest, GivenRecordsOfTheRegisteredTemplates_TheRoundTripShouldKeepEveryLine) {
  auto first = Open("first.db");
  for (auto [spec, name] : {std::pair{"conv2d:1,32,16,16,32,3,3,1,1:float16", "conv2d_nchwc.image2d"},
                            std::pair{"dwconv2d:1,32,28,28,3,3,2,1:float16", "depthwise_conv2d_nchwc.image2d"}}) {
    const Template* t = FindTemplate(name);
    ASSERT_NE(t, nullptr) << name;
    Task task = Task::Parse(spec).value();
    Space space = t->MakeSpace(task, DeviceLimits::From(AdrenoDevice())).value();
    ASSERT_NO_FATAL_FAILURE(AddRegisteredRecord(*first, AdrenoDevice(), task, *t, space, t->Fallback(task, space)));
  }
  std::ostringstream lines, notes;
  ASSERT_TRUE(ExportAutotvm(*first, {false, {}}, lines, notes).ok());
  const std::string text = lines.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << notes.str();

  auto second = Open("second.db");
  std::istringstream in(text);
  auto counts = ImportAutotvm(in, "tvm.log", *second, {}, notes_);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  std::ostringstream again;
  ASSERT_TRUE(ExportAutotvm(*second, {false, {}}, again, notes).ok());
  EXPECT_EQ(again.str(), text);
}

}  // namespace
}  // namespace tunefleet
