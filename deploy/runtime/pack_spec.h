// Workload specs as a kernel pack holds them ("op:v1,v2,...[,name=value...]:precision", Task::ToSpec's form):
// the strict parse that KernelPack::Parse applies to every entry's task and Find to an application's query, and
// the distance between two workloads of one op that picks the nearest tuned kernel.
// Thread safety: plain functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tunefleet::runtime {

// A workload spec split into its parts.
struct SpecParts {
  std::string op;
  std::vector<uint64_t> sizes;
  std::map<std::string, std::string> extras;
  std::string precision;
};

// A named parameter of an op as the exporter describes it (a pack's "spec_extras"): the value it takes when a spec
// leaves it out, and the names its values may be written as (names[i] means i, as in "act=relu").
struct ExtraSpec {
  int64_t default_value = 0;
  std::vector<std::string> names;
};
using OpExtras = std::map<std::string, ExtraSpec>;  // by parameter name

// `parts` with each named parameter that `extras` describes written as the tuner writes it: left out where it is
// its default ("gemm:64,64,64,batch=1" is "gemm:64,64,64"), by name where its value has one ("act=1" is
// "act=relu"). A parameter `extras` does not describe, or a value that is neither an integer nor one of its names,
// is left as it is (no kernel will match it).
SpecParts Canonical(SpecParts parts, const OpExtras& extras);

// Sum of |log(a/b)| over positional sizes; infinite when the shapes of the specs differ (count of sizes, extras).
double Distance(const SpecParts& a, const SpecParts& b);

// The exporter's form exactly: sizes non-negative integers written as Task::ToSpec writes them (digits only, no
// sign, space or leading zero, below 2^63), names identifiers, values words (a value that begins with a digit such an
// integer), a known precision. Corruption errors say what is wrong, not where (the caller names the entry).
Result<SpecParts> ParseTaskSpec(const std::string& spec);

// An application's workload: ParseTaskSpec's form, where a missing precision ("gemm:64,64,64") is float32.
Result<SpecParts> ParseWorkload(const std::string& spec);

// [A-Za-z_][A-Za-z0-9_]*: an OpenCL C kernel name, an op or parameter name.
bool IsIdentifier(const std::string& s);

}  // namespace tunefleet::runtime
