// Workload specs as a kernel pack holds them ("op:v1,v2,...[,name=value...]:precision", Task::ToSpec's form):
// the strict parse that KernelPack::Parse applies to every entry's task, the lenient split that Find applies to
// an application's query, and the distance between two workloads of one op that picks the nearest tuned kernel.
// Thread safety: plain functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tunefleet::runtime {

// A workload spec split into its parts; positional values as written.
struct SpecParts {
  std::string op;
  std::vector<double> sizes;
  std::map<std::string, std::string> extras;
  std::string precision;
};

// Splits any text at ':' and ','; a missing precision is float32. Never fails: what does not parse matches nothing.
SpecParts SplitSpec(const std::string& spec);

// Sum of |log(a/b)| over positional sizes; infinite when the shapes of the specs differ (count of sizes, extras).
double Distance(const SpecParts& a, const SpecParts& b);

// The exporter's form exactly: sizes non-negative integers, names identifiers, values words, a known precision.
// Corruption errors say what is wrong, not where (the caller names the entry).
Result<SpecParts> ParseTaskSpec(const std::string& spec);

// [A-Za-z_][A-Za-z0-9_]*: an OpenCL C kernel name, an op or parameter name.
bool IsIdentifier(const std::string& s);

}  // namespace tunefleet::runtime
