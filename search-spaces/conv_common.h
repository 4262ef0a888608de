// Pieces shared by the convolution family (conv2d, depthwise, winograd) and the work-size templates:
// the convolution shape read from a Task, precision → OpenCL types, buffer specs, split choices with
// TVM-style filters, the trusted reference convolution and the kernel-source helpers.
// Thread safety: free functions over values; no state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

// A 2-D convolution in NCHW / OIHW layout. Weights are [K][C/groups][KH][KW].
struct ConvShape {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t k = 1, kh = 1, kw = 1;       // output channels, kernel size
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  bool bias = false;
  Activation act = Activation::kNone;  // applied after the bias ("relu=1" or "act=<name>")

  int64_t oh() const { return (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1; }
  int64_t ow() const { return (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1; }
  int64_t c_per_group() const { return c / groups; }
  int64_t k_per_group() const { return k / groups; }
  int64_t input_count() const { return n * c * h * w; }
  int64_t weight_count() const { return k * c_per_group() * kh * kw; }
  int64_t output_count() const { return n * k * oh() * ow(); }
  // Multiply-adds per output element.
  int64_t reduce_size() const { return c_per_group() * kh * kw; }
  double Flops() const { return 2.0 * static_cast<double>(output_count()) * static_cast<double>(reduce_size()); }
  bool depthwise() const { return groups == c && groups > 1; }
  int64_t multiplier() const { return k / groups; }  // depthwise channel multiplier
};

// Reads "conv2d" (N,C,H,W,K,KH,KW,stride,pad [,dilation][,groups][,bias][,relu][,act]) or "dwconv2d"
// (N,C,H,W,KH,KW,stride,pad [,dilation][,multiplier][,bias][,relu][,act]: groups = C, K = C * multiplier)
// from a Task and checks it
// (positive sizes, non-empty output, channels divisible by groups). Errors name the task spec.
Result<ConvShape> ConvShapeFromTask(const Task& task);

// Precision → element type and OpenCL C types.
//   float32        float buffers, float arithmetic.
//   float16        half buffers, half arithmetic: needs cl_khr_fp16.
//   float16-acc32  half buffers (storage only: vload_half / vstore_half, half images read with read_imagef),
//                  float arithmetic: core OpenCL, runs on any device.
proto::ElemType StorageType(Precision p);      // FLOAT32 or FLOAT16
const char* StorageCType(Precision p);         // "float" / "half"
const char* AccumCType(Precision p);           // "float" / "half" (float16 accumulates in half)
bool NeedsFp16(Precision p);                   // true for float16 only
// The kernel preamble for precision `p`: "#pragma OPENCL EXTENSION cl_khr_fp16 : enable" for float16, then
//   T          element type of global buffers (float / half; a half pointer needs no extension)
//   ACC        arithmetic type (float / half)
//   LT         type of values staged in __local memory and registers (ACC)
//   LD(p, i)   element i of a global T* p, as LT (vload_half for float16-acc32)
//   ST(p, i, v) stores v, rounded to T, as element i of a global T* p (vstore_half_rte for float16-acc32)
std::string TypePreamble(Precision p);

// True when the device can run precision `p`; else sets `why` to "device has no cl_khr_fp16".
bool PrecisionSupported(Precision p, const DeviceLimits& limits, std::string* why);

// Comparison tolerance for an output element that sums `reduce` products.
void SetTolerance(Precision p, int64_t reduce, proto::KernelProgram* program);

// Buffer spec helpers. Random inputs lie in [-1, 1) from `seed`; the same spec in candidate and reference
// means the same contents.
void AddRandomBuffer(const std::string& name, Precision p, int64_t count, uint64_t seed,
                     proto::KernelProgram* program);
void AddZeroBuffer(const std::string& name, proto::ElemType type, int64_t count, proto::KernelProgram* program);
// The program's output buffer, filled with NaN (proto::BufferSpec::NANS): every element must be written by the
// launches, so that one left unwritten fails the check rather than pass where the reference is 0.
void AddOutputBuffer(const std::string& name, proto::ElemType type, int64_t count, proto::KernelProgram* program);

// Launch helpers.
proto::KernelLaunch* AddLaunch(proto::KernelProgram* program, std::string source, std::string entry,
                               proto::KernelLaunch::Phase phase, std::vector<uint64_t> global,
                               std::vector<uint64_t> local);
void ArgBuffer(proto::KernelLaunch* launch, const std::string& name);
void ArgImage(proto::KernelLaunch* launch, const std::string& name);

// Ordered factorizations of `extent` into `parts` factors (product == extent), outer factor first, that
// pass `keep` (may be empty). Order: lexicographic on the factors from the innermost part outwards, so the
// list is stable across runs.
std::vector<std::vector<int64_t>> FactorSplits(int64_t extent, int parts,
                                               const std::function<bool(const std::vector<int64_t>&)>& keep = {});
// A split knob built from FactorSplits.
Knob SplitKnob(const std::string& name, int64_t extent, int parts,
               const std::function<bool(const std::vector<int64_t>&)>& keep = {});

// A deterministic pick among valid configs: the highest `score` among the valid configs found by `samples`
// draws from a fixed seed (a fallback that needs no tuning); FromIndex(0) when none is found.
Config PickByScore(const Space& space, const std::function<double(const ConfigView&)>& score, int samples = 200);

// Work-size-only templates (pool, elementwise): one list knob "local_size" with 0 = NULL local size (the
// driver's choice, sent as an empty local_size) then 16 .. 1024 in powers of two, constrained by the device's
// work-group limits. One work-item per output; the global size is rounded up to the local size.
void AddLocalSizeKnob(const DeviceLimits& limits, Space* space);
std::vector<uint64_t> LocalSizeOf(int64_t local_size);  // {} for 0
uint64_t GlobalSizeFor(int64_t items, int64_t local_size);

// Round `v` up to a multiple of `m` (m > 0).
inline uint64_t RoundUp(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// "acc = <activation of acc>;\n" for the shape's activation, or "" for none.
std::string ActivationStatement(Activation a, const std::string& var);

// The trusted convolution (one work-item per output, float accumulation, fused bias/activation when the shape
// asks): buffers "data", "weight", ["bias"], output "out" in NCHW. Candidates declare the same inputs.
proto::KernelProgram ReferenceConv(const ConvShape& s, Precision p);
// Reference() and Flops() of the convolution templates: the canonical convolution of the task (an empty program
// / 0 when the task is not a convolution).
proto::KernelProgram ConvReference(const Task& task);
double ConvFlops(const Task& task);
// Declares the reference's inputs and output in `program` (same names, seeds, counts as ReferenceConv).
void AddConvBuffers(const ConvShape& s, Precision p, proto::KernelProgram* program);

// "conv2d" / "dwconv2d" spec name checks.
bool IsConvOp(const std::string& op);

}  // namespace tunefleet
