#include "search-spaces/conv2d_nchw_buffer.h"

#include <cmath>
#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/split_reduce.h"

namespace tunefleet {
namespace {

constexpr int64_t kMaxVirtual = 8;        // per axis
constexpr int64_t kMaxInner = 8;          // per axis
constexpr int64_t kMaxAccumulators = 128;  // per work-item

// The geometry of one config, shared by the constraints, the features and the generator.
struct Tiling {
  int64_t fb, fv, ft, fi, yb, yv, yt, yi, xb, xv, xt, xi;
  int64_t rco, rci, ryo, ryi, rxo, rxi;
  int64_t unroll_max, unroll_explicit;
  int64_t split;  // work-groups sharing one output tile's channel reduction (split-K); partial sums added after

  Tiling(const ConfigView& v) {
    const auto& f = v.Factors("tile_f");
    const auto& y = v.Factors("tile_y");
    const auto& x = v.Factors("tile_x");
    fb = f[0], fv = f[1], ft = f[2], fi = f[3];
    yb = y[0], yv = y[1], yt = y[2], yi = y[3];
    xb = x[0], xv = x[1], xt = x[2], xi = x[3];
    const auto& rc = v.Factors("tile_rc");
    const auto& ry = v.Factors("tile_ry");
    const auto& rx = v.Factors("tile_rx");
    rco = rc[0], rci = rc[1], ryo = ry[0], ryi = ry[1], rxo = rx[0], rxi = rx[1];
    unroll_max = v.Value("auto_unroll_max_step");
    unroll_explicit = v.Value("unroll_explicit");
    split = v.Value("split_rc");
  }
  int64_t tf() const { return fv * ft * fi; }
  int64_t ty() const { return yv * yt * yi; }
  int64_t tx() const { return xv * xt * xi; }
  int64_t wg() const { return ft * yt * xt; }
  int64_t accumulators() const { return fv * fi * yv * yi * xv * xi; }
  int64_t registers() const { return accumulators() + yv * yi * xv * xi + fv * fi + 16; }
  int64_t in_rows(const ConvShape& s) const { return (ty() - 1) * s.stride + (ryi - 1) * s.dilation + 1; }
  int64_t in_cols(const ConvShape& s) const { return (tx() - 1) * s.stride + (rxi - 1) * s.dilation + 1; }
  int64_t data_tile(const ConvShape& s) const { return rci * in_rows(s) * in_cols(s); }
  int64_t weight_tile() const { return tf() * rci * ryi * rxi; }
  // The tiles hold LT values: half only for float16 (float16-acc32 stages floats).
  uint64_t local_bytes(const ConvShape& s, Precision p) const {
    return static_cast<uint64_t>(data_tile(s) + weight_tile()) * (p == Precision::kFloat16 ? 2 : 4);
  }
  bool unrolled() const { return unroll_max > 0 && rci * ryi * rxi <= unroll_max; }
};

std::function<bool(const std::vector<int64_t>&)> SpatialFilter(uint64_t max_threads) {
  return [max_threads](const std::vector<int64_t>& f) {
    return f[1] <= kMaxVirtual && static_cast<uint64_t>(f[2]) <= max_threads && f[3] <= kMaxInner;
  };
}

// The inner reduction body for one (c, r, q) step: loads the work-item's weights and inputs from __local
// memory into registers and accumulates. c, r, q are C expressions.
std::string StepBody(const std::string& c, const std::string& r, const std::string& q) {
  std::ostringstream o;
  o << "    {\n"
    << "      ACC wr[FV * FI]; ACC dr[YV * YI][XV * XI];\n"
    << "      #pragma unroll\n"
    << "      for (int a = 0; a < FV * FI; ++a) {\n"
    << "        const int fl = (a / FI) * FT * FI + tf * FI + a % FI;\n"
    << "        wr[a] = (ACC)wsh[((fl * RCI + (" << c << ")) * RYI + (" << r << ")) * RXI + (" << q << ")];\n"
    << "      }\n"
    << "      #pragma unroll\n"
    << "      for (int b = 0; b < YV * YI; ++b) {\n"
    << "        const int yl = (b / YI) * YT * YI + ty * YI + b % YI;\n"
    << "        #pragma unroll\n"
    << "        for (int e = 0; e < XV * XI; ++e) {\n"
    << "          const int xl = (e / XI) * XT * XI + tx * XI + e % XI;\n"
    << "          dr[b][e] = (ACC)dsh[((" << c << ") * IHT + yl * S + (" << r << ") * D) * IWT + xl * S + (" << q
    << ") * D];\n"
    << "        }\n"
    << "      }\n"
    << "      #pragma unroll\n"
    << "      for (int a = 0; a < FV * FI; ++a) {\n"
    << "        #pragma unroll\n"
    << "        for (int b = 0; b < YV * YI; ++b) {\n"
    << "          #pragma unroll\n"
    << "          for (int e = 0; e < XV * XI; ++e) acc[a][b][e] = mad(wr[a], dr[b][e], acc[a][b][e]);\n"
    << "        }\n"
    << "      }\n"
    << "    }\n";
  return o.str();
}

std::string Source(const ConvShape& s, Precision p, const Tiling& t) {
  std::ostringstream o;
  o << TypePreamble(p);
  auto def = [&o](const char* n, int64_t v) { o << "#define " << n << " " << v << "\n"; };
  def("N", s.n), def("C", s.c), def("H", s.h), def("W", s.w), def("K", s.k), def("KH", s.kh), def("KW", s.kw);
  def("S", s.stride), def("P", s.pad), def("D", s.dilation), def("OH", s.oh()), def("OW", s.ow());
  def("CG", s.c_per_group()), def("KG", s.k_per_group());
  def("FB", t.fb), def("FV", t.fv), def("FT", t.ft), def("FI", t.fi);
  def("YV", t.yv), def("YT", t.yt), def("YI", t.yi), def("XV", t.xv), def("XT", t.xt), def("XI", t.xi);
  def("TF", t.tf()), def("TY", t.ty()), def("TX", t.tx()), def("WG", t.wg());
  def("SPLIT", t.split), def("RCOS", t.rco / t.split);
  def("RCO", t.rco), def("RCI", t.rci), def("RYO", t.ryo), def("RYI", t.ryi), def("RXO", t.rxo), def("RXI", t.rxi);
  def("IHT", t.in_rows(s)), def("IWT", t.in_cols(s));
  def("DTILE", t.data_tile(s)), def("WTILE", t.weight_tile());
  o << "__kernel __attribute__((reqd_work_group_size(XT, YT, FT)))\n"
       "void conv2d_nchw(__global const T* restrict data, __global const T* restrict weight,\n"
       "                 __global const T* restrict bias, __global T* restrict out,\n"
       "                 __global float* restrict partial) {\n"
       "  const int tx = get_local_id(0), ty = get_local_id(1), tf = get_local_id(2);\n"
       "  const int zg = get_group_id(2) / SPLIT, split = get_group_id(2) % SPLIT;\n"
       "  const int n = zg / FB, f0 = (zg % FB) * TF;\n"
       "  const int y0 = get_group_id(1) * TY, x0 = get_group_id(0) * TX;\n"
       "  const int cbase = (f0 / KG) * CG;\n"
       "  const int lid = (tf * YT + ty) * XT + tx;\n"
       "  __local LT dsh[DTILE];\n"
       "  __local LT wsh[WTILE];\n"
       "  ACC acc[FV * FI][YV * YI][XV * XI];\n"
       "  for (int a = 0; a < FV * FI; ++a)\n"
       "    for (int b = 0; b < YV * YI; ++b)\n"
       "      for (int e = 0; e < XV * XI; ++e) acc[a][b][e] = (ACC)0;\n"
       "  const __global T* dn = data + ((long)n * C + cbase) * H * W;\n"
       "  for (int rco = split * RCOS; rco < (split + 1) * RCOS; ++rco)\n"
       "  for (int ryo = 0; ryo < RYO; ++ryo)\n"
       "  for (int rxo = 0; rxo < RXO; ++rxo) {\n"
       "    const int iy0 = y0 * S - P + ryo * RYI * D, ix0 = x0 * S - P + rxo * RXI * D;\n"
       "    for (int i = lid; i < DTILE; i += WG) {\n"
       "      const int c = i / (IHT * IWT), r = (i / IWT) % IHT, q = i % IWT;\n"
       "      const int iy = iy0 + r, ix = ix0 + q;\n"
       "      dsh[i] = (iy >= 0 && iy < H && ix >= 0 && ix < W)\n"
       "                   ? LD(dn, ((long)(rco * RCI + c) * H + iy) * W + ix) : (LT)0;\n"
       "    }\n"
       "    for (int i = lid; i < WTILE; i += WG) {\n"
       "      const int f = i / (RCI * RYI * RXI), c = (i / (RYI * RXI)) % RCI, r = (i / RXI) % RYI, q = i % RXI;\n"
       "      wsh[i] = LD(weight, (((long)(f0 + f) * CG + rco * RCI + c) * KH + ryo * RYI + r) * KW + rxo * RXI + q);\n"
       "    }\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n";
  if (t.unrolled() && t.unroll_explicit) {
    for (int64_t c = 0; c < t.rci; ++c)
      for (int64_t r = 0; r < t.ryi; ++r)
        for (int64_t q = 0; q < t.rxi; ++q) o << StepBody(std::to_string(c), std::to_string(r), std::to_string(q));
  } else {
    const char* pragma = t.unrolled() ? "    #pragma unroll\n" : "    #pragma unroll 1\n";
    o << pragma << "    for (int rc = 0; rc < RCI; ++rc) {\n"
      << pragma << "    for (int ry = 0; ry < RYI; ++ry) {\n"
      << pragma << "    for (int rx = 0; rx < RXI; ++rx)\n"
      << StepBody("rc", "ry", "rx") << "    }\n    }\n";
  }
  o << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  }\n"
       "  #pragma unroll\n"
       "  for (int a = 0; a < FV * FI; ++a) {\n"
       "    const int k = f0 + (a / FI) * FT * FI + tf * FI + a % FI;\n"
       "    #pragma unroll\n"
       "    for (int b = 0; b < YV * YI; ++b) {\n"
       "      const int y = y0 + (b / YI) * YT * YI + ty * YI + b % YI;\n"
       "      #pragma unroll\n"
       "      for (int e = 0; e < XV * XI; ++e) {\n"
       "        const int x = x0 + (e / XI) * XT * XI + tx * XI + e % XI;\n"
       "        float v = (float)acc[a][b][e];\n";
  if (t.split > 1) {
    // Partial sums of this slice of the channels; conv2d_split_reduce adds them up, then bias and activation.
    o << "        partial[((((long)split * N + n) * K + k) * OH + y) * OW + x] = v;\n";
  } else {
    if (s.bias) o << "        v += (float)LD(bias, k);\n";
    if (s.act != Activation::kNone) o << "        v = " << ActivationExpr(s.act, "v") << ";\n";
    o << "        ST(out, (((long)n * K + k) * OH + y) * OW + x, v);\n";
  }
  o << "      }\n"
       "    }\n"
       "  }\n"
       "}\n";
  if (t.split > 1) o << SplitReduceSource(s, t.split);
  return o.str();
}

}  // namespace

bool Conv2dNchwBufferTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  if (!IsConvOp(task.op)) {
    if (why) *why = "not a convolution";
    return false;
  }
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  return PrecisionSupported(task.precision, limits, why);
}

Result<Space> Conv2dNchwBufferTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  std::string why;
  if (!PrecisionSupported(task.precision, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  const Precision p = task.precision;
  Space space;
  space.AddKnob(SplitKnob("tile_f", s.k, 4, SpatialFilter(limits.max_work_item_sizes[2])));
  space.AddKnob(SplitKnob("tile_y", s.oh(), 4, SpatialFilter(limits.max_work_item_sizes[1])));
  space.AddKnob(SplitKnob("tile_x", s.ow(), 4, SpatialFilter(limits.max_work_item_sizes[0])));
  space.AddSplit("tile_rc", s.c_per_group(), 2);
  space.AddSplit("tile_ry", s.kh, 2);
  space.AddSplit("tile_rx", s.kw, 2);
  space.AddList("auto_unroll_max_step", {0, 512, 1500});
  space.AddList("unroll_explicit", {0, 1});
  // Split-K: small outputs with long reductions (deep layers: 7×7×512) need more work-groups than output tiles.
  space.AddList("split_rc", {1, 2, 4, 8, 16});
  space.AddConstraint("split", [](const ConfigView& v) {
    Tiling t(v);
    return t.rco % t.split == 0 ? std::string()
                                : "split_rc " + std::to_string(t.split) + " does not divide the " +
                                      std::to_string(t.rco) + " outer channel steps";
  });
  const DeviceLimits lim = limits;
  space.AddConstraint("work-group", [lim](const ConfigView& v) {
    Tiling t(v);
    return lim.CheckWorkGroup({static_cast<uint64_t>(t.xt), static_cast<uint64_t>(t.yt), static_cast<uint64_t>(t.ft)});
  });
  if (s.groups > 1) {
    space.AddConstraint("group", [s](const ConfigView& v) {
      Tiling t(v);
      return s.k_per_group() % t.tf() == 0 ? std::string()
                                          : "output-channel tile " + std::to_string(t.tf()) +
                                                " crosses a group of " + std::to_string(s.k_per_group());
    });
  }
  space.AddConstraint("registers", [lim](const ConfigView& v) {
    Tiling t(v);
    if (t.accumulators() > kMaxAccumulators) {
      return std::to_string(t.accumulators()) + " accumulators per work-item exceed " +
             std::to_string(kMaxAccumulators);
    }
    return lim.CheckRegisters(static_cast<uint64_t>(t.registers()), static_cast<uint64_t>(t.wg()));
  });
  space.AddConstraint("local memory", [lim, s, p](const ConfigView& v) {
    return lim.CheckLocalMemory(Tiling(v).local_bytes(s, p));
  });
  return space;
}

Result<proto::KernelProgram> Conv2dNchwBufferTemplate::Generate(const Task& task, const Space& space,
                                                                const Config& c) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  const Tiling t{ConfigView(space, c)};
  proto::KernelProgram prog = SplitConvProgram(
      s, task.precision, Source(s, task.precision, t), "conv2d_nchw", t.split,
      {static_cast<uint64_t>(t.xb * t.xt), static_cast<uint64_t>(t.yb * t.yt),
       static_cast<uint64_t>(s.n * t.fb * t.split * t.ft)},
      {static_cast<uint64_t>(t.xt), static_cast<uint64_t>(t.yt), static_cast<uint64_t>(t.ft)});
  *prog.mutable_reference() = Reference(task);
  return prog;
}

proto::KernelProgram Conv2dNchwBufferTemplate::Reference(const Task& task) const { return ConvReference(task); }

double Conv2dNchwBufferTemplate::Flops(const Task& task) const { return ConvFlops(task); }

Config Conv2dNchwBufferTemplate::Fallback(const Task&, const Space& space) const {
  // Prefer work-groups of ~64-256 items, ~16 accumulators per item and wide inner reduction steps.
  return PickByScore(space, [](const ConfigView& v) {
    Tiling t(v);
    double score = 0;
    score -= std::abs(std::log2(static_cast<double>(t.wg()) / 128.0));
    score -= std::abs(std::log2(static_cast<double>(t.accumulators()) / 16.0));
    score += 0.1 * std::log2(static_cast<double>(t.rci * t.ryi * t.rxi));
    score -= 0.5 * std::log2(static_cast<double>(t.split));
    return score;
  });
}

std::vector<float> Conv2dNchwBufferTemplate::DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                                             const DeviceLimits&) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return {};
  Tiling t{ConfigView(space, c)};
  const double blocks = static_cast<double>(s->n * t.fb * t.yb * t.xb * t.split);
  return {static_cast<float>(t.wg()),
          static_cast<float>(t.accumulators()),
          static_cast<float>(t.local_bytes(*s, task.precision)),
          static_cast<float>(t.registers()),
          static_cast<float>(blocks),
          static_cast<float>(t.rci * t.ryi * t.rxi),
          static_cast<float>(t.unrolled() ? 1 : 0),
          static_cast<float>(t.split)};
}

double Conv2dNchwBufferTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return 0;
  const Tiling t{ConfigView(space, c)};
  return static_cast<double>(s->n * t.fb * t.yb * t.xb * t.split) * static_cast<double>(t.wg());
}

std::unique_ptr<Template> NewConv2dNchwBufferTemplate() { return std::make_unique<Conv2dNchwBufferTemplate>(); }

}  // namespace tunefleet
