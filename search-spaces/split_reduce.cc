#include "search-spaces/split_reduce.h"

#include <sstream>
#include <utility>

namespace tunefleet {

std::string SplitReduceSource(const ConvShape& s, int64_t split) {
  const int64_t count = s.output_count(), plane = s.oh() * s.ow();
  std::ostringstream o;
  o << "__kernel void conv2d_split_reduce(__global const float* restrict partial, __global const T* restrict bias,\n"
       "                                  __global T* restrict out) {\n"
       "  const long i = get_global_id(0);\n"
       "  if (i >= " << count << "L) return;\n"
       "  float v = 0.0f;\n"
       "  #pragma unroll\n"
       "  for (int s = 0; s < " << split << "; ++s) v += partial[s * " << count << "L + i];\n";
  if (s.bias) o << "  v += (float)LD(bias, (i / " << plane << ") % " << s.k << ");\n";
  if (s.act != Activation::kNone) o << "  v = " << ActivationExpr(s.act, "v") << ";\n";
  o << "  ST(out, i, v);\n"
       "}\n";
  return o.str();
}

namespace {

void ArgSplitConvKernel(proto::KernelLaunch* launch, const ConvShape& s, int64_t split) {
  ArgBuffer(launch, "data");
  ArgBuffer(launch, "weight");
  ArgBuffer(launch, s.bias ? "bias" : "weight");
  ArgBuffer(launch, "out");
  ArgBuffer(launch, split > 1 ? "partial" : "out");
}

void AddSplitReduceLaunch(const ConvShape& s, const std::string& source, proto::KernelProgram* program) {
  auto* r = AddLaunch(program, source, "conv2d_split_reduce", proto::KernelLaunch::TIMED,
                      {static_cast<uint64_t>(s.output_count())}, {});  // the driver picks the work-group
  ArgBuffer(r, "partial");
  ArgBuffer(r, s.bias ? "bias" : "out");
  ArgBuffer(r, "out");
}

}  // namespace

proto::KernelProgram SplitConvProgram(const ConvShape& s, Precision p, const std::string& source,
                                      const std::string& entry, int64_t split, std::vector<uint64_t> global,
                                      std::vector<uint64_t> local) {
  proto::KernelProgram prog;
  AddConvBuffers(s, p, &prog);
  if (split > 1) AddZeroBuffer("partial", proto::FLOAT32, split * s.output_count(), &prog);
  auto* l = AddLaunch(&prog, source, entry, proto::KernelLaunch::TIMED, std::move(global), std::move(local));
  ArgSplitConvKernel(l, s, split);
  if (split > 1) AddSplitReduceLaunch(s, source, &prog);
  SetTolerance(p, s.reduce_size(), &prog);
  return prog;
}

}  // namespace tunefleet
