// conv2d_nchwc.image2d: the Adreno texture path. SETUP launches pack the NCHW data into an NCHW4c image2d_t
// and the OIHW weights into an OIHW4o image2d_t (image_pack.h); the TIMED kernel reads 4 channels per pixel
// (read_imagef / read_imageh) and writes canonical NCHW to a buffer directly (no untimed post-step exists).
//
// Knobs and filters mirror TVM's python/tvm/topi/adreno/conv2d_nchw.py (conv2d_nchwc), in its order:
//   tile_fc  3-way split of ceil(K/4) channel blocks (block, vthread, thread): vthread <= 8,
//            2 <= thread (1 when the block count is odd) < 256
//   tile_y, tile_x  3-way splits of output rows / columns: vthread <= 8, thread <= 16
//   tile_rcc, tile_ry, tile_rx  2-way splits of the input channel blocks and kernel rows / columns
//   auto_unroll_max_step (0, 512, 1500), unroll_explicit (0, 1)
// plus: virtual-thread product <= 24, 32 <= work-group < 1024 (32 lowered for layers too small to reach it).
// Ops: conv2d with groups = 1. Needs image support and images within image2d limits.
// Precision: float32; float16-acc32 on any device (CL_HALF_FLOAT images read with read_imagef, half bias and
// output through vload_half / vstore_half_rte, float arithmetic); float16 (read_imageh, half arithmetic) needs
// cl_khr_fp16.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class Conv2dNchwcImage2dTemplate final : public Template {
 public:
  std::string name() const override { return "conv2d_nchwc.image2d"; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "conv2d"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  double Flops(const Task& task) const override;
  Config Fallback(const Task& task, const Space& space) const override;
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
};

std::unique_ptr<Template> NewConv2dNchwcImage2dTemplate();

}  // namespace tunefleet
