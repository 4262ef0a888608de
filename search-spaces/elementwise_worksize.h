// eltwise.worksize: elementwise operators over N x C x H x W, tuned only in their work size.
// Task "elementwise": N,C,H,W [,kind=add|mul|sub|relu|relu6|sigmoid]. Binary kinds read buffers "a" and "b",
// unary kinds read "a"; the result is "out". One work-item per element; knob local_size (conv_common.h).
// The reference is an independent scalar host-order formula in a plain kernel with the driver's work size.
// Arithmetic in float; half buffers go through conv_common.h's LD / ST, so only float16 needs cl_khr_fp16.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class ElementwiseWorksizeTemplate final : public Template {
 public:
  std::string name() const override { return "eltwise.worksize"; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "elementwise"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  double Flops(const Task& task) const override;  // one operation per element
  Config Fallback(const Task& task, const Space& space) const override;
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
};

std::unique_ptr<Template> NewElementwiseWorksizeTemplate();

}  // namespace tunefleet
