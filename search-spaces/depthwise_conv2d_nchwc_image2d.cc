#include "search-spaces/depthwise_conv2d_nchwc_image2d.h"

#include <cmath>
#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/image_pack.h"

namespace tunefleet {
namespace {

constexpr const char* kLanes[4] = {"s0", "s1", "s2", "s3"};

std::string Step(const std::string& r, const std::string& q) {
  std::ostringstream o;
  o << "    {\n"
    << "      for (int vf = 0; vf < FV; ++vf) {\n"
    << "        const int fc = (bf * FV + vf) * FT + tf;\n"
    << "        const ACC4 wv = READ4(wimg, (int2)((" << r << ") * KW + (" << q << "), fc));\n"
    << "        for (int vy = 0; vy < YV; ++vy) {\n"
    << "          const int iy = ((by * YV + vy) * YT + ty) * S - P + (" << r << ") * D;\n"
    << "          const int row = (n * CC + fc) * H + iy;\n"
    << "          for (int vx = 0; vx < XV; ++vx) {\n"
    << "            const int ix = ((bx * XV + vx) * XT + tx) * S - P + (" << q << ") * D;\n"
    << "            const ACC4 d = (iy >= 0 && iy < H) ? READ4(dimg, (int2)(ix, row)) : (ACC4)(0);\n"
    << "            acc[vf][vy][vx] += d * wv;\n"
    << "          }\n"
    << "        }\n"
    << "      }\n"
    << "    }\n";
  return o.str();
}

std::string Source(const ConvShape& s, Precision p, const TextureTiling& t) {
  std::ostringstream o;
  o << TypePreamble(p) << ImagePreamble(p);
  auto def = [&o](const char* n, int64_t v) { o << "#define " << n << " " << v << "\n"; };
  def("CC", CeilDiv(s.c, 4)), def("H", s.h), def("W", s.w), def("K", s.k), def("KH", s.kh), def("KW", s.kw);
  def("S", s.stride), def("P", s.pad), def("D", s.dilation), def("OH", s.oh()), def("OW", s.ow());
  def("FB", t.fb), def("FV", t.fv), def("FT", t.ft), def("YV", t.yv), def("YT", t.yt), def("XV", t.xv);
  def("XT", t.xt), def("RYO", t.ryo), def("RYI", t.ryi), def("RXO", t.rxo), def("RXI", t.rxi);
  o << "__kernel __attribute__((reqd_work_group_size(XT, YT, FT)))\n"
       "void dwconv2d_nchwc(__read_only image2d_t dimg, __read_only image2d_t wimg, __global const T* bias,\n"
       "                    __global T* out) {\n"
       "  const int tx = get_local_id(0), ty = get_local_id(1), tf = get_local_id(2);\n"
       "  const int bx = get_group_id(0), by = get_group_id(1);\n"
       "  const int n = get_group_id(2) / FB, bf = get_group_id(2) % FB;\n"
       "  ACC4 acc[FV][YV][XV];\n"
       "  for (int a = 0; a < FV; ++a)\n"
       "    for (int b = 0; b < YV; ++b)\n"
       "      for (int e = 0; e < XV; ++e) acc[a][b][e] = (ACC4)(0);\n"
       "  for (int ryo = 0; ryo < RYO; ++ryo)\n"
       "  for (int rxo = 0; rxo < RXO; ++rxo) {\n";
  if (t.unrolled(false) && t.unroll_explicit) {
    for (int64_t r = 0; r < t.ryi; ++r)
      for (int64_t q = 0; q < t.rxi; ++q)
        o << Step("ryo * RYI + " + std::to_string(r), "rxo * RXI + " + std::to_string(q));
  } else {
    const char* pragma = t.unrolled(false) ? "    #pragma unroll\n" : "    #pragma unroll 1\n";
    o << pragma << "    for (int ryi = 0; ryi < RYI; ++ryi) {\n"
      << pragma << "    for (int rxi = 0; rxi < RXI; ++rxi)\n"
      << Step("ryo * RYI + ryi", "rxo * RXI + rxi") << "    }\n";
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
    if (s.bias) o << "          v += (float)bias[k];\n";
    if (s.act != Activation::kNone) o << "          v = " << ActivationExpr(s.act, "v") << ";\n";
    o << "          out[(((long)n * K + k) * OH + y) * OW + x] = (T)v;\n"
      << "        }\n";
  }
  o << "      }\n    }\n  }\n}\n";
  return o.str();
}

Result<ConvShape> Shape(const Task& task) {
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  if (!(s.groups == s.c && s.k == s.c)) {
    return Status::InvalidArgument(task.ToSpec() + ": not a depthwise convolution with multiplier 1");
  }
  return s;
}

}  // namespace

bool DepthwiseConv2dNchwcImage2dTemplate::Supports(const Task& task, const DeviceLimits& limits,
                                                   std::string* why) const {
  if (!IsConvOp(task.op)) {
    if (why) *why = "not a convolution";
    return false;
  }
  Result<ConvShape> s = Shape(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  if (!PrecisionSupported(task.precision, limits, why)) return false;
  std::string img = CheckConvImages(*s, limits);
  if (!img.empty()) {
    if (why) *why = img;
    return false;
  }
  return true;
}

Result<Space> DepthwiseConv2dNchwcImage2dTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  std::string why;
  if (!Supports(task, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  Space space;
  AddTextureSpace(s, /*rcc=*/0, limits, {}, {}, /*regs_per_vthread=*/4 + 8, &space);
  return space;
}

Result<proto::KernelProgram> DepthwiseConv2dNchwcImage2dTemplate::Generate(const Task& task, const Space& space,
                                                                           const Config& c) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  if (c.size() != space.knobs().size()) return Status::InvalidArgument("config does not belong to the space");
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  const TextureTiling t(ConfigView(space, c), false);
  proto::KernelProgram prog;
  AddConvBuffers(s, task.precision, &prog);
  AddPackData(s, task.precision, "data", "data_img", &prog);
  AddPackWeight(s, task.precision, "weight", "weight_img", &prog);
  auto* l = AddLaunch(&prog, Source(s, task.precision, t), "dwconv2d_nchwc", proto::KernelLaunch::TIMED,
                      t.global(s.n), t.local());
  ArgImage(l, "data_img");
  ArgImage(l, "weight_img");
  ArgBuffer(l, s.bias ? "bias" : "weight");
  ArgBuffer(l, "out");
  *prog.mutable_reference() = Reference(task);
  SetTolerance(task.precision, s.reduce_size(), &prog);
  return prog;
}

proto::KernelProgram DepthwiseConv2dNchwcImage2dTemplate::Reference(const Task& task) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  return s.ok() ? ReferenceConv(*s, task.precision) : proto::KernelProgram();
}

double DepthwiseConv2dNchwcImage2dTemplate::Flops(const Task& task) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  return s.ok() ? s->Flops() : 0.0;
}

Config DepthwiseConv2dNchwcImage2dTemplate::Fallback(const Task&, const Space& space) const {
  return PickByScore(space, [](const ConfigView& v) {
    TextureTiling t(v, false);
    return -std::abs(std::log2(static_cast<double>(t.wg()) / 64.0)) -
           std::abs(std::log2(static_cast<double>(t.vthreads()) / 2.0)) - (t.unroll_max == 0 ? 0.5 : 0.0);
  });
}

std::vector<float> DepthwiseConv2dNchwcImage2dTemplate::DerivedFeatures(const Task& task, const Space& space,
                                                                        const Config& c, const DeviceLimits&) const {
  Result<ConvShape> s = ConvShapeFromTask(task);
  if (!s.ok()) return {};
  TextureTiling t(ConfigView(space, c), false);
  return {static_cast<float>(t.wg()), static_cast<float>(t.vthreads() * 4),
          static_cast<float>(s->n * t.fb * t.yb * t.xb), static_cast<float>(t.inner_steps(false)),
          static_cast<float>(t.unrolled(false) ? 1 : 0)};
}

std::unique_ptr<Template> NewDepthwiseConv2dNchwcImage2dTemplate() {
  return std::make_unique<DepthwiseConv2dNchwcImage2dTemplate>();
}

}  // namespace tunefleet
