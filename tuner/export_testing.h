// Test helpers for the exporters: a tuning log in a temporary directory (common/temp_dir_testing.h), filled from one
// line of domain text per record, and a stand-in for the Adreno texture convolution template whose space mirrors TVM's
// knobs (tile_fc, tile_y, tile_x, tile_rcc, tile_ry, tile_rx, auto_unroll_max_step, unroll_explicit), so
// the AutoTVM mapping is tested whether or not the real template is built. Test-only.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir_testing.h"
#include "search-spaces/conv_common.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {

class TvmMirrorConvTemplate final : public Template {
 public:
  explicit TvmMirrorConvTemplate(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits&, std::string*) const override {
    return task.op == "conv2d" || task.op == "dwconv2d";
  }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits&) const override {
    TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
    Space space;
    space.AddSplit("tile_fc", s.k, 3).AddSplit("tile_y", s.oh(), 3).AddSplit("tile_x", s.ow(), 3);
    if (!s.depthwise()) space.AddSplit("tile_rcc", s.c, 2);
    space.AddSplit("tile_ry", s.kh, 2).AddSplit("tile_rx", s.kw, 2);
    space.AddList("auto_unroll_max_step", {0, 512, 1500}).AddList("unroll_explicit", {0, 1});
    return space;
  }
  Result<proto::KernelProgram> Generate(const Task&, const Space&, const Config&) const override {
    return proto::KernelProgram();
  }
  proto::KernelProgram Reference(const Task&) const override { return {}; }
  double Flops(const Task& task) const override {
    auto s = ConvShapeFromTask(task);
    return s.ok() ? s->Flops() : 0;
  }
  Config Fallback(const Task&, const Space& space) const override { return Config(space.knobs().size(), 0); }
  std::vector<float> DerivedFeatures(const Task&, const Space&, const Config&, const DeviceLimits&) const override {
    return {};
  }
  double WorkItems(const Task&, const Space&, const Config&) const override { return 0; }

 private:
  std::string name_;
};

// A registry of the two mirror templates, for TemplateLookup.
inline const Template* LookupMirrorTemplate(const std::string& name) {
  static const TvmMirrorConvTemplate conv("conv2d_nchwc.image2d");
  static const TvmMirrorConvTemplate dw("depthwise_conv2d_nchwc.image2d");
  if (name == conv.name()) return &conv;
  if (name == dw.name()) return &dw;
  return nullptr;
}

inline proto::DeviceInfo AdrenoDevice() {
  proto::DeviceInfo d;
  d.set_vendor("QUALCOMM");
  d.set_name("QUALCOMM Adreno(TM) 740");
  d.set_driver_version("OpenCL 3.0 QUALCOMM build: 0800.14");
  d.set_device_version("OpenCL 3.0 Adreno(TM) 740");
  d.set_device_type("GPU");
  d.set_max_work_group_size(1024);
  d.set_image_support(true);
  d.set_image2d_max_width(16384);
  d.set_image2d_max_height(16384);
  d.set_fp16(true);
  d.set_fingerprint("adreno740-0800.14");
  return d;
}

// Adds one record: `status` 0 with `costs` (seconds), or a failure.
inline int64_t AddTestRecord(TuningLog& log, const proto::DeviceInfo& device, const std::string& spec,
                             const std::string& tmpl, const nlohmann::json& config, int status,
                             std::vector<double> costs, double timestamp) {
  auto task = Task::Parse(spec);
  EXPECT_TRUE(task.ok()) << task.status().ToString();
  RecordRow r;
  r.device_id = log.UpsertDevice(device).value();
  const Template* t = LookupMirrorTemplate(tmpl);
  r.task_id = log.UpsertTask(task->ToSpec(), task->op, "{}", t ? t->Flops(*task) : 1e6).value();
  r.template_id = log.UpsertTemplate(tmpl, 1).value();
  if (t) {
    auto space = t->MakeSpace(*task, DeviceLimits::From(device));
    auto c = space->FromJson(config);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    r.config_index = space->IndexOf(*c);
    r.config = space->ToJson(*c).dump();
  } else {
    r.config = config.dump();
  }
  r.status = status;
  r.costs = costs;
  double sum = 0;
  for (double c : costs) sum += c;
  r.mean_cost = costs.empty() ? 0 : sum / costs.size();
  r.wall_time = 1.5;
  r.timestamp = timestamp;
  r.message = status == 0 ? "" : "CL_OUT_OF_RESOURCES";
  return log.AddRecord(r).value();
}

// A conv2d config of the mirror space for "conv2d:1,32,16,16,32,3,3,1,1".
inline nlohmann::json ConvConfig() {
  return {{"tile_fc", {2, 4, 4}}, {"tile_y", {4, 2, 2}},   {"tile_x", {2, 1, 8}},         {"tile_rcc", {8, 4}},
          {"tile_ry", {3, 1}},    {"tile_rx", {1, 3}},     {"auto_unroll_max_step", 512}, {"unroll_explicit", 1}};
}

}  // namespace tunefleet
