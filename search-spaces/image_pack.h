// Packing for the texture (image2d_t) path, mirroring TVM's Adreno layouts:
//   data   NCHW  -> NCHW4c, image "global.texture":        width W,              height N * ceil(C/4) * H;
//          pixel (w, (n*CC + cc)*H + h) holds channels 4cc..4cc+3 of (n, h, w), zeros past C.
//   weight OIHW  -> OIHW4o, image "global.texture-weight": width ceil(CG/4)*4*KH*KW, height ceil(K/4);
//          pixel (((c*KH + r)*KW + q), kc) holds output channels 4kc..4kc+3 of (c, r, q), zeros past K / CG.
// Both packs are SETUP launches (untimed), one work-item per pixel. The images hold float or half pixels
// following the task's storage type (CL_FLOAT or CL_HALF_FLOAT, both core: half images are read with read_imagef
// and written with write_imagef, so float16-acc32 needs no cl_khr_fp16); the packs read the buffers with LD.
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"
#include "search-spaces/conv_common.h"

namespace tunefleet {

inline int64_t DataImageWidth(const ConvShape& s) { return s.w; }
inline int64_t DataImageHeight(const ConvShape& s) { return s.n * CeilDiv(s.c, 4) * s.h; }
// Depthwise weights (one input channel per output channel) take one pixel per (r, q), as in TVM.
inline int64_t WeightImageWidth(const ConvShape& s) {
  return (s.c_per_group() == 1 ? 1 : CeilDiv(s.c_per_group(), 4) * 4) * s.kh * s.kw;
}
inline int64_t WeightImageHeight(const ConvShape& s) { return CeilDiv(s.k, 4); }

// Empty when both images fit the device, else the reason (no image support, too wide or too high).
std::string CheckConvImages(const ConvShape& s, const DeviceLimits& limits);

// Declares image `image` and adds the SETUP launch packing buffer `buffer` (NCHW) into it.
void AddPackData(const ConvShape& s, Precision p, const std::string& buffer, const std::string& image,
                 proto::KernelProgram* program);
// Declares image `image` and adds the SETUP launch packing buffer `buffer` (OIHW, [K][CG][KH][KW]) into it.
void AddPackWeight(const ConvShape& s, Precision p, const std::string& buffer, const std::string& image,
                   proto::KernelProgram* program);

// The tiling of TVM's Adreno NCHWc schedules: 3-way splits (block, virtual thread, thread) of the output
// channel blocks (tile_fc), rows (tile_y) and columns (tile_x); 2-way reduction splits; unroll knobs.
// Reduction knobs that a template lacks read as {1, 1}.
struct TextureTiling {
  int64_t fb, fv, ft, yb, yv, yt, xb, xv, xt;
  int64_t rcco = 1, rcci = 1, ryo, ryi, rxo, rxi;
  int64_t unroll_max, unroll_explicit;
  explicit TextureTiling(const ConfigView& v, bool has_rcc);
  int64_t wg() const { return ft * yt * xt; }
  int64_t vthreads() const { return fv * yv * xv; }
  std::vector<uint64_t> global(int64_t n) const {
    return {static_cast<uint64_t>(xb * xt), static_cast<uint64_t>(yb * yt), static_cast<uint64_t>(n * fb * ft)};
  }
  std::vector<uint64_t> local() const {
    return {static_cast<uint64_t>(xt), static_cast<uint64_t>(yt), static_cast<uint64_t>(ft)};
  }
  // Inner reduction steps per outer step (x4 channel lanes when the reduction runs over channel blocks).
  int64_t inner_steps(bool has_rcc) const { return rcci * ryi * rxi * (has_rcc ? 4 : 1); }
  bool unrolled(bool has_rcc) const { return unroll_max > 0 && inner_steps(has_rcc) <= unroll_max; }
};

// Adds the knobs tile_fc, tile_y, tile_x (with `fc_keep` / `yx_keep` filters), [tile_rcc over `rcc` when > 0],
// tile_ry, tile_rx, auto_unroll_max_step, unroll_explicit in TVM's order, and the constraints shared by the
// texture templates: virtual threads <= 24, min(32, largest possible) <= work-group < 1024, device work-group
// limits, and a register estimate of `regs_per_vthread` registers per virtual thread.
void AddTextureSpace(const ConvShape& s, int64_t rcc, const DeviceLimits& limits,
                     const std::function<bool(const std::vector<int64_t>&)>& fc_keep,
                     const std::function<bool(const std::vector<int64_t>&)>& yx_keep, int64_t regs_per_vthread,
                     Space* space);

// OpenCL C helpers for kernels that read these images: the sampler (clamp to a zero border, so reads left or
// right of a row give 0) and READ4 / ACC4 macros for the precision (read_imageh and half4 for float16 only;
// read_imagef and float4 otherwise, float16-acc32's half images included).
std::string ImagePreamble(Precision p);

}  // namespace tunefleet
