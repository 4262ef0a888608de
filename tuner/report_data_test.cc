#include "tuner/report_data.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "tuner/export_testing.h"
#include "tuner/model_tasks.h"
#include "tuner/task_workload.h"
#include "tuner/test_models.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// A real SQLite tuning log in a temporary directory.
class ReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/report_data_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto log = TuningLog::Open((dir_ / "tune.db").string());
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
  }
  void TearDown() override {
    log_.reset();
    fs::remove_all(dir_);
  }

  int64_t Device(const std::string& name, const std::string& fingerprint = "") {
    proto::DeviceInfo d;
    d.set_vendor("ACME");
    d.set_name(name);
    d.set_driver_version("2.1");
    d.set_device_version("OpenCL 3.0");
    d.set_compute_units(8);
    d.set_fingerprint(fingerprint.empty() ? "fp-" + name : fingerprint);
    return log_->UpsertDevice(d).value();
  }
  void Add(int64_t task, int64_t tmpl, int64_t dev, uint64_t index, int status, double cost) {
    RecordRow r;
    r.task_id = task;
    r.template_id = tmpl;
    r.device_id = dev;
    r.config_index = index;
    r.config = "{}";
    r.status = status;
    r.mean_cost = cost;
    if (status == 0) r.costs = {cost};
    r.message = status == 0 ? "" : "CL_OUT_OF_RESOURCES";
    ASSERT_TRUE(log_->AddRecord(r).ok());
  }

  fs::path dir_;
  std::unique_ptr<TuningLog> log_;
  std::ostringstream notes_;  // BestInSpace's
};

TEST_F(ReportDataTest, GivenRecordsOfTwoTasks_WeShouldGetOneSeriesEachWithTheModelCountAndDeviceDetails) {
  // The workload JSON the tuner writes for a model task carries its occurrence count.
  ImportedModel model;
  {
    onnx::ModelProto m = MakeResNetLikeModel();
    model = ImportOnnxModel(m, "resnet", {}).value();
  }
  ModelTask conv = BuildModelTasks(model, {})[1];
  ASSERT_EQ(conv.count, 4);
  int64_t dev = Device("gpu0");
  int64_t t1 =
      log_->UpsertTask(conv.task.ToSpec(), "conv2d", LogWorkloadJson(conv.task, conv.count, "resnet.onnx"), 2e6)
          .value();
  int64_t t2 = log_->UpsertTask("gemm:64,64,64:float32", "gemm", R"({"M":64})", 2.0 * 64 * 64 * 64).value();
  int64_t tmpl = log_->UpsertTemplate("conv2d_nchw.buffer", 3).value();
  Add(t1, tmpl, dev, 1, 0, 2e-3);
  Add(t2, tmpl, dev, 1, 4, 0);
  Add(t1, tmpl, dev, 2, 0, 1e-3);

  auto data = LoadReportData(*log_, notes_);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->series.size(), 2u);
  EXPECT_EQ(data->series[0].task_spec, conv.task.ToSpec());
  EXPECT_EQ(data->series[0].count, 4);
  EXPECT_EQ(data->series[0].records.size(), 2u);
  EXPECT_EQ(data->series[0].template_name, "conv2d_nchw.buffer");
  EXPECT_EQ(data->series[0].template_version, 3);
  EXPECT_EQ(data->series[0].device_name, "gpu0");
  EXPECT_EQ(data->series[1].count, 0);  // not from a model: unknown
  EXPECT_EQ(data->series[1].records[0].status, 4);
  ASSERT_EQ(data->devices.size(), 1u);
  bool has_cu = false;
  for (const auto& [k, v] : data->devices[0].details)
    has_cu = has_cu || (k.find("compute") != std::string::npos && v == "8");
  EXPECT_TRUE(has_cu);

  std::string html = RenderReportHtml(*data);
  EXPECT_NE(html.find("<b>4.0000</b>"), std::string::npos);  // 4 x 1 ms; the gemm never succeeded
  EXPECT_NE(html.find("4 runtime error"), std::string::npos);
}

TEST_F(ReportDataTest, GivenTwoDevicesOfOneName_TheModelSummaryShouldKeepThemApart) {
  // Two phones of one model on different drivers: one name, two fingerprints, different results.
  int64_t a = Device("Adreno 640", "fp-old-driver");
  int64_t b = Device("Adreno 640", "fp-new-driver");
  int64_t other = Device("Mali-G78");
  int64_t task = log_->UpsertTask("gemm:64,64,64:float32", "gemm", R"({"count":2})", 2.0 * 64 * 64 * 64).value();
  // A template this build lacks: its records' configs ("{}") are not judged against a space (a test below has one
  // that is).
  int64_t tmpl = log_->UpsertTemplate("acme.gemm", 1).value();
  Add(task, tmpl, a, 1, 0, 4e-3);
  Add(task, tmpl, b, 1, 0, 1e-3);
  Add(task, tmpl, other, 1, 0, 2e-3);

  auto data = LoadReportData(*log_, notes_);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->series.size(), 3u);
  EXPECT_EQ(data->series[0].device_name, "Adreno 640 (fp-old-driver)");
  EXPECT_EQ(data->series[1].device_name, "Adreno 640 (fp-new-driver)");
  EXPECT_EQ(data->series[2].device_name, "Mali-G78");

  // One summary table per device, each with its own total: 2 x 4 ms and 2 x 1 ms, not the faster of the two.
  std::string html = RenderReportHtml(*data);
  EXPECT_NE(html.find("<h3>Adreno 640 (fp-old-driver)</h3>"), std::string::npos);
  EXPECT_NE(html.find("<h3>Adreno 640 (fp-new-driver)</h3>"), std::string::npos);
  EXPECT_NE(html.find("<b>8.0000</b>"), std::string::npos);
  EXPECT_NE(html.find("<b>2.0000</b>"), std::string::npos);
}

// A faster record whose config is not in the template's space on its device (a hand-edited log, an import) is
// passed over, as `best` and the exports pass it over; the page says so. It had been the report's best alone.
TEST_F(ReportDataTest, GivenAFasterConfigOutsideTheSpace_TheBestShouldBeBestsAndThePageSaySo) {
  const proto::DeviceInfo cpu = PoclLikeDevice();
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  const Task task = Task::Parse("gemm:64,64,64:float32").value();
  const Space space = gemm->MakeSpace(task, DeviceLimits::From(cpu)).value();
  const int64_t dev = log_->UpsertDevice(cpu).value();
  const int64_t task_id = log_->UpsertTask(task.ToSpec(), task.op, "{}", gemm->Flops(task)).value();
  const int64_t tmpl = log_->UpsertTemplate(gemm->name(), gemm->version()).value();
  nlohmann::json outside = space.ToJson(gemm->Fallback(task, space));
  outside["MWG"] = 12;  // no choice of the knob
  const nlohmann::json fallback = space.ToJson(gemm->Fallback(task, space));
  for (const auto& [config, cost] : {std::pair{outside, 1e-4}, std::pair{fallback, 4e-4}}) {
    RecordRow r;
    r.task_id = task_id;
    r.template_id = tmpl;
    r.device_id = dev;
    r.config = config.dump();
    r.costs = {cost};
    r.mean_cost = cost;
    r.timestamp = 1;
    ASSERT_TRUE(log_->AddRecord(r).ok());
  }

  auto data = LoadReportData(*log_, notes_);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->series.size(), 1u);
  EXPECT_EQ(data->series[0].best_in_space, 4e-4);
  EXPECT_NE(notes_.str().find("1 faster config(s) passed over, not in the template's space"), std::string::npos)
      << notes_.str();
  const std::string html = RenderReportHtml(*data);
  EXPECT_NE(html.find("best 0.4000 ms"), std::string::npos) << html;
  EXPECT_EQ(html.find("best 0.1000 ms"), std::string::npos) << html;
  EXPECT_NE(html.find("(faster configs passed over: not in the template's space on this device"), std::string::npos)
      << html;
}

TEST_F(ReportDataTest, GivenAnEmptyLog_WeShouldGetNoSeries) {
  auto data = LoadReportData(*log_, notes_);
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE(data->series.empty());
  EXPECT_EQ(data->source, (dir_ / "tune.db").string());
}

}  // namespace
}  // namespace tunefleet
