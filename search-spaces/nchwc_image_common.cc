#include "search-spaces/nchwc_image_common.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tunefleet {
namespace {

constexpr const char* kLanes[4] = {"s0", "s1", "s2", "s3"};

}  // namespace

std::string NchwcImageKernelSource(const ConvShape& s, Precision p, const TextureTiling& t, bool has_rcc,
                                   const std::string& entry, const NchwcStep& step) {
  std::ostringstream o;
  o << TypePreamble(p) << ImagePreamble(p);
  auto def = [&o](const char* n, int64_t v) { o << "#define " << n << " " << v << "\n"; };
  if (has_rcc) def("C", s.c);
  def("CC", CeilDiv(s.c, 4)), def("H", s.h), def("W", s.w), def("K", s.k), def("KH", s.kh), def("KW", s.kw);
  def("S", s.stride), def("P", s.pad), def("D", s.dilation), def("OH", s.oh()), def("OW", s.ow());
  def("FB", t.fb), def("FV", t.fv), def("FT", t.ft), def("YV", t.yv), def("YT", t.yt), def("XV", t.xv);
  def("XT", t.xt);
  if (has_rcc) def("RCCO", t.rcco), def("RCCI", t.rcci);
  def("RYO", t.ryo), def("RYI", t.ryi), def("RXO", t.rxo), def("RXI", t.rxi);
  // The second line of the signature lines up under the first argument.
  o << "__kernel __attribute__((reqd_work_group_size(XT, YT, FT)))\n"
    << "void " << entry << "(__read_only image2d_t dimg, __read_only image2d_t wimg, __global const T* bias,\n"
    << std::string(entry.size() + 6, ' ') << "__global T* out) {\n"
    << "  const int tx = get_local_id(0), ty = get_local_id(1), tf = get_local_id(2);\n"
       "  const int bx = get_group_id(0), by = get_group_id(1);\n"
       "  const int n = get_group_id(2) / FB, bf = get_group_id(2) % FB;\n"
       "  ACC4 acc[FV][YV][XV];\n"
       "  for (int a = 0; a < FV; ++a)\n"
       "    for (int b = 0; b < YV; ++b)\n"
       "      for (int e = 0; e < XV; ++e) acc[a][b][e] = (ACC4)(0);\n";
  if (has_rcc) o << "  for (int rcco = 0; rcco < RCCO; ++rcco)\n";
  o << "  for (int ryo = 0; ryo < RYO; ++ryo)\n"
       "  for (int rxo = 0; rxo < RXO; ++rxo) {\n";
  if (t.unrolled(has_rcc) && t.unroll_explicit) {
    for (int64_t c = 0; c < (has_rcc ? t.rcci : 1); ++c)
      for (int64_t r = 0; r < t.ryi; ++r)
        for (int64_t q = 0; q < t.rxi; ++q)
          o << step(has_rcc ? "rcco * RCCI + " + std::to_string(c) : std::string(),
                    "ryo * RYI + " + std::to_string(r), "rxo * RXI + " + std::to_string(q));
  } else {
    const char* pragma = t.unrolled(has_rcc) ? "    #pragma unroll\n" : "    #pragma unroll 1\n";
    if (has_rcc) o << pragma << "    for (int rcci = 0; rcci < RCCI; ++rcci) {\n";
    o << pragma << "    for (int ryi = 0; ryi < RYI; ++ryi) {\n"
      << pragma << "    for (int rxi = 0; rxi < RXI; ++rxi)\n"
      << step(has_rcc ? "rcco * RCCI + rcci" : "", "ryo * RYI + ryi", "rxo * RXI + rxi") << "    }\n";
    if (has_rcc) o << "    }\n";
  }
  o << "  }\n"
       "  for (int vf = 0; vf < FV; ++vf) {\n"
       "    const int fc = (bf * FV + vf) * FT + tf;\n"
       "    for (int vy = 0; vy < YV; ++vy) {\n"
       "      const int y = (by * YV + vy) * YT + ty;\n"
       "      for (int vx = 0; vx < XV; ++vx) {\n"
       "        const int x = (bx * XV + vx) * XT + tx;\n";
  for (int j = 0; j < 4; ++j) {
    o << "        if (fc * 4 + " << j << " < K) {\n"
      << "          const int k = fc * 4 + " << j << ";\n"
      << "          float v = (float)acc[vf][vy][vx]." << kLanes[j] << ";\n";
    if (s.bias) o << "          v += (float)LD(bias, k);\n";
    if (s.act != Activation::kNone) o << "          v = " << ActivationExpr(s.act, "v") << ";\n";
    o << "          ST(out, (((long)n * K + k) * OH + y) * OW + x, v);\n"
      << "        }\n";
  }
  o << "      }\n    }\n  }\n}\n";
  return o.str();
}

bool NchwcImageSupports(const Result<ConvShape>& s, Precision p, const DeviceLimits& limits, std::string* why) {
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  if (!PrecisionSupported(p, limits, why)) return false;
  std::string img = CheckConvImages(*s, limits);
  if (!img.empty()) {
    if (why) *why = img;
    return false;
  }
  return true;
}

Result<proto::KernelProgram> NchwcImageGenerate(const Task& task, const ConvShape& s, const Space& space,
                                                const Config& c, bool has_rcc, const std::string& entry,
                                                const NchwcStep& step) {
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  const TextureTiling t(ConfigView(space, c), has_rcc);
  proto::KernelProgram prog;
  AddConvBuffers(s, task.precision, &prog);
  AddPackData(s, task.precision, "data", "data_img", &prog);
  AddPackWeight(s, task.precision, "weight", "weight_img", &prog);
  auto* l = AddLaunch(&prog, NchwcImageKernelSource(s, task.precision, t, has_rcc, entry, step), entry,
                      proto::KernelLaunch::TIMED, t.global(s.n), t.local());
  ArgImage(l, "data_img");
  ArgImage(l, "weight_img");
  ArgBuffer(l, s.bias ? "bias" : "weight");
  ArgBuffer(l, "out");
  *prog.mutable_reference() = ConvReference(task);
  SetTolerance(task.precision, s.reduce_size(), &prog);
  return prog;
}

Config NchwcImageFallback(const Space& space, bool has_rcc, double wg, double vthreads) {
  return PickByScore(space, [has_rcc, wg, vthreads](const ConfigView& v) {
    TextureTiling t(v, has_rcc);
    return -std::abs(std::log2(static_cast<double>(t.wg()) / wg)) -
           std::abs(std::log2(static_cast<double>(t.vthreads()) / vthreads)) - (t.unroll_max == 0 ? 0.5 : 0.0);
  });
}

std::vector<float> NchwcImageDerivedFeatures(const Task& task, const Space& space, const Config& c, bool has_rcc,
                                             const DeviceLimits& limits) {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return {};
  TextureTiling t(ConfigView(space, c), has_rcc);
  const double cus = std::max<uint32_t>(1, limits.compute_units);
  const double groups = static_cast<double>(s->n * t.fb * t.yb * t.xb);
  const double waves = std::ceil(groups / cus);
  // Per inner step and item: image reads (weights: 4 per output channel block with an input-channel reduction, 1
  // without; data: one per output pixel) and scalar multiply-adds (16 or 4 per accumulator).
  const double weight_reads = static_cast<double>(t.fv * (has_rcc ? 4 : 1));
  const double data_reads = static_cast<double>(t.yv * t.xv);
  const double macs = static_cast<double>(t.vthreads() * (has_rcc ? 16 : 4));
  const double unrolled_body = t.unrolled(has_rcc) ? static_cast<double>(t.inner_steps(has_rcc) * t.vthreads()) : 0;
  return {static_cast<float>(t.wg()),
          static_cast<float>(t.vthreads() * 4),
          static_cast<float>(groups),
          static_cast<float>(t.inner_steps(has_rcc)),
          static_cast<float>(t.unrolled(has_rcc) ? 1 : 0),
          static_cast<float>(groups / cus),
          static_cast<float>(groups / (waves * cus)),
          static_cast<float>(macs / (weight_reads + data_reads)),
          static_cast<float>(weight_reads + data_reads),
          static_cast<float>(unrolled_body),
          static_cast<float>(t.rcco * t.ryo * t.rxo)};
}

double NchwcImageWorkItems(const Task& task, const Space& space, const Config& c, bool has_rcc) {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return 0;
  const TextureTiling t(ConfigView(space, c), has_rcc);
  return static_cast<double>(s->n * t.fb * t.yb * t.xb) * static_cast<double>(t.wg());
}

}  // namespace tunefleet
