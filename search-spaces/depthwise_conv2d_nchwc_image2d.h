// depthwise_conv2d_nchwc.image2d: depthwise convolution on the texture path. Data packed NCHW -> NCHW4c and
// weights [C][1][KH][KW] -> one pixel of 4 channels per (r, q) (image_pack.h), both in SETUP launches; the
// TIMED kernel multiplies 4 channels per pixel read and writes canonical NCHW to a buffer.
// Knobs mirror TVM's python/tvm/topi/adreno/depthwise_conv2d_nchw.py, in its order and without split filters:
//   tile_fc, tile_y, tile_x (3-way), tile_ry, tile_rx (2-way), auto_unroll_max_step (0, 512, 1500),
//   unroll_explicit (0, 1); plus virtual-thread product <= 24 and 32 <= work-group < 1024 (lowered for layers
//   too small to reach 32) and the device's work-group limits.
// Ops: dwconv2d with multiplier 1, or conv2d with groups = C = K. Precision as conv2d_nchwc.image2d: float16-acc32
// runs on any device, float16 needs cl_khr_fp16.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class DepthwiseConv2dNchwcImage2dTemplate final : public Template {
 public:
  std::string name() const override { return "depthwise_conv2d_nchwc.image2d"; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "conv2d" || op == "dwconv2d"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  double Flops(const Task& task) const override;
  Config Fallback(const Task& task, const Space& space) const override;
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
};

std::unique_ptr<Template> NewDepthwiseConv2dNchwcImage2dTemplate();

}  // namespace tunefleet
