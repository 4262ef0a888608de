// conv2d_nchw.buffer: direct convolution on NCHW buffers, register-tiled with local-memory reuse.
//
// Knobs, in the order of TVM's CUDA conv2d_nchw template (so configs export as AutoTVM records):
//   tile_f, tile_y, tile_x  4-way splits of output channels / rows / columns: (block, virtual thread,
//                           thread, inner). A work-group computes a (TF = v*t*i) x (TY) x (TX) output tile of
//                           one image; each work-item holds (fv*fi) x (yv*yi) x (xv*xi) accumulators.
//   tile_rc, tile_ry, tile_rx  2-way splits (outer, inner) of the reduction over input channels (of one
//                           group) and kernel rows / columns. Per outer step the work-group stages the input
//                           patch (rc_i channels) and the weights (TF x rc_i x ry_i x rx_i) in __local memory.
//   auto_unroll_max_step    0, 512, 1500: the inner reduction nest is unrolled when rc_i*ry_i*rx_i <= it.
//   unroll_explicit         0, 1: unrolling by the generator (copies with constant offsets, 1) or by the
//                           OpenCL compiler through "#pragma unroll" (0).
//   split_rc                1, 2, 4, 8, 16 (tunefleet's own, after TVM's knobs): split-K. That many work-groups
//                           share one output tile, each reducing 1/split of the outer channel steps into a float
//                           scratch buffer; a second timed kernel adds the slices, then bias and activation. Deep
//                           layers with small outputs (7×7×512) otherwise have fewer work-groups than a GPU has
//                           compute units. Version 2 of the template (version 1 had no split).
// Handles stride, padding, dilation, groups (a work-group's channels stay within one group), fused bias and
// activation; ops "conv2d" and "dwconv2d"; float32, float16 (needs cl_khr_fp16) and float16-acc32 (half buffers
// through vload_half / vstore_half_rte, float tiles and arithmetic: any device). Local-memory use counts the
// staged type (conv_common.h's LT): 4 bytes, 2 for float16.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class Conv2dNchwBufferTemplate final : public Template {
 public:
  std::string name() const override { return "conv2d_nchw.buffer"; }
  int version() const override { return 2; }
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

std::unique_ptr<Template> NewConv2dNchwBufferTemplate();

}  // namespace tunefleet
