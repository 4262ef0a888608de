#include "search-spaces/op_signature.h"

#include "search-spaces/task.h"

namespace tunefleet {
namespace {

ParamSpec Param(std::string name, int64_t def, int64_t min, int64_t max = kMaxTaskSize,
                std::vector<std::string> symbols = {}) {
  ParamSpec p;
  p.name = std::move(name);
  p.default_value = def;
  p.min = min;
  p.max = max;
  p.symbols = std::move(symbols);
  return p;
}
ParamSpec Size(std::string name) { return Param(std::move(name), 1, 1); }
ParamSpec Flag(std::string name) { return Param(std::move(name), 0, 0, 1); }
ParamSpec NonNegative(std::string name) { return Param(std::move(name), 0, 0); }
ParamSpec Act() {
  return Param("act", 0, 0, static_cast<int64_t>(ActivationNames().size()) - 1, ActivationNames());
}

std::vector<OpSignature> BuildTable() {
  std::vector<OpSignature> t;
  // C[b] = A[b] (MxK) * B[b] (KxN, or NxK with transb=1) (+ bias[N]) then act.
  t.push_back({"gemm", {Size("M"), Size("N"), Size("K")}, 3,
               {Size("batch"), Flag("transb"), Flag("bias"), Act()}});
  // NCHW input, K output channels, KHxKW filter.
  t.push_back({"conv2d",
               {Size("N"), Size("C"), Size("H"), Size("W"), Size("K"), Size("KH"), Size("KW"), Size("stride"),
                NonNegative("pad")},
               9,
               {Size("dilation"), Size("groups"), Flag("bias"), Flag("relu"), Act()}});
  t.push_back({"dwconv2d",
               {Size("N"), Size("C"), Size("H"), Size("W"), Size("KH"), Size("KW"), Size("stride"),
                NonNegative("pad")},
               8,
               {Size("dilation"), Size("multiplier"), Flag("bias"), Flag("relu"), Act()}});
  ParamSpec mode = Param("mode", 0, 0, 1, {"max", "avg"});
  t.push_back({"pool",
               {Size("N"), Size("C"), Size("H"), Size("W"), Size("KH"), Size("KW"), Size("stride"),
                NonNegative("pad")},
               8,
               {mode, Flag("global")}});
  ParamSpec kind = Param("kind", 0, 0, 5, {"add", "mul", "sub", "relu", "relu6", "sigmoid"});
  t.push_back({"elementwise", {Size("N"), Size("C"), Size("H"), Size("W")}, 4, {kind}});
  return t;
}

}  // namespace

std::string OpSignature::Usage() const {
  std::string s;
  for (size_t i = 0; i < positional.size(); ++i) {
    if (i == required) s += "[";
    if (i > 0) s += ",";
    s += positional[i].name;
  }
  if (required < positional.size()) s += "]";
  return s;
}

const ParamSpec* OpSignature::Find(std::string_view name) const {
  for (const auto& p : positional)
    if (p.name == name) return &p;
  for (const auto& p : extras)
    if (p.name == name) return &p;
  return nullptr;
}

const std::vector<OpSignature>& OpSignatures() {
  static const std::vector<OpSignature> kTable = BuildTable();
  return kTable;
}

const OpSignature* FindOpSignature(std::string_view op) {
  for (const auto& s : OpSignatures())
    if (s.op == op) return &s;
  return nullptr;
}

}  // namespace tunefleet
