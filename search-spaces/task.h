// A tuning task: one operator workload, as written on the command line ("gemm:256,256,256:float32").
// Thread safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tunefleet {

// Precision of a task: storage type and accumulation type.
enum class Precision { kFloat32, kFloat16, kFloat16Acc32 };
const char* PrecisionName(Precision p);  // "float32", "float16", "float16-acc32"
Result<Precision> ParsePrecision(std::string_view s);

struct Task {
  std::string op;  // "gemm", "conv2d", "dwconv2d", "pool", ...
  // Named integer parameters in the op's canonical order, e.g. gemm: M, N, K (+ optional extras such as
  // batch=, transb=, bias=, act=). The spec is "op:v1,v2,...[,name=value...][:dtype]".
  std::vector<std::pair<std::string, int64_t>> params;
  Precision precision = Precision::kFloat32;

  // Value of a named parameter, or `fallback` when absent.
  int64_t Get(std::string_view name, int64_t fallback = 0) const;
  bool Has(std::string_view name) const;
  // Canonical spec: positional params, then the extras that differ from their defaults, then dtype.
  std::string ToSpec() const;
  bool operator==(const Task& o) const { return ToSpec() == o.ToSpec(); }

  // Parses a spec. Errors name the spec and what is wrong ("gemm:256,x,256: 'x' is not an integer").
  // The op must have a signature (op_signature.h); Parse stores every parameter of the signature, extras
  // absent from the spec with their defaults, so params always follow the signature's order.
  static Result<Task> Parse(std::string_view spec);
};

// Fused activation of an epilogue (dense layers, convolutions). Stored in Task params as its int value
// ("act=relu" -> 1); the numbers are part of the spec/database contract: append, never renumber.
enum class Activation : int64_t { kNone = 0, kRelu = 1, kRelu6 = 2, kSigmoid = 3, kTanh = 4, kLeakyRelu = 5 };
const char* ActivationName(Activation a);  // "none", "relu", "relu6", "sigmoid", "tanh", "leaky_relu"
// The names in value order, for op signatures that accept "act=<name>".
const std::vector<std::string>& ActivationNames();
// OpenCL C expression applying `a` to the float expression `x` (e.g. "fmax(x, 0.0f)"); `x` is evaluated
// once per occurrence, so pass a plain variable name. kLeakyRelu uses slope 0.1.
std::string ActivationExpr(Activation a, const std::string& x);

}  // namespace tunefleet
