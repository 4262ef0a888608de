// Op signatures: the parameter names each operator's task spec accepts, so "conv2d:1,64,56,56,64,3,3,1,1"
// parses into named params. One table (op_signature.cc) lists every op; add a row to add an op.
// Thread safety: the table is immutable and shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tunefleet {

// The largest value of a task's size (a dimension, a kernel size, a stride): 2^24. A dimension of 2^31 made the
// split enumeration run for ever, and sizes near 2^63 wrapped the element counts.
inline constexpr int64_t kMaxTaskSize = int64_t{1} << 24;

struct ParamSpec {
  std::string name;
  int64_t default_value = 0;  // used when an optional parameter is absent
  int64_t min = 1;            // inclusive bounds checked by Task::Parse
  int64_t max = kMaxTaskSize;
  // When not empty, the value may also be written as a name: symbols[i] means i ("act=relu" -> 1).
  std::vector<std::string> symbols;
};

struct OpSignature {
  std::string op;
  // Written first, in order, without names. The first `required` must be present; the rest take defaults.
  std::vector<ParamSpec> positional;
  size_t required = 0;
  // Written as name=value after the positional ones, in any order, each at most once.
  std::vector<ParamSpec> extras;
  // Human form for errors, e.g. "M,N,K".
  std::string Usage() const;
  const ParamSpec* Find(std::string_view name) const;
};

const std::vector<OpSignature>& OpSignatures();
const OpSignature* FindOpSignature(std::string_view op);  // nullptr when unknown

}  // namespace tunefleet
