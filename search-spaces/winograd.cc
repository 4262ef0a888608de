#include "search-spaces/winograd.h"

#include <cmath>
#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/winograd_transform.h"

namespace tunefleet {
namespace {

constexpr int64_t kMaxAccumulators = 64;

struct Gemm {
  int64_t m, kth, ki, pth, pi, cs, unroll;
  explicit Gemm(const ConfigView& v)
      : m(v.Value("tile_size")),
        kth(v.Value("k_thread")),
        ki(v.Value("k_inner")),
        pth(v.Value("p_thread")),
        pi(v.Value("p_inner")),
        cs(v.Value("c_step")),
        unroll(v.Value("auto_unroll_max_step")) {}
  int64_t kt() const { return kth * ki; }
  int64_t pt() const { return pth * pi; }
  int64_t wg() const { return kth * pth; }
  int64_t alpha() const { return m + 2; }
  // The tiles hold LT values: half only for float16 (float16-acc32 stages floats).
  uint64_t local_bytes(Precision p) const {
    return static_cast<uint64_t>(kt() * cs + cs * pt()) * (p == Precision::kFloat16 ? 2 : 4);
  }
};

// Output tiles of the task for tile size m.
struct Tiles {
  int64_t th, tw, p;
  Tiles(const ConvShape& s, int64_t m) : th(CeilDiv(s.oh(), m)), tw(CeilDiv(s.ow(), m)), p(s.n * th * tw) {}
};

std::string Defines(const ConvShape& s, const WinogradMatrices& w, const Tiles& t) {
  std::ostringstream o;
  o << "#define N " << s.n << "\n#define C " << s.c << "\n#define H " << s.h << "\n#define W " << s.w
    << "\n#define K " << s.k << "\n#define PAD " << s.pad << "\n#define OH " << s.oh() << "\n#define OW " << s.ow()
    << "\n#define M " << w.m << "\n#define ALPHA " << w.alpha << "\n#define TH " << t.th << "\n#define TW " << t.tw
    << "\n#define P " << t.p << "\n";
  return o.str();
}

std::string KernelTransform(const ConvShape& s, Precision p, const WinogradMatrices& w, const Tiles& t) {
  std::ostringstream o;
  o << TypePreamble(p) << Defines(s, w, t)
    << "__kernel void wino_kernel_transform(__global const T* weight, __global T* U) {\n"
    << "  const int c = get_global_id(0), k = get_global_id(1);\n"
    << "  if (c >= C || k >= K) return;\n"
    << "  const __global T* g = weight + ((long)k * C + c) * 9;\n";
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) o << "  const float g_" << a << "_" << b << " = (float)LD(g, " << a * 3 + b << ");\n";
  o << EmitSandwich(w.g, "g", "u");
  for (int i = 0; i < w.alpha; ++i)
    for (int j = 0; j < w.alpha; ++j)
      o << "  ST(U, ((long)" << i * w.alpha + j << " * K + k) * C + c, u_" << i << "_" << j << ");\n";
  o << "}\n";
  return o.str();
}

std::string InputTransform(const ConvShape& s, Precision p, const WinogradMatrices& w, const Tiles& t) {
  std::ostringstream o;
  o << TypePreamble(p) << Defines(s, w, t)
    << "__kernel void wino_input_transform(__global const T* data, __global T* V) {\n"
    << "  const int q = get_global_id(0), c = get_global_id(1);\n"
    << "  if (q >= P || c >= C) return;\n"
    << "  const int tw = q % TW, th = (q / TW) % TH, n = q / (TW * TH);\n"
    << "  const int y0 = th * M - PAD, x0 = tw * M - PAD;\n"
    << "  const __global T* src = data + ((long)n * C + c) * H * W;\n";
  for (int a = 0; a < w.alpha; ++a)
    for (int b = 0; b < w.alpha; ++b) {
      o << "  const float d_" << a << "_" << b << " = (y0 + " << a << " >= 0 && y0 + " << a << " < H && x0 + " << b
        << " >= 0 && x0 + " << b << " < W) ? (float)LD(src, (y0 + " << a << ") * W + x0 + " << b << ") : 0.0f;\n";
    }
  o << EmitSandwich(w.bt, "d", "v");
  for (int i = 0; i < w.alpha; ++i)
    for (int j = 0; j < w.alpha; ++j)
      o << "  ST(V, ((long)" << i * w.alpha + j << " * C + c) * P + q, v_" << i << "_" << j << ");\n";
  o << "}\n";
  return o.str();
}

std::string GemmSource(const ConvShape& s, Precision p, const WinogradMatrices& w, const Tiles& t, const Gemm& g) {
  std::ostringstream o;
  o << TypePreamble(p) << Defines(s, w, t);
  o << "#define KTH " << g.kth << "\n#define KI " << g.ki << "\n#define PTH " << g.pth << "\n#define PI " << g.pi
    << "\n#define KT " << g.kt() << "\n#define PT " << g.pt() << "\n#define CS " << g.cs << "\n#define WG " << g.wg()
    << "\n";
  const bool unroll = g.unroll > 0 && g.cs * g.ki * g.pi <= g.unroll;
  o << "__kernel __attribute__((reqd_work_group_size(PTH, KTH, 1)))\n"
       "void wino_gemm(__global const T* restrict U, __global const T* restrict V, __global T* restrict Mt) {\n"
       "  const int tp = get_local_id(0), tk = get_local_id(1);\n"
       "  const int p0 = get_group_id(0) * PT, k0 = get_group_id(1) * KT, e = get_group_id(2);\n"
       "  const int lid = tk * PTH + tp;\n"
       "  __local LT us[KT * CS];\n"
       "  __local LT vs[CS * PT];\n"
       "  const __global T* Ue = U + (long)e * K * C;\n"
       "  const __global T* Ve = V + (long)e * C * P;\n"
       "  ACC acc[KI][PI];\n"
       "  for (int i = 0; i < KI; ++i)\n"
       "    for (int j = 0; j < PI; ++j) acc[i][j] = (ACC)0;\n"
       "  for (int c0 = 0; c0 < C; c0 += CS) {\n"
       "    for (int i = lid; i < KT * CS; i += WG) {\n"
       "      const int k = k0 + i / CS, c = c0 + i % CS;\n"
       "      us[i] = (k < K && c < C) ? LD(Ue, (long)k * C + c) : (LT)0;\n"
       "    }\n"
       "    for (int i = lid; i < CS * PT; i += WG) {\n"
       "      const int c = c0 + i / PT, q = p0 + i % PT;\n"
       "      vs[i] = (c < C && q < P) ? LD(Ve, (long)c * P + q) : (LT)0;\n"
       "    }\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << (unroll ? "    #pragma unroll\n" : "    #pragma unroll 1\n")
    << "    for (int cc = 0; cc < CS; ++cc) {\n"
       "      ACC a[KI], b[PI];\n"
       "      for (int i = 0; i < KI; ++i) a[i] = (ACC)us[(i * KTH + tk) * CS + cc];\n"
       "      for (int j = 0; j < PI; ++j) b[j] = (ACC)vs[cc * PT + j * PTH + tp];\n"
       "      for (int i = 0; i < KI; ++i)\n"
       "        for (int j = 0; j < PI; ++j) acc[i][j] = mad(a[i], b[j], acc[i][j]);\n"
       "    }\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  }\n"
       "  for (int i = 0; i < KI; ++i) {\n"
       "    const int k = k0 + i * KTH + tk;\n"
       "    for (int j = 0; j < PI; ++j) {\n"
       "      const int q = p0 + j * PTH + tp;\n"
       "      if (k < K && q < P) ST(Mt, ((long)e * K + k) * P + q, acc[i][j]);\n"
       "    }\n"
       "  }\n"
       "}\n";
  return o.str();
}

std::string OutputTransform(const ConvShape& s, Precision p, const WinogradMatrices& w, const Tiles& t) {
  std::ostringstream o;
  o << TypePreamble(p) << Defines(s, w, t)
    << "__kernel void wino_output_transform(__global const T* Mt, __global const T* bias, __global T* out) {\n"
    << "  const int q = get_global_id(0), k = get_global_id(1);\n"
    << "  if (q >= P || k >= K) return;\n"
    << "  const int tw = q % TW, th = (q / TW) % TH, n = q / (TW * TH);\n";
  for (int a = 0; a < w.alpha; ++a)
    for (int b = 0; b < w.alpha; ++b)
      o << "  const float m_" << a << "_" << b << " = (float)LD(Mt, ((long)" << a * w.alpha + b
        << " * K + k) * P + q);\n";
  o << EmitSandwich(w.at, "m", "y");
  o << "  __global T* dst = out + ((long)n * K + k) * OH * OW;\n";
  for (int i = 0; i < w.m; ++i)
    for (int j = 0; j < w.m; ++j) {
      o << "  if (th * M + " << i << " < OH && tw * M + " << j << " < OW) {\n"
        << "    float v = y_" << i << "_" << j << ";\n";
      if (s.bias) o << "    v += (float)LD(bias, k);\n";
      if (s.act != Activation::kNone) o << "    v = " << ActivationExpr(s.act, "v") << ";\n";
      o << "    ST(dst, (th * M + " << i << ") * OW + tw * M + " << j << ", v);\n  }\n";
    }
  o << "}\n";
  return o.str();
}

Result<ConvShape> Shape(const Task& task) {
  if (task.op != "conv2d") return Status::InvalidArgument(task.ToSpec() + ": not a conv2d task");
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  if (s.kh != 3 || s.kw != 3 || s.stride != 1 || s.dilation != 1 || s.groups != 1) {
    return Status::InvalidArgument(task.ToSpec() +
                                   ": winograd needs a 3x3 kernel, stride 1, dilation 1 and no groups");
  }
  return s;
}

}  // namespace

bool Conv2dWinogradTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  Result<ConvShape> s = Shape(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  return PrecisionSupported(task.precision, limits, why);
}

Result<Space> Conv2dWinogradTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  std::string why;
  if (!PrecisionSupported(task.precision, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  const Precision prec = task.precision;
  Space space;
  space.AddList("tile_size", {2, 4});
  space.AddList("k_thread", {1, 2, 4, 8, 16, 32});
  space.AddList("k_inner", {1, 2, 4, 8});
  space.AddList("p_thread", {1, 2, 4, 8, 16, 32, 64});
  space.AddList("p_inner", {1, 2, 4, 8});
  space.AddList("c_step", {1, 2, 4, 8, 16});
  space.AddList("auto_unroll_max_step", {0, 512});
  space.AddConstraint("tile fill", [s](const ConfigView& v) -> std::string {
    Gemm g(v);
    const Tiles t(s, g.m);
    if (g.kt() >= 2 * s.k) return "output-channel tile " + std::to_string(g.kt()) + " is mostly past K";
    if (g.pt() >= 2 * t.p) return "tile-count tile " + std::to_string(g.pt()) + " is mostly past P";
    if (g.cs >= 2 * s.c) return "channel step " + std::to_string(g.cs) + " is mostly past C";
    return {};
  });
  const DeviceLimits lim = limits;
  space.AddConstraint("work-group", [lim](const ConfigView& v) {
    Gemm g(v);
    return lim.CheckWorkGroup({static_cast<uint64_t>(g.pth), static_cast<uint64_t>(g.kth), 1});
  });
  space.AddConstraint("registers", [lim](const ConfigView& v) -> std::string {
    Gemm g(v);
    if (g.ki * g.pi > kMaxAccumulators) return std::to_string(g.ki * g.pi) + " accumulators per work-item";
    return lim.CheckRegisters(static_cast<uint64_t>(g.ki * g.pi + g.ki + g.pi + 16), static_cast<uint64_t>(g.wg()));
  });
  space.AddConstraint("local memory",
                      [lim, prec](const ConfigView& v) { return lim.CheckLocalMemory(Gemm(v).local_bytes(prec)); });
  return space;
}

Result<proto::KernelProgram> Conv2dWinogradTemplate::Generate(const Task& task, const Space& space,
                                                              const Config& c) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  const Gemm g{ConfigView(space, c)};
  const WinogradMatrices& w = WinogradFor(static_cast<int>(g.m));
  const Tiles t(s, g.m);
  const Precision p = task.precision;
  const int64_t a2 = w.alpha * w.alpha;
  proto::KernelProgram prog;
  AddConvBuffers(s, p, &prog);
  AddZeroBuffer("wino_u", StorageType(p), a2 * s.k * s.c, &prog);
  AddZeroBuffer("wino_v", StorageType(p), a2 * s.c * t.p, &prog);
  AddZeroBuffer("wino_m", StorageType(p), a2 * s.k * t.p, &prog);
  const uint64_t uc = static_cast<uint64_t>(s.c), uk = static_cast<uint64_t>(s.k), up = static_cast<uint64_t>(t.p);
  auto* kt = AddLaunch(&prog, KernelTransform(s, p, w, t), "wino_kernel_transform", proto::KernelLaunch::SETUP,
                       {uc, uk}, {});
  ArgBuffer(kt, "weight");
  ArgBuffer(kt, "wino_u");
  auto* it = AddLaunch(&prog, InputTransform(s, p, w, t), "wino_input_transform", proto::KernelLaunch::TIMED,
                       {up, uc}, {});
  ArgBuffer(it, "data");
  ArgBuffer(it, "wino_v");
  auto* gm = AddLaunch(&prog, GemmSource(s, p, w, t, g), "wino_gemm", proto::KernelLaunch::TIMED,
                       {static_cast<uint64_t>(CeilDiv(t.p, g.pt()) * g.pth),
                        static_cast<uint64_t>(CeilDiv(s.k, g.kt()) * g.kth), static_cast<uint64_t>(a2)},
                       {static_cast<uint64_t>(g.pth), static_cast<uint64_t>(g.kth), 1});
  ArgBuffer(gm, "wino_u");
  ArgBuffer(gm, "wino_v");
  ArgBuffer(gm, "wino_m");
  auto* ot = AddLaunch(&prog, OutputTransform(s, p, w, t), "wino_output_transform", proto::KernelLaunch::TIMED,
                       {up, uk}, {});
  ArgBuffer(ot, "wino_m");
  ArgBuffer(ot, s.bias ? "bias" : "wino_m");
  ArgBuffer(ot, "out");
  *prog.mutable_reference() = Reference(task);
  SetTolerance(p, s.reduce_size(), &prog);
  // The transforms add rounding steps (F(4,3)'s constants up to 8 most): widen the absolute bound.
  prog.set_atol(prog.atol() * (g.m == 4 ? 16.0f : 4.0f));
  return prog;
}

proto::KernelProgram Conv2dWinogradTemplate::Reference(const Task& task) const { return ConvReference(task); }

double Conv2dWinogradTemplate::Flops(const Task& task) const { return ConvFlops(task); }

Config Conv2dWinogradTemplate::Fallback(const Task&, const Space& space) const {
  return PickByScore(space, [](const ConfigView& v) {
    Gemm g(v);
    return -std::abs(std::log2(static_cast<double>(g.wg()) / 64.0)) -
           std::abs(std::log2(static_cast<double>(g.ki * g.pi) / 16.0)) -
           std::abs(std::log2(static_cast<double>(g.cs) / 8.0)) + (g.m == 2 ? 0.5 : 0.0);
  });
}

std::vector<float> Conv2dWinogradTemplate::DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                                           const DeviceLimits&) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return {};
  Gemm g{ConfigView(space, c)};
  const Tiles t(*s, g.m);
  return {static_cast<float>(g.wg()), static_cast<float>(g.ki * g.pi),
          static_cast<float>(g.local_bytes(task.precision)),
          static_cast<float>(CeilDiv(t.p, g.pt()) * CeilDiv(s->k, g.kt()) * (g.alpha() * g.alpha())),
          static_cast<float>(g.m)};
}

double Conv2dWinogradTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return 0;
  Gemm g{ConfigView(space, c)};
  const Tiles t(*s, g.m);
  // The batched GEMM, the kernel the space tunes: one work-group per (P, K) block and transform position.
  return static_cast<double>(CeilDiv(t.p, g.pt()) * CeilDiv(s->k, g.kt()) * (g.alpha() * g.alpha())) *
         static_cast<double>(g.wg());
}

std::unique_ptr<Template> NewConv2dWinogradTemplate() { return std::make_unique<Conv2dWinogradTemplate>(); }

}  // namespace tunefleet
