// The second step of a split-K convolution: `split` work-groups each wrote the partial sums of one slice of the
// channel reduction into a float scratch buffer "partial" ([split][N][K][OH][OW]); this kernel adds the slices,
// then the bias and the activation, and stores the output in the task's precision. Timed, like the first step.
// Thread safety: free functions over values.
#pragma once

#include <string>

#include "proto/tunefleet.pb.h"
#include "search-spaces/conv_common.h"

namespace tunefleet {

// Binds the arguments every split-capable convolution kernel takes: data, weight, bias (weight when the shape has
// none), out, partial (out without a split: unused then).
void ArgSplitConvKernel(proto::KernelLaunch* launch, const ConvShape& s, int64_t split);
// Source of kernel "conv2d_split_reduce"; it expects TypePreamble and "#define N/K/OH.." from the source it is
// appended to, so it defines only what it needs under its own names.
std::string SplitReduceSource(const ConvShape& s, int64_t split);
// Adds the timed launch of "conv2d_split_reduce" (from `source`) over every output element: args partial,
// bias (or out when the shape has none), out.
void AddSplitReduceLaunch(const ConvShape& s, const std::string& source, proto::KernelProgram* program);

}  // namespace tunefleet
