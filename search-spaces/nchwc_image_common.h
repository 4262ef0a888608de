// Pieces shared by the NCHWc texture (image2d) convolution templates, conv2d_nchwc.image2d and
// depthwise_conv2d_nchwc.image2d: the TIMED kernel around each template's own reduction step, and the template
// methods that differ only in whether the tiling has an input-channel reduction (tile_rcc, `has_rcc`).
// Thread safety: free functions over values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"
#include "search-spaces/conv_common.h"
#include "search-spaces/image_pack.h"
#include "search-spaces/task.h"

namespace tunefleet {

// One inner reduction step (OpenCL C statements) over input channel block `cc`, kernel row `r` and column `q`
// (C expressions); `cc` is empty when the tiling has no tile_rcc.
using NchwcStep = std::function<std::string(const std::string& cc, const std::string& r, const std::string& q)>;

// The source of kernel `entry` (args dimg, wimg, bias, out): the shape and tiling #defines (C, RCCO and RCCI
// only with `has_rcc`), FV x YV x XV ACC4 accumulators, the reduction loops over [rcc,] ry, rx (inner loops
// unrolled explicitly, by pragma or not at all following the unroll knobs) around `step`, then the 4 lanes of
// each accumulator written to NCHW `out` with bias and activation.
std::string NchwcImageKernelSource(const ConvShape& s, Precision p, const TextureTiling& t, bool has_rcc,
                                   const std::string& entry, const NchwcStep& step);

// Supports() after the template's own shape check `s`: the shape error, precision support, images that fit.
bool NchwcImageSupports(const Result<ConvShape>& s, Precision p, const DeviceLimits& limits, std::string* why);

// Generate() for shape `s` (already checked by the template): checks that `c` belongs to `space` and is valid,
// packs data and weights into images (SETUP) and launches kernel `entry` (TIMED), with the reference and tolerance.
Result<proto::KernelProgram> NchwcImageGenerate(const Task& task, const ConvShape& s, const Space& space,
                                                const Config& c, bool has_rcc, const std::string& entry,
                                                const NchwcStep& step);

// Fallback(): the config closest (log scale) to a work-group of `wg` items and `vthreads` virtual threads,
// preferring some unrolling.
Config NchwcImageFallback(const Space& space, bool has_rcc, double wg, double vthreads);

// DerivedFeatures(): work-group size, registers (4 per virtual thread), work-groups, inner steps, unrolled,
// work-groups per compute unit, the last wave's fill (work-groups / (waves x compute units)), multiply-adds per
// image read and image reads per inner step and item, the unrolled body (inner steps x virtual threads, 0 when
// not unrolled) and outer reduction steps.
std::vector<float> NchwcImageDerivedFeatures(const Task& task, const Space& space, const Config& c, bool has_rcc,
                                             const DeviceLimits& limits);

// WorkItems(): the launch's global size, work-groups x work-group size.
double NchwcImageWorkItems(const Task& task, const Space& space, const Config& c, bool has_rcc);

}  // namespace tunefleet
