#include "search-spaces/conv2d_nchwc_image2d.h"

#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/image_pack.h"
#include "search-spaces/nchwc_image_common.h"

namespace tunefleet {
namespace {

// One inner reduction step over input channel block `cc`, kernel row `r`, column `q` (C expressions).
std::string Step(const std::string& cc, const std::string& r, const std::string& q) {
  std::ostringstream o;
  o << "    {\n"
    << "      ACC4 wv[FV][4];\n"
    << "      for (int vf = 0; vf < FV; ++vf) {\n"
    << "        const int fc = (bf * FV + vf) * FT + tf;\n"
    << "        for (int j = 0; j < 4; ++j)\n"
    << "          wv[vf][j] = READ4(wimg, (int2)(((((" << cc << ") * 4 + j) * KH + (" << r << ")) * KW + (" << q
    << ")), fc));\n"
    << "      }\n"
    << "      for (int vy = 0; vy < YV; ++vy) {\n"
    << "        const int iy = ((by * YV + vy) * YT + ty) * S - P + (" << r << ") * D;\n"
    << "        const int row = (n * CC + (" << cc << ")) * H + iy;\n"
    << "        for (int vx = 0; vx < XV; ++vx) {\n"
    << "          const int ix = ((bx * XV + vx) * XT + tx) * S - P + (" << q << ") * D;\n"
    << "          const ACC4 d = (iy >= 0 && iy < H) ? READ4(dimg, (int2)(ix, row)) : (ACC4)(0);\n"
    << "          for (int vf = 0; vf < FV; ++vf)\n"
    << "            acc[vf][vy][vx] += d.s0 * wv[vf][0] + d.s1 * wv[vf][1] + d.s2 * wv[vf][2] + d.s3 * wv[vf][3];\n"
    << "        }\n"
    << "      }\n"
    << "    }\n";
  return o.str();
}

Result<ConvShape> Shape(const Task& task) {
  if (task.op != "conv2d") return Status::InvalidArgument(task.ToSpec() + ": not a conv2d task");
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  if (s.groups != 1) return Status::InvalidArgument(task.ToSpec() + ": grouped convolution is not supported");
  return s;
}

}  // namespace

bool Conv2dNchwcImage2dTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  return NchwcImageSupports(Shape(task), task.precision, limits, why);
}

Result<Space> Conv2dNchwcImage2dTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  std::string why;
  if (!Supports(task, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  const int64_t min_threads = CeilDiv(s.k, 4) % 2 == 0 ? 2 : 1;
  Space space;
  AddTextureSpace(
      s, CeilDiv(s.c, 4), limits,
      [min_threads](const std::vector<int64_t>& f) { return f[1] <= 8 && f[2] >= min_threads && f[2] < 256; },
      [](const std::vector<int64_t>& f) { return f[1] <= 8 && f[2] <= 16; },
      /*regs_per_vthread=*/4 + 16, &space);
  return space;
}

Result<proto::KernelProgram> Conv2dNchwcImage2dTemplate::Generate(const Task& task, const Space& space,
                                                                  const Config& c) const {
  TF_ASSIGN_OR_RETURN(ConvShape s, Shape(task));
  return NchwcImageGenerate(task, s, space, c, /*has_rcc=*/true, "conv2d_nchwc", Step);
}

proto::KernelProgram Conv2dNchwcImage2dTemplate::Reference(const Task& task) const {
  return ConvReference(task);
}

double Conv2dNchwcImage2dTemplate::Flops(const Task& task) const { return ConvFlops(task); }

Config Conv2dNchwcImage2dTemplate::Fallback(const Task&, const Space& space) const {
  // In the spirit of TVM's get_default_conv2d_config: a 64-256 item work-group, a few virtual threads.
  return NchwcImageFallback(space, /*has_rcc=*/true, /*wg=*/128.0, /*vthreads=*/4.0);
}

std::vector<float> Conv2dNchwcImage2dTemplate::DerivedFeatures(const Task& task, const Space& space,
                                                               const Config& c, const DeviceLimits& limits) const {
  return NchwcImageDerivedFeatures(task, space, c, /*has_rcc=*/true, limits);
}

double Conv2dNchwcImage2dTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  return NchwcImageWorkItems(task, space, c, /*has_rcc=*/true);
}

std::unique_ptr<Template> NewConv2dNchwcImage2dTemplate() { return std::make_unique<Conv2dNchwcImage2dTemplate>(); }

}  // namespace tunefleet
