#include "search-spaces/image_pack.h"

#include <algorithm>
#include <sstream>

namespace tunefleet {
namespace {

void AddImage(const std::string& name, Precision p, int64_t width, int64_t height, proto::KernelProgram* program) {
  auto* img = program->add_images();
  img->set_name(name);
  img->set_type(StorageType(p));
  img->set_width(static_cast<uint64_t>(width));
  img->set_height(static_cast<uint64_t>(height));
}

}  // namespace

TextureTiling::TextureTiling(const ConfigView& v, bool has_rcc) {
  const auto& f = v.Factors("tile_fc");
  const auto& y = v.Factors("tile_y");
  const auto& x = v.Factors("tile_x");
  fb = f[0], fv = f[1], ft = f[2], yb = y[0], yv = y[1], yt = y[2], xb = x[0], xv = x[1], xt = x[2];
  if (has_rcc) {
    const auto& rc = v.Factors("tile_rcc");
    rcco = rc[0], rcci = rc[1];
  }
  const auto& ry = v.Factors("tile_ry");
  const auto& rx = v.Factors("tile_rx");
  ryo = ry[0], ryi = ry[1], rxo = rx[0], rxi = rx[1];
  unroll_max = v.Value("auto_unroll_max_step");
  unroll_explicit = v.Value("unroll_explicit");
}

void AddTextureSpace(const ConvShape& s, int64_t rcc, const DeviceLimits& limits,
                     const std::function<bool(const std::vector<int64_t>&)>& fc_keep,
                     const std::function<bool(const std::vector<int64_t>&)>& yx_keep, int64_t regs_per_vthread,
                     Space* space) {
  Knob fc = SplitKnob("tile_fc", CeilDiv(s.k, 4), 3, fc_keep);
  Knob y = SplitKnob("tile_y", s.oh(), 3, yx_keep);
  Knob x = SplitKnob("tile_x", s.ow(), 3, yx_keep);
  // The largest work-group the splits allow: small layers cannot reach 32 items.
  auto max_part = [](const Knob& k) {
    int64_t m = 0;
    for (const auto& c : k.choices) m = std::max(m, c[2]);
    return m;
  };
  const int64_t min_wg = std::min<int64_t>(32, max_part(fc) * max_part(y) * max_part(x));
  space->AddKnob(std::move(fc));
  space->AddKnob(std::move(y));
  space->AddKnob(std::move(x));
  if (rcc > 0) space->AddSplit("tile_rcc", rcc, 2);
  space->AddSplit("tile_ry", s.kh, 2);
  space->AddSplit("tile_rx", s.kw, 2);
  space->AddList("auto_unroll_max_step", {0, 512, 1500});
  space->AddList("unroll_explicit", {0, 1});
  const bool has_rcc = rcc > 0;
  space->AddConstraint(
      "virtual threads", [has_rcc](const ConfigView& v) { return TextureTiling(v, has_rcc).vthreads() <= 24; },
      [has_rcc](const ConfigView& v) {
        const int64_t n = TextureTiling(v, has_rcc).vthreads();
        return n <= 24 ? std::string() : std::to_string(n) + " virtual threads exceed 24";
      });
  space->AddConstraint(
      "work-group", [has_rcc, min_wg](const ConfigView& v) {
        const int64_t wg = TextureTiling(v, has_rcc).wg();
        return wg >= min_wg && wg < 1024;
      },
      [has_rcc, min_wg](const ConfigView& v) {
        const int64_t wg = TextureTiling(v, has_rcc).wg();
        return (wg >= min_wg && wg < 1024) ? std::string()
                                           : "work-group of " + std::to_string(wg) + " items is outside [" +
                                                 std::to_string(min_wg) + ", 1024)";
      });
  const DeviceLimits lim = limits;
  space->AddConstraint("device work-group", [lim, has_rcc](const ConfigView& v) {
    return lim.CheckWorkGroup(TextureTiling(v, has_rcc).local());
  });
  space->AddConstraint("registers", [lim, has_rcc, regs_per_vthread](const ConfigView& v) {
    TextureTiling t(v, has_rcc);
    return lim.CheckRegisters(static_cast<uint64_t>(t.vthreads() * regs_per_vthread + 16),
                              static_cast<uint64_t>(t.wg()));
  });
}

std::string CheckConvImages(const ConvShape& s, const DeviceLimits& limits) {
  std::string why = limits.CheckImage2d(DataImageWidth(s), DataImageHeight(s));
  if (!why.empty()) return "data " + why;
  why = limits.CheckImage2d(WeightImageWidth(s), WeightImageHeight(s));
  if (!why.empty()) return "weight " + why;
  return {};
}

std::string ImagePreamble(Precision p) {
  std::string s =
      "__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;\n";
  if (p == Precision::kFloat16) {
    s += "#define READ4(img, xy) read_imageh(img, smp, xy)\n#define ACC4 half4\n";
  } else {
    s += "#define READ4(img, xy) read_imagef(img, smp, xy)\n#define ACC4 float4\n";
  }
  return s;
}

void AddPackData(const ConvShape& s, Precision p, const std::string& buffer, const std::string& image,
                 proto::KernelProgram* program) {
  const int64_t cc = CeilDiv(s.c, 4);
  AddImage(image, p, DataImageWidth(s), DataImageHeight(s), program);
  std::ostringstream o;
  o << TypePreamble(p)
    << "__kernel void pack_nchw4c(__global const T* src, __write_only image2d_t dst) {\n"
    << "  const int x = get_global_id(0), y = get_global_id(1);\n"
    << "  const int W = " << s.w << ", H = " << s.h << ", C = " << s.c << ", CC = " << cc << ";\n"
    << "  if (x >= W || y >= " << DataImageHeight(s) << ") return;\n"
    << "  const int h = y % H, c4 = (y / H) % CC, n = y / (H * CC);\n"
    << "  float v[4];\n"
    << "  for (int i = 0; i < 4; ++i) {\n"
    << "    const int c = c4 * 4 + i;\n"
    << "    v[i] = c < C ? (float)LD(src, (((long)n * C + c) * H + h) * W + x) : 0.0f;\n"
    << "  }\n"
    << "  write_imagef(dst, (int2)(x, y), (float4)(v[0], v[1], v[2], v[3]));\n"
    << "}\n";
  auto* l = AddLaunch(program, o.str(), "pack_nchw4c", proto::KernelLaunch::SETUP,
                      {static_cast<uint64_t>(DataImageWidth(s)), static_cast<uint64_t>(DataImageHeight(s))}, {});
  ArgBuffer(l, buffer);
  ArgImage(l, image);
}

void AddPackWeight(const ConvShape& s, Precision p, const std::string& buffer, const std::string& image,
                   proto::KernelProgram* program) {
  AddImage(image, p, WeightImageWidth(s), WeightImageHeight(s), program);
  std::ostringstream o;
  o << TypePreamble(p)
    << "__kernel void pack_oihw4o(__global const T* src, __write_only image2d_t dst) {\n"
    << "  const int x = get_global_id(0), kc = get_global_id(1);\n"
    << "  const int K = " << s.k << ", CG = " << s.c_per_group() << ", KH = " << s.kh << ", KW = " << s.kw
    << ";\n"
    << "  if (x >= " << WeightImageWidth(s) << " || kc >= " << WeightImageHeight(s) << ") return;\n"
    << "  const int q = x % KW, r = (x / KW) % KH, c = x / (KW * KH);\n"
    << "  float v[4];\n"
    << "  for (int i = 0; i < 4; ++i) {\n"
    << "    const int k = kc * 4 + i;\n"
    << "    v[i] = (k < K && c < CG) ? (float)LD(src, (((long)k * CG + c) * KH + r) * KW + q) : 0.0f;\n"
    << "  }\n"
    << "  write_imagef(dst, (int2)(x, kc), (float4)(v[0], v[1], v[2], v[3]));\n"
    << "}\n";
  auto* l = AddLaunch(program, o.str(), "pack_oihw4o", proto::KernelLaunch::SETUP,
                      {static_cast<uint64_t>(WeightImageWidth(s)), static_cast<uint64_t>(WeightImageHeight(s))}, {});
  ArgBuffer(l, buffer);
  ArgImage(l, image);
}

}  // namespace tunefleet
