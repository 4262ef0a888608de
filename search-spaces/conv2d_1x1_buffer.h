// conv2d_1x1.buffer: pointwise (1×1) convolution on NCHW buffers, as a GEMM of the weights [K][C] with the
// (strided) input pixels [C][OH·OW], one image at a time. tunefleet's own template (TVM has no 1×1-only one).
//
// Why a template of its own: a 1×1 layer reuses no input pixel across neighbouring outputs, so the generic
// direct template's staging of input patches in __local memory buys nothing, and with stride 2 half of what it
// stages is never read. Here each work-item reads its pixels straight from global memory (neighbouring
// work-items read neighbouring pixels), and the weights, shared by every work-item of a work-group, come from
// the cache or from a __local tile.
//
// Knobs:
//   tile_k    3-way split of the output channels: (block, thread, inner). A work-item holds `inner` channels.
//   tile_p    3-way split of the output pixels OH·OW: (block, thread, inner). A work-item holds `inner` pixels,
//             `thread` apart, so the threads of a work-group read adjacent pixels.
//   tile_c    2-way split of the input channels: (outer, inner); `inner` channels per step of the loop.
//   split_c   1, 2, 4, 8, 16: split-K. That many work-groups share one output tile, each reducing 1/split of the
//             outer channel steps into a float scratch buffer; a second timed kernel adds the slices, then bias
//             and activation.
//   cache_w   0: weights are read from global memory (one address per channel, shared by the work-group);
//             1: each step stages the work-group's weight tile in __local memory first.
//   unroll    0, 1: the inner channel loop is unrolled ("#pragma unroll") or not.
// Handles stride, padding, fused bias and activation, batches; op "conv2d" with a 1×1 kernel and one group;
// float32, float16, float16-acc32.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class Conv2d1x1BufferTemplate final : public Template {
 public:
  std::string name() const override { return "conv2d_1x1.buffer"; }
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

std::unique_ptr<Template> NewConv2d1x1BufferTemplate();

}  // namespace tunefleet
