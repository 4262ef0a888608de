#include "search-spaces/conv2d_1x1_buffer.h"

#include <cmath>
#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/split_reduce.h"

namespace tunefleet {
namespace {

constexpr int64_t kMaxInner = 8;          // channels or pixels per work-item, each
constexpr int64_t kMaxAccumulators = 64;  // per work-item

struct Tiling {
  int64_t kb, kt, ki, pb, pt, pi, co, ci, split, cache_w, unroll;

  Tiling(const ConfigView& v) {
    const auto& k = v.Factors("tile_k");
    const auto& p = v.Factors("tile_p");
    const auto& c = v.Factors("tile_c");
    kb = k[0], kt = k[1], ki = k[2];
    pb = p[0], pt = p[1], pi = p[2];
    co = c[0], ci = c[1];
    split = v.Value("split_c");
    cache_w = v.Value("cache_w");
    unroll = v.Value("unroll");
  }
  int64_t tk() const { return kt * ki; }
  int64_t tp() const { return pt * pi; }
  int64_t wg() const { return kt * pt; }
  int64_t accumulators() const { return ki * pi; }
  int64_t registers() const { return accumulators() + 2 * pi + ki + 16; }  // + inputs, offsets, weights
  uint64_t local_bytes(Precision p) const {
    return cache_w ? static_cast<uint64_t>(tk() * ci) * (p == Precision::kFloat16 ? 2 : 4) : 0;
  }
};

std::function<bool(const std::vector<int64_t>&)> ThreadFilter(uint64_t max_threads) {
  return [max_threads](const std::vector<int64_t>& f) {
    return static_cast<uint64_t>(f[1]) <= max_threads && f[2] <= kMaxInner;
  };
}

std::string Source(const ConvShape& s, Precision p, const Tiling& t) {
  std::ostringstream o;
  o << TypePreamble(p);
  auto def = [&o](const char* n, int64_t v) { o << "#define " << n << " " << v << "\n"; };
  def("N", s.n), def("C", s.c), def("H", s.h), def("W", s.w), def("K", s.k);
  def("S", s.stride), def("P", s.pad), def("OW", s.ow()), def("OHW", s.oh() * s.ow());
  def("KT", t.kt), def("KI", t.ki), def("TK", t.tk()), def("PT", t.pt), def("PI", t.pi), def("TP", t.tp());
  def("CI", t.ci), def("SPLIT", t.split), def("COS", t.co / t.split);
  const char* unroll = t.unroll ? "#pragma unroll\n" : "#pragma unroll 1\n";
  o << "__kernel __attribute__((reqd_work_group_size(PT, KT, 1)))\n"
       "void conv2d_1x1(__global const T* restrict data, __global const T* restrict weight,\n"
       "                __global const T* restrict bias, __global T* restrict out,\n"
       "                __global float* restrict partial) {\n"
       "  const int tp = get_local_id(0), tk = get_local_id(1);\n"
       "  const int n = get_group_id(2) / SPLIT, split = get_group_id(2) % SPLIT;\n"
       "  const int kbase = get_group_id(1) * TK, k0 = kbase + tk * KI;\n"
       "  const int p0 = get_group_id(0) * TP + tp;\n"
       "  int off[PI];\n"
       "  #pragma unroll\n"
       "  for (int j = 0; j < PI; ++j) {\n"
       "    const int q = p0 + j * PT, iy = (q / OW) * S - P, ix = (q % OW) * S - P;\n"
       "    off[j] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? iy * W + ix : -1;\n"
       "  }\n"
       "  ACC acc[KI][PI];\n"
       "  #pragma unroll\n"
       "  for (int a = 0; a < KI; ++a)\n"
       "    #pragma unroll\n"
       "    for (int j = 0; j < PI; ++j) acc[a][j] = (ACC)0;\n"
       "  const __global T* dn = data + (long)n * C * H * W;\n";
  if (t.cache_w) {
    o << "  __local LT wsh[TK * CI];\n"
         "  const int lid = tk * PT + tp;\n";
  }
  o << "  #pragma unroll 1\n"
       "  for (int co = split * COS; co < (split + 1) * COS; ++co) {\n"
       "    const int c0 = co * CI;\n";
  if (t.cache_w) {
    o << "    for (int i = lid; i < TK * CI; i += PT * KT)\n"
         "      wsh[i] = LD(weight, (long)(kbase + i / CI) * C + c0 + i % CI);\n"
         "    barrier(CLK_LOCAL_MEM_FENCE);\n";
  }
  o << "    " << unroll << "    for (int ci = 0; ci < CI; ++ci) {\n"
    << "      LT d[PI], w[KI];\n"
       "      #pragma unroll\n"
       "      for (int j = 0; j < PI; ++j) d[j] = off[j] >= 0 ? LD(dn, (long)(c0 + ci) * (H * W) + off[j]) : (LT)0;\n"
       "      #pragma unroll\n"
       "      for (int a = 0; a < KI; ++a) w[a] = "
    << (t.cache_w ? "wsh[(tk * KI + a) * CI + ci]" : "LD(weight, (long)(k0 + a) * C + c0 + ci)") << ";\n"
    << "      #pragma unroll\n"
       "      for (int a = 0; a < KI; ++a)\n"
       "        #pragma unroll\n"
       "        for (int j = 0; j < PI; ++j) acc[a][j] = mad(w[a], d[j], acc[a][j]);\n"
       "    }\n";
  if (t.cache_w) o << "    barrier(CLK_LOCAL_MEM_FENCE);\n";
  o << "  }\n"
       "  #pragma unroll\n"
       "  for (int a = 0; a < KI; ++a) {\n"
       "    const int k = k0 + a;\n"
       "    #pragma unroll\n"
       "    for (int j = 0; j < PI; ++j) {\n"
       "      const int q = p0 + j * PT;\n"
       "      float v = (float)acc[a][j];\n";
  if (t.split > 1) {
    o << "      partial[(((long)split * N + n) * K + k) * OHW + q] = v;\n";
  } else {
    if (s.bias) o << "      v += (float)LD(bias, k);\n";
    if (s.act != Activation::kNone) o << "      v = " << ActivationExpr(s.act, "v") << ";\n";
    o << "      ST(out, ((long)n * K + k) * OHW + q, v);\n";
  }
  o << "    }\n"
       "  }\n"
       "}\n";
  if (t.split > 1) o << SplitReduceSource(s, t.split);
  return o.str();
}

Result<ConvShape> PointwiseShape(const Task& task) {
  if (task.op != "conv2d") return Status::InvalidArgument("not a conv2d");
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  if (s.kh != 1 || s.kw != 1) return Status::InvalidArgument("not a 1×1 kernel");
  if (s.groups != 1) return Status::InvalidArgument("grouped convolution");
  return s;
}

}  // namespace

bool Conv2d1x1BufferTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  Result<ConvShape> s = PointwiseShape(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  return PrecisionSupported(task.precision, limits, why);
}

Result<Space> Conv2d1x1BufferTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  Result<ConvShape> shape = PointwiseShape(task);
  if (!shape.ok()) return Status::InvalidArgument(task.ToSpec() + ": " + shape.status().message());
  const ConvShape s = *shape;
  std::string why;
  if (!PrecisionSupported(task.precision, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  const Precision p = task.precision;
  Space space;
  space.AddKnob(SplitKnob("tile_k", s.k, 3, ThreadFilter(limits.max_work_item_sizes[1])));
  space.AddKnob(SplitKnob("tile_p", s.oh() * s.ow(), 3, ThreadFilter(limits.max_work_item_sizes[0])));
  space.AddSplit("tile_c", s.c, 2);
  space.AddList("split_c", {1, 2, 4, 8, 16});
  space.AddList("cache_w", {0, 1});
  space.AddList("unroll", {0, 1});
  space.AddConstraint("split", [](const ConfigView& v) {
    Tiling t(v);
    return t.co % t.split == 0 ? std::string()
                               : "split_c " + std::to_string(t.split) + " does not divide the " +
                                     std::to_string(t.co) + " outer channel steps";
  });
  const DeviceLimits lim = limits;
  space.AddConstraint("work-group", [lim](const ConfigView& v) {
    Tiling t(v);
    return lim.CheckWorkGroup({static_cast<uint64_t>(t.pt), static_cast<uint64_t>(t.kt)});
  });
  space.AddConstraint("registers", [lim](const ConfigView& v) {
    Tiling t(v);
    if (t.accumulators() > kMaxAccumulators) {
      return std::to_string(t.accumulators()) + " accumulators per work-item exceed " +
             std::to_string(kMaxAccumulators);
    }
    return lim.CheckRegisters(static_cast<uint64_t>(t.registers()), static_cast<uint64_t>(t.wg()));
  });
  space.AddConstraint("local memory", [lim, p](const ConfigView& v) {
    return lim.CheckLocalMemory(Tiling(v).local_bytes(p));
  });
  return space;
}

Result<proto::KernelProgram> Conv2d1x1BufferTemplate::Generate(const Task& task, const Space& space,
                                                               const Config& c) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, PointwiseShape(task));
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  const Tiling t{ConfigView(space, c)};
  proto::KernelProgram prog = SplitConvProgram(
      s, task.precision, Source(s, task.precision, t), "conv2d_1x1", t.split,
      {static_cast<uint64_t>(t.pb * t.pt), static_cast<uint64_t>(t.kb * t.kt), static_cast<uint64_t>(s.n * t.split)},
      {static_cast<uint64_t>(t.pt), static_cast<uint64_t>(t.kt), 1});
  *prog.mutable_reference() = Reference(task);
  return prog;
}

proto::KernelProgram Conv2d1x1BufferTemplate::Reference(const Task& task) const { return ConvReference(task); }

double Conv2d1x1BufferTemplate::Flops(const Task& task) const { return ConvFlops(task); }

Config Conv2d1x1BufferTemplate::Fallback(const Task&, const Space& space) const {
  // Work-groups of ~128 items, ~8 accumulators, 8 channels a step, no split.
  return PickByScore(space, [](const ConfigView& v) {
    Tiling t(v);
    double score = 0;
    score -= std::abs(std::log2(static_cast<double>(t.wg()) / 128.0));
    score -= std::abs(std::log2(static_cast<double>(t.accumulators()) / 8.0));
    score -= 0.25 * std::abs(std::log2(static_cast<double>(t.ci) / 8.0));
    score -= 0.5 * std::log2(static_cast<double>(t.split));
    return score;
  });
}

std::vector<float> Conv2d1x1BufferTemplate::DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                                            const DeviceLimits&) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return {};
  Tiling t{ConfigView(space, c)};
  const double groups = static_cast<double>(s->n * t.kb * t.pb * t.split);
  return {static_cast<float>(t.wg()),
          static_cast<float>(t.accumulators()),
          static_cast<float>(t.local_bytes(task.precision)),
          static_cast<float>(t.registers()),
          static_cast<float>(groups),
          static_cast<float>(t.ci),
          static_cast<float>(t.split),
          static_cast<float>(t.cache_w),
          static_cast<float>(t.unroll)};
}

double Conv2d1x1BufferTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return 0;
  const Tiling t{ConfigView(space, c)};
  return static_cast<double>(s->n * t.kb * t.pb * t.split) * static_cast<double>(t.wg());
}

std::unique_ptr<Template> NewConv2d1x1BufferTemplate() { return std::make_unique<Conv2d1x1BufferTemplate>(); }

}  // namespace tunefleet
