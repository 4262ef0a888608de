#include "tuner/export_kernel_pack.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "deploy/runtime/pack_fingerprint.h"
#include "tuner/export_testing.h"

namespace tunefleet {
namespace {

proto::DeviceInfo CpuDevice(const std::string& fingerprint) {
  proto::DeviceInfo d;
  d.set_vendor("pocl");
  d.set_name("pthread-cpu");
  d.set_device_type("CPU");
  d.set_max_work_group_size(1024);
  for (int i = 0; i < 3; ++i) d.add_max_work_item_sizes(1024);
  d.set_local_mem_bytes(64 * 1024);
  d.set_fingerprint(fingerprint);
  return d;
}

// Records the fallback config of the registered template `tmpl` for `spec` with `cost` seconds.
void AddFallbackRecord(TuningLog& log, const proto::DeviceInfo& device, const std::string& tmpl,
                       const std::string& spec, double cost) {
  const Template* t = FindTemplate(tmpl);
  ASSERT_NE(t, nullptr);
  Task task = Task::Parse(spec).value();
  Space space = t->MakeSpace(task, DeviceLimits::From(device)).value();
  RecordRow r;
  r.device_id = log.UpsertDevice(device).value();
  r.task_id = log.UpsertTask(task.ToSpec(), task.op, "{}", t->Flops(task)).value();
  r.template_id = log.UpsertTemplate(t->name(), t->version()).value();
  Config c = t->Fallback(task, space);
  r.config_index = space.IndexOf(c);
  r.config = space.ToJson(c).dump();
  r.costs = {cost};
  r.mean_cost = cost;
  r.timestamp = 1;
  ASSERT_TRUE(log.AddRecord(r).ok());
}

void AddGemmRecord(TuningLog& log, const proto::DeviceInfo& device, const std::string& spec, double cost) {
  AddFallbackRecord(log, device, "gemm.buffer", spec, cost);
}

class ExportKernelPackTest : public ::testing::Test {
 protected:
  void SetUp() override { log_ = std::move(TuningLog::Open(dir_.File("log.db"))).value(); }

  // Packs the log's records and writes them into the directory "packs"; the files' paths in *paths.
  void WritePacksIntoDirectory(std::vector<std::string>* paths) {
    auto packs = BuildKernelPacks(*log_, {}, notes_);
    ASSERT_TRUE(packs.ok());
    auto written = WriteKernelPacks(*packs, dir_.File("packs"));
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    *paths = std::move(written).value();
  }

  TempDir dir_;
  std::unique_ptr<TuningLog> log_;
  std::ostringstream notes_;
};

TEST_F(ExportKernelPackTest, GivenGemmRecords_WeShouldPackTheBestProgramWithItsLatencyAndFallback) {
  AddGemmRecord(*log_, CpuDevice("fp-cpu"), "gemm:64,64,64:float32", 2e-3);
  AddGemmRecord(*log_, CpuDevice("fp-cpu"), "gemm:64,64,64:float32", 1e-3);
  auto packs = BuildKernelPacks(*log_, {}, notes_);
  ASSERT_TRUE(packs.ok()) << packs.status().ToString();
  ASSERT_EQ(packs->size(), 1u);
  const auto& pack = (*packs)[0].pack;
  EXPECT_EQ(pack["format"], "tunefleet-kernel-pack");
  EXPECT_EQ(pack["device"]["fingerprint"], "fp-cpu");
  ASSERT_EQ(pack["kernels"].size(), 1u);
  const auto& k = pack["kernels"][0];
  EXPECT_EQ(k["task"], "gemm:64,64,64:float32");
  EXPECT_EQ(k["template"], "gemm.buffer");
  EXPECT_DOUBLE_EQ(k["latency_ms"].get<double>(), 1.0);
  EXPECT_FALSE(k["program"]["launches"].empty());
  EXPECT_FALSE(k["program"]["launches"][0]["source"].get<std::string>().empty());
  EXPECT_EQ(k["program"]["output_buffer"], "C");
  EXPECT_EQ(pack["fallbacks"].size(), 1u);
  // Every entry is fingerprinted, so that an application's loader refuses a program edited or damaged: the file as
  // written, parsed back, holds fingerprints that its programs match.
  auto written = WriteKernelPacks(*packs, dir_.File("pack.json"));
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const nlohmann::json read = nlohmann::json::parse(std::ifstream(dir_.File("pack.json")));
  for (const char* list : {"kernels", "fallbacks"}) {
    for (const auto& entry : read[list]) {
      ASSERT_TRUE(entry.contains("program_fnv")) << list;
      EXPECT_EQ(entry["program_fnv"], runtime::ProgramFingerprint(entry["program"])) << list;
      ASSERT_TRUE(entry.contains("entry_fnv")) << list;
      EXPECT_EQ(entry["entry_fnv"], runtime::EntryFingerprint(entry["task"], entry["template"], entry["program"]))
          << list;
    }
  }
}

// One template that runs two ops (conv2d_nchw.buffer: conv2d and dwconv2d) with the same named parameters: each op
// gets its own fallback. The fallback of the op exported first stood for both, and the runtime, which gives a
// workload a fallback of its own op only, had none for the other.
TEST_F(ExportKernelPackTest, GivenOneTemplateOfTwoOps_EachOpShouldGetItsOwnFallback) {
  AddFallbackRecord(*log_, CpuDevice("fp-cpu"), "conv2d_nchw.buffer", "dwconv2d:1,8,8,8,3,3,1,1:float32", 1e-3);
  AddFallbackRecord(*log_, CpuDevice("fp-cpu"), "conv2d_nchw.buffer", "conv2d:1,4,8,8,8,3,3,1,1:float32", 1e-3);
  auto packs = BuildKernelPacks(*log_, {}, notes_);
  ASSERT_TRUE(packs.ok()) << packs.status().ToString();
  ASSERT_EQ(packs->size(), 1u);
  std::set<std::string> ops;
  for (const auto& fallback : (*packs)[0].pack["fallbacks"]) ops.insert(fallback["op"].get<std::string>());
  EXPECT_EQ(ops, (std::set<std::string>{"conv2d", "dwconv2d"})) << notes_.str();
}

TEST_F(ExportKernelPackTest, GivenTwoDevices_WeShouldWriteOnePackFilePerDeviceIntoADirectory) {
  AddGemmRecord(*log_, CpuDevice("fp-one"), "gemm:32,32,32:float32", 1e-3);
  AddGemmRecord(*log_, CpuDevice("fp-two"), "gemm:32,32,32:float32", 1e-3);
  std::vector<std::string> paths;
  ASSERT_NO_FATAL_FAILURE(WritePacksIntoDirectory(&paths));
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& p : paths) {
    EXPECT_EQ(std::filesystem::path(p).parent_path(), dir_.File("packs"));
    EXPECT_TRUE(std::filesystem::exists(p));
  }
}

// Two device models whose name and fingerprint prefix agree (AutoTVM targets imported with one `-device` all begin
// "autotvm:open") each get a pack file of their own, none written over another.
TEST_F(ExportKernelPackTest, GivenTwoDevicesSharingAFilePrefix_EachShouldKeepItsOwnPackFile) {
  AddGemmRecord(*log_, CpuDevice("autotvm:opencl -device=adreno -model=sm8550"), "gemm:32,32,32:float32", 1e-3);
  AddGemmRecord(*log_, CpuDevice("autotvm:opencl -device=adreno -model=sm8450"), "gemm:32,32,32:float32", 2e-3);
  std::vector<std::string> paths;
  ASSERT_NO_FATAL_FAILURE(WritePacksIntoDirectory(&paths));
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_NE(paths[0], paths[1]);
  std::set<std::string> fingerprints;
  for (const auto& p : paths) {
    std::ifstream in(p);
    fingerprints.insert(nlohmann::json::parse(in)["device"]["fingerprint"].get<std::string>());
  }
  EXPECT_EQ(fingerprints.size(), 2u);
}

// A fingerprint from a log names a file: path separators in it must not lead out of the directory.
TEST_F(ExportKernelPackTest, GivenAFingerprintWithPathSeparators_ThePackFileShouldStayInTheDirectory) {
  AddGemmRecord(*log_, CpuDevice("../../x/y"), "gemm:32,32,32:float32", 1e-3);
  AddGemmRecord(*log_, CpuDevice("fp-two"), "gemm:32,32,32:float32", 1e-3);
  std::vector<std::string> paths;
  ASSERT_NO_FATAL_FAILURE(WritePacksIntoDirectory(&paths));
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& p : paths) EXPECT_EQ(std::filesystem::path(p).parent_path(), dir_.File("packs")) << p;
}

TEST_F(ExportKernelPackTest, GivenOneDevice_WeShouldWriteThePackToTheGivenFile) {
  AddGemmRecord(*log_, CpuDevice("fp-one"), "gemm:32,32,32:float32", 1e-3);
  auto packs = BuildKernelPacks(*log_, {}, notes_);
  ASSERT_TRUE(packs.ok());
  auto paths = WriteKernelPacks(*packs, dir_.File("pack.json"));
  ASSERT_TRUE(paths.ok());
  ASSERT_EQ(paths->size(), 1u);
  std::ifstream in(dir_.File("pack.json"));
  EXPECT_EQ(nlohmann::json::parse(in)["kernels"].size(), 1u);
}

TEST_F(ExportKernelPackTest, GivenARecordOfAnOlderTemplateVersion_WeShouldSkipItWithANote) {
  AddGemmRecord(*log_, CpuDevice("fp-cpu"), "gemm:32,32,32:float32", 1e-3);
  auto rows = log_->Records(0, 0, 0).value();
  RecordRow old = rows[0];
  old.template_id = log_->UpsertTemplate("gemm.buffer", 0).value();
  old.mean_cost = old.costs[0] = 5e-4;
  ASSERT_TRUE(log_->AddRecord(old).ok());
  auto packs = BuildKernelPacks(*log_, {}, notes_);
  ASSERT_TRUE(packs.ok());
  EXPECT_NE(notes_.str().find("template version 0"), std::string::npos) << notes_.str();
  ASSERT_EQ(packs->size(), 1u);
  EXPECT_EQ((*packs)[0].pack["kernels"].size(), 1u);
}

}  // namespace
}  // namespace tunefleet
