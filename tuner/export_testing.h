// Test helpers for the exporters: a tuning log in a temporary directory (common/temp_dir_testing.h), filled from one
// line of domain text per record through the registered templates (FindTemplate), an Adreno and a small CPU device,
// and a config of the real conv2d_nchwc.image2d space. Test-only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir_testing.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

namespace tunefleet {

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

// A CPU device as PoCL reports one, small: work-groups of 256, 64 KiB of local memory.
inline proto::DeviceInfo PoclLikeDevice() {
  proto::DeviceInfo d;
  d.set_vendor("pocl");
  d.set_name("pthread-cpu");
  d.set_device_type("CPU");
  d.set_max_work_group_size(256);
  for (int i = 0; i < 3; ++i) d.add_max_work_item_sizes(256);
  d.set_local_mem_bytes(64 * 1024);
  d.set_fingerprint("fp-cpu");
  return d;
}

// Adds one record: `status` 0 with `costs` (seconds), or a failure. A registered template's record holds `config` as
// its space (made for `device`) writes it, and must be a valid config of that space; any other template's holds it as
// given.
inline int64_t AddTestRecord(TuningLog& log, const proto::DeviceInfo& device, const std::string& spec,
                             const std::string& tmpl, const nlohmann::json& config, int status,
                             std::vector<double> costs, double timestamp) {
  auto task = Task::Parse(spec);
  EXPECT_TRUE(task.ok()) << task.status().ToString();
  RecordRow r;
  r.device_id = log.UpsertDevice(device).value();
  const Template* t = FindTemplate(tmpl);
  r.task_id = log.UpsertTask(task->ToSpec(), task->op, "{}", t ? t->Flops(*task) : 1e6).value();
  r.template_id = log.UpsertTemplate(tmpl, t ? t->version() : 1).value();
  r.config = config.dump();
  if (t) {
    auto space = t->MakeSpace(*task, DeviceLimits::From(device));
    EXPECT_TRUE(space.ok()) << space.status().ToString();
    auto c = space.ok() ? space->FromJson(config) : Result<Config>(space.status());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) {
      EXPECT_EQ(space->Check(*c), "") << tmpl << " " << spec << " " << config.dump();
      r.config_index = space->IndexOf(*c);
      r.config = space->ToJson(*c).dump();
    }
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

// A conv2d config of conv2d_nchwc.image2d's space for "conv2d:1,32,16,16,32,3,3,1,1" on AdrenoDevice(): tile_fc splits
// the 8 blocks of 4 output channels, tile_rcc the 8 of input channels; a work-group of 4x2x8 = 64 items, 2x2x1 = 4
// virtual threads.
inline nlohmann::json ConvConfig() {
  return {{"tile_fc", {1, 2, 4}}, {"tile_y", {4, 2, 2}},   {"tile_x", {2, 1, 8}},         {"tile_rcc", {2, 4}},
          {"tile_ry", {3, 1}},    {"tile_rx", {1, 3}},     {"auto_unroll_max_step", 512}, {"unroll_explicit", 1}};
}

}  // namespace tunefleet
