// gemm.buffer: the register-tiled GEMM template over plain buffers (see gemm_config.h for the knobs and
// gemm_kernel.h for the generated code). Serves "gemm" tasks in float32, float16 and float16-acc32. float16
// (half tiles, registers and arithmetic) needs cl_khr_fp16; float16-acc32 runs on any device: its buffers hold
// half, read with vload_half(N) and written with vstore_half(N) (core OpenCL), and the local tiles, registers and
// arithmetic are float.
//
// Kernel program: buffers A (RANDOM, seed 1), B (RANDOM, seed 2), bias (RANDOM, seed 3, when bias=1), all in
// [-1, 1), and C (ZEROS); one TIMED launch; output_buffer "C" holds batch×M×N row-major. The reference uses
// the same buffers, so both see identical inputs.
// Thread safety: stateless; share freely.
#pragma once

#include <memory>

#include "search-spaces/gemm_config.h"
#include "search-spaces/template.h"

namespace tunefleet {

class GemmBufferTemplate final : public Template {
 public:
  static constexpr int kVersion = 1;

  std::string name() const override { return "gemm.buffer"; }
  int version() const override { return kVersion; }
  bool Supports(const Task& task, const DeviceLimits& limits, std::string* why) const override;
  bool RunsOp(const std::string& op) const override { return op == "gemm"; }
  Result<Space> MakeSpace(const Task& task, const DeviceLimits& limits) const override;
  Result<proto::KernelProgram> Generate(const Task& task, const Space& space, const Config& c) const override;
  proto::KernelProgram Reference(const Task& task) const override;
  double Flops(const Task& task) const override;
  Config Fallback(const Task& task, const Space& space) const override;
  // Order: work-group size, outputs per item, work-groups per compute unit, local bytes, VWM, VWN, VWK,
  // K unroll, registers estimate, arithmetic intensity of a work-group tile (flops per global byte).
  std::vector<float> DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                     const DeviceLimits& limits) const override;
  double WorkItems(const Task& task, const Space& space, const Config& c) const override;
  // No: a GEMM's fast configs give each work-item a register tile of the output (fewer items, each reusing what it
  // loads), which the prior, counting items against the device's capacity, scores down. On the H200 (2 agents, 64
  // trials, 8 seeds) the prior's runs ended at a median of 13.5k GFLOPS on 1024^3 against 26.9k with a random first
  // plan and models of the results alone, and 10.0k against 11.7k on 512^3, while the 1x1 conv buffer template
  // gained (714 against 592) and the NCHW one drew (bench/results/h200-2026-12-04-device-prior-gemm.md).
  bool FollowsDevicePrior() const override { return false; }

  // Error tolerances of the comparison with the reference, per precision (grow with K).
  static void Tolerance(const GemmShape& shape, float* rtol, float* atol);
};

std::unique_ptr<Template> MakeGemmBufferTemplate();

}  // namespace tunefleet
