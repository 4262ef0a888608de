// conv2d_winograd: Winograd F(m x m, 3 x 3) convolution for 3x3, stride-1, dilation-1, ungrouped conv2d,
// with m = 2 (F(2,3), 4x4 tiles) or m = 4 (F(4,3), 6x6 tiles) as the first knob.
// Launches: kernel transform U = G g G^T (SETUP: weights are constants of the model), then TIMED: input
// transform V = B^T d B, the batched GEMM M[e] = U[e] V[e] over the alpha^2 tile positions (the tuned part),
// and the output transform Y = A^T M A with fused bias / activation, written as canonical NCHW.
// Knobs: tile_size (2, 4); GEMM tiling k_thread, k_inner (output channels), p_thread, p_inner (tiles),
// c_step (input channels staged per __local step); auto_unroll_max_step (0, 512). Tails are guarded, so
// every value fits every shape; constraints reject tiles that are mostly empty and device-limit violations.
// Precision: the intermediate buffers U, V and M have the task's storage type (half for float16 and
// float16-acc32, accessed through conv_common.h's LD / ST); float16 needs cl_khr_fp16, float16-acc32 runs on any
// device (float tiles and arithmetic).
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class Conv2dWinogradTemplate final : public Template {
 public:
  std::string name() const override { return "conv2d_winograd"; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "conv2d"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  // FLOPs of the direct convolution (the usual convention, so Winograd and direct costs compare).
  double Flops(const Task& task) const override;
  Config Fallback(const Task& task, const Space& space) const override;
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
};

std::unique_ptr<Template> NewConv2dWinogradTemplate();

}  // namespace tunefleet
