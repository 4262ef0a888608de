#include "search-spaces/depthwise_conv2d_nchwc_image2d.h"

#include <sstream>

#include "search-spaces/conv_common.h"
#include "search-spaces/image_pack.h"
#include "search-spaces/nchwc_image_common.h"

namespace tunefleet {
namespace {

// One inner reduction step over kernel row `r`, column `q` (C expressions); no channel reduction (`cc` unused).
std::string Step(const std::string& /*cc*/, const std::string& r, const std::string& q) {
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
  return NchwcImageSupports(Shape(task), task.precision, limits, why);
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
  return NchwcImageGenerate(task, s, space, c, /*has_rcc=*/false, "dwconv2d_nchwc", Step);
}

proto::KernelProgram DepthwiseConv2dNchwcImage2dTemplate::Reference(const Task& task) const {
  return ConvReference(task);
}

double DepthwiseConv2dNchwcImage2dTemplate::Flops(const Task& task) const { return ConvFlops(task); }

Config DepthwiseConv2dNchwcImage2dTemplate::Fallback(const Task&, const Space& space) const {
  return NchwcImageFallback(space, /*has_rcc=*/false, /*wg=*/64.0, /*vthreads=*/2.0);
}

std::vector<float> DepthwiseConv2dNchwcImage2dTemplate::DerivedFeatures(const Task& task, const Space& space,
                                                                        const Config& c,
                                                                        const DeviceLimits& limits) const {
  return NchwcImageDerivedFeatures(task, space, c, /*has_rcc=*/false, limits);
}

double DepthwiseConv2dNchwcImage2dTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  return NchwcImageWorkItems(task, space, c, /*has_rcc=*/false);
}

std::unique_ptr<Template> NewDepthwiseConv2dNchwcImage2dTemplate() {
  return std::make_unique<DepthwiseConv2dNchwcImage2dTemplate>();
}

}  // namespace tunefleet
