#include "tuner/export_autotvm.h"

#include <sstream>

#include <gtest/gtest.h>

#include "tuner/export_testing.h"

namespace tunefleet {
namespace {

constexpr const char* kConv = "conv2d:1,32,16,16,32,3,3,1,1:float16";
constexpr const char* kAdrenoTarget =
    "opencl -keys=adreno,opencl,gpu -device=adreno -max_num_threads=1024 -model=qualcomm-adreno-tm-740 "
    "-texture_spatial_limit=16384 -thread_warp_size=1";

class ExportAutotvmTest : public ::testing::Test {
 protected:
  void SetUp() override { log_ = std::move(TuningLog::Open(dir_.File("log.db"))).value(); }

  std::string Export(bool best_only = false) {
    std::ostringstream out;
    notes_.str("");
    auto counts = ExportAutotvm(*log_, {best_only, {}}, out, notes_);
    EXPECT_TRUE(counts.ok()) << counts.status().ToString();
    return out.str();
  }

  // ConvConfig()'s index in the registered template's space for kConv on AdrenoDevice().
  static uint64_t ConvIndex() {
    const Template* t = FindTemplate("conv2d_nchwc.image2d");
    EXPECT_NE(t, nullptr);
    if (t == nullptr) return 0;
    auto space = t->MakeSpace(Task::Parse(kConv).value(), DeviceLimits::From(AdrenoDevice())).value();
    return space.IndexOf(space.FromJson(ConvConfig()).value());
  }

  TempDir dir_;
  std::unique_ptr<TuningLog> log_;
  std::ostringstream notes_;
};

TEST_F(ExportAutotvmTest, GivenAnAdrenoDevice_WeShouldWriteTvmsAdrenoTarget) {
  EXPECT_EQ(TvmTarget(AdrenoDevice()), kAdrenoTarget);
}

TEST_F(ExportAutotvmTest, GivenAnotherGpu_WeShouldWriteAPlainOpenclTarget) {
  proto::DeviceInfo d;
  d.set_vendor("NVIDIA Corporation");
  d.set_name("NVIDIA H200");
  d.set_device_type("GPU");
  d.set_max_work_group_size(1024);
  d.set_fingerprint("h200");
  EXPECT_EQ(TvmTarget(d), "opencl -keys=opencl,gpu -max_num_threads=1024 -model=nvidia-h200 -thread_warp_size=32");
  d.set_vendor("ARM");
  d.set_name("Mali-G710");
  d.set_max_work_group_size(512);
  EXPECT_EQ(TvmTarget(d), "opencl -keys=opencl,gpu -max_num_threads=512 -model=mali-g710 -thread_warp_size=1");
  d.clear_name();
  EXPECT_EQ(TvmTarget(d), "opencl -keys=opencl,gpu -max_num_threads=512 -thread_warp_size=1");
}

// Two device models of one log have targets of their own: TVM's ApplyHistoryBest keeps the best per -model, and
// without one it could only take the faster of the two devices' records for both.
TEST_F(ExportAutotvmTest, GivenTwoDeviceModels_TheirTargetsShouldDifferByTheirModel) {
  proto::DeviceInfo pthread = AdrenoDevice(), basic = AdrenoDevice();
  pthread.set_vendor("GenuineIntel");
  pthread.set_name("pthread-Intel(R) Xeon(R) CPU @ 2.20GHz");
  basic.set_vendor("GenuineIntel");
  basic.set_name("basic-Intel(R) Xeon(R) CPU @ 2.20GHz");
  EXPECT_EQ(TvmModel(pthread), "pthread-intel-r-xeon-r-cpu-2-20ghz");
  EXPECT_NE(TvmTarget(pthread), TvmTarget(basic));
  EXPECT_NE(TvmTarget(basic).find(" -model=basic-intel-r-xeon-r-cpu-2-20ghz "), std::string::npos) << TvmTarget(basic);
}

TEST_F(ExportAutotvmTest, GivenADepthwiseTask_WeShouldWriteTvmsArgs) {
  auto w = TvmWorkloadFor(Task::Parse("dwconv2d:1,32,28,28,3,3,2,1:float16-acc32").value(),
                          "depthwise_conv2d_nchwc.image2d");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->task_name, "depthwise_conv2d_nchwc_acc32.image2d");
  EXPECT_EQ(w->args.dump(),
            R"([["TENSOR",[1,32,28,28],"float16"],["TENSOR",[32,1,3,3],"float16"],[2,2],[1,1,1,1],[1,1],"float32"])");
}

TEST_F(ExportAutotvmTest, GivenASuccessfulRecord_WeShouldWriteTheGoldenLine) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.00025, 0.0003},
                1700000000.25);
  std::string expected =
      std::string(R"({"input":[")") + kAdrenoTarget +
      R"(","conv2d_nchwc.image2d",[["TENSOR",[1,32,16,16],"float16"],["TENSOR",[32,32,3,3],"float16"],)"
      R"([1,1],[1,1,1,1],[1,1],"float16"],{}],"config":{"index":)" +
      std::to_string(ConvIndex()) +
      R"(,"code_hash":null,"entity":[["tile_fc","sp",[-1,2,4]],["tile_y","sp",[-1,2,2]],["tile_x","sp",[-1,1,8]],)"
      R"(["tile_rcc","sp",[-1,4]],["tile_ry","sp",[-1,1]],["tile_rx","sp",[-1,3]],)"
      R"(["auto_unroll_max_step","ot",512],["unroll_explicit","ot",1]]},)"
      R"("result":[[0.00025,0.0003],0,1.5,1700000000.25],"version":0.2,"tvm_version":"0.8.0"})"
      "\n";
  EXPECT_EQ(Export(), expected);
}

TEST_F(ExportAutotvmTest, GivenAFailedRecord_WeShouldWriteAnErrorCostAndTheErrorNumber) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 4, {}, 1700000001);
  auto line = nlohmann::json::parse(Export());
  EXPECT_EQ(line["result"].dump(), "[[1000000000.0],4,1.5,1700000001.0]");
}

TEST_F(ExportAutotvmTest, GivenSeveralRecords_BestOnlyShouldWriteTheFastestSuccess) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.002}, 1);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.001}, 2);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 3, {}, 3);
  std::string all = Export(false), best = Export(true);
  // One config measured twice: written once, at the faster of its two results (its lower median), and its failure.
  ASSERT_EQ(std::count(all.begin(), all.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(all.substr(0, all.find('\n')))["result"][0][0].get<double>(), 0.001);
  ASSERT_EQ(std::count(best.begin(), best.end(), '\n'), 1);
  EXPECT_EQ(nlohmann::json::parse(best)["result"][0][0].get<double>(), 0.001);
}

// A config measured three times (tune --confirm) is written once, at its median: TVM takes a workload's lowest cost
// over all lines, so its repeats, written each, made its one lucky run TVM's pick where `best` ranks it at its median
// (on the recorded H200 logs, TVM's pick differed from best's in 10 of 12 units). Configs measured once are as they
// were.
TEST_F(ExportAutotvmTest, GivenAConfigMeasuredThreeTimes_TheFullExportShouldWriteItOnceAtItsMedian) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.001}, 1);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.003}, 2);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.002}, 3);
  std::ostringstream out, notes;
  auto counts = ExportAutotvm(*log_, {false, {}}, out, notes);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->written, 1u);
  EXPECT_EQ(counts->repeats, 2u);
  const std::string all = out.str();
  ASSERT_EQ(std::count(all.begin(), all.end(), '\n'), 1);
  EXPECT_EQ(nlohmann::json::parse(all)["result"][0][0].get<double>(), 0.002);
  EXPECT_EQ(nlohmann::json::parse(all)["result"][3].get<double>(), 3.0);  // the median record's timestamp
}

// A result whose cost is no time is skipped by itself, with a note; the config stands as the median of the others
// (it was left out whole, its other results counted as repeats of a line never written).
TEST_F(ExportAutotvmTest, GivenAConfigWhoseMedianResultIsNoTime_ItShouldStandAsTheMedianOfTheOthers) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.001}, 1);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {-1e-6, 0.0045}, 2);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.003}, 3);
  std::ostringstream out, notes;
  auto counts = ExportAutotvm(*log_, {false, {}}, out, notes);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->written, 1u);
  EXPECT_EQ(counts->skipped, 1u);
  EXPECT_EQ(counts->repeats, 1u);
  EXPECT_EQ(nlohmann::json::parse(out.str())["result"][0][0].get<double>(), 0.001);  // of 1 and 3 ms, the faster
}

// TVM would take a negative time for the fastest config; a log edited by hand or by another tool may hold one.
TEST_F(ExportAutotvmTest, GivenARecordWithACostThatIsNoTime_WeShouldSkipItWithANote) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {-1e-6, 3e-6}, 1);
  EXPECT_EQ(Export(), "");
  EXPECT_NE(notes_.str().find("a cost that is not a finite time above 0"), std::string::npos) << notes_.str();
}

// Knobs of another version of a template may mean something else: such records are not handed to TVM.
TEST_F(ExportAutotvmTest, GivenARecordOfAnotherTemplateVersion_WeShouldSkipItWithANote) {
  const Template* t = FindTemplate("conv2d_nchwc.image2d");
  ASSERT_NE(t, nullptr);
  const std::string built = std::to_string(t->version()), other = std::to_string(t->version() + 1);
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.001}, 1);
  RecordRow r = log_->Records(0, 0, 0).value().at(0);
  r.template_id = log_->UpsertTemplate("conv2d_nchwc.image2d", t->version() + 1).value();
  ASSERT_TRUE(log_->AddRecord(r).ok());
  const std::string out = Export();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;  // the record of the built version only
  EXPECT_NE(notes_.str().find("measured with template version " + other + ", this build has version " + built),
            std::string::npos)
      << notes_.str();
}

// A log edited by hand may hold a config that is not one of the space's: TVM could not read it back, nor could
// tunefleet's import. It is skipped; with --best-only, the next fastest record of the space takes its place.
TEST_F(ExportAutotvmTest, GivenAConfigOutsideTheSpace_WeShouldSkipItAndExportTheNextBest) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "conv2d_nchwc.image2d", ConvConfig(), 0, {0.002}, 1);
  RecordRow edited = log_->Records(0, 0, 0).value().at(0);
  nlohmann::json config = ConvConfig();
  config["tile_fc"] = {3, 2, 4};  // 24 blocks of 4 output channels, of 8
  edited.config = config.dump();
  edited.costs = {0.001};
  edited.mean_cost = 0.001;
  ASSERT_TRUE(log_->AddRecord(edited).ok());

  const std::string all = Export(false);
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1) << all;
  EXPECT_NE(notes_.str().find("its config is not in the template's space: knob 'tile_fc' has no choice [3,2,4]"),
            std::string::npos)
      << notes_.str();
  const std::string best = Export(true);
  ASSERT_EQ(std::count(best.begin(), best.end(), '\n'), 1) << best;
  EXPECT_EQ(nlohmann::json::parse(best)["result"][0][0].get<double>(), 0.002);
  EXPECT_NE(notes_.str().find("1 faster config(s) passed over"), std::string::npos) << notes_.str();
}

// A device name from a log reaches a terminal: control characters are shown escaped, not sent.
TEST_F(ExportAutotvmTest, GivenATemplateNameWithControlCharacters_TheNoteShouldEscapeThem) {
  AddTestRecord(*log_, AdrenoDevice(), kConv, "evil\x1b[2J\nname", ConvConfig(), 0, {0.001}, 1);
  Export();
  EXPECT_NE(notes_.str().find("(evil\\x1b[2J\\x0aname)"), std::string::npos) << notes_.str();
  EXPECT_EQ(notes_.str().find('\x1b'), std::string::npos);
}

TEST_F(ExportAutotvmTest, GivenAGemmRecord_WeShouldSkipItWithANote) {
  const Template* gemm = FindTemplate("gemm.buffer");  // registered, but its knobs are not those of a TVM template
  ASSERT_NE(gemm, nullptr);
  const Task task = Task::Parse("gemm:64,64,64:float32").value();
  auto space = gemm->MakeSpace(task, DeviceLimits::From(AdrenoDevice()));
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  AddTestRecord(*log_, AdrenoDevice(), task.ToSpec(), "gemm.buffer", space->ToJson(gemm->Fallback(task, *space)), 0,
                {0.001}, 1);
  ASSERT_EQ(log_->Records(0, 0, 0).value().size(), 1u);
  EXPECT_EQ(Export(), "");
  EXPECT_NE(notes_.str().find("gemm.buffer"), std::string::npos) << notes_.str();
  EXPECT_NE(notes_.str().find("does not mirror"), std::string::npos) << notes_.str();
}

}  // namespace
}  // namespace tunefleet
