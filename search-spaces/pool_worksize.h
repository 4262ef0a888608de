// pool.worksize: max / average pooling and global pooling over NCHW, tuned only in its work size.
// Task "pool": N,C,H,W,KH,KW,stride,pad [,mode=max|avg][,global=1]; global pooling reduces all of H x W
// (KH, KW, stride, pad ignored). Average pooling divides by the count of in-bounds elements (padding excluded,
// as ONNX AveragePool's default). One work-item per output element; knob local_size (conv_common.h). The reference
// walks all outputs in one work-item. Arithmetic in float; half buffers (float16, float16-acc32) are read and written
// through conv_common.h's LD / ST, so only float16 needs cl_khr_fp16.
#pragma once

#include <memory>

#include "search-spaces/template.h"

namespace tunefleet {

class PoolWorksizeTemplate final : public Template {
 public:
  std::string name() const override { return "pool.worksize"; }
  int version() const override { return 1; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "pool"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  double Flops(const Task& task) const override;  // one operation per window element
  Config Fallback(const Task& task, const Space& space) const override;
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
};

std::unique_ptr<Template> NewPoolWorksizeTemplate();

}  // namespace tunefleet
