// The second step of a split-K convolution: `split` work-groups each wrote the partial sums of one slice of the
// channel reduction into a float scratch buffer "partial" ([split][N][K][OH][OW]); this kernel adds the slices,
// then the bias and the activation, and stores the output in the task's precision. Timed, like the first step.
// Thread safety: free functions over values.
#pragma once

#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"
#include "search-spaces/conv_common.h"

namespace tunefleet {

// Source of kernel "conv2d_split_reduce"; it expects TypePreamble and "#define N/K/OH.." from the source it is
// appended to, so it defines only what it needs under its own names.
std::string SplitReduceSource(const ConvShape& s, int64_t split);
// The whole program of a split-capable convolution template but its reference: the task's buffers, the float
// scratch "partial" when split > 1, the timed launch of `entry` (from `source`) over `global` in work-groups of
// `local`, then with split > 1 the timed launch of "conv2d_split_reduce" (also from `source`, which must hold
// SplitReduceSource) over every output element, and the tolerance of `p`. `entry` takes data, weight, bias
// (weight when the shape has none), out, partial (out without a split: unused then); the reduce kernel partial,
// bias (or out), out.
proto::KernelProgram SplitConvProgram(const ConvShape& s, Precision p, const std::string& source,
                                      const std::string& entry, int64_t split, std::vector<uint64_t> global,
                                      std::vector<uint64_t> local);

}  // namespace tunefleet
