// The GEMM workload and the knobs of the register-tiled GEMM kernel (gemm.buffer).
//
// C[b] = act(A[b] · B[b] + bias), row-major: A is M×K, B is K×N (N×K with transb=1), C is M×N, bias has N
// elements shared by all batches. One work-group computes an MWG×NWG tile of C with MDIMC×NDIMC work-items;
// each item computes (MWG/MDIMC)×(NWG/NDIMC) outputs in registers, stepping K by KWG.
//
// Knobs (names are the JSON/database contract; never rename):
//   MWG, NWG    work-group tile in M and N            MDIMC, NDIMC  work-items of a work-group in M and N
//   KWG         K step per tile                        KWI           unroll of the inner K loop
//   VWM         vector width of A reads (along M) from local memory, and the M layout of an item's outputs
//   VWN         vector width along N: B loads, local reads, C stores
//   VWK         vector width along K of global loads of A (and of B when transb=1)
//   SA, SB      stage A / B tiles in local memory (else each item reads global memory directly)
//   DB          double-buffer the local tiles: load tile t+1 into registers while computing tile t
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

struct GemmShape {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool transb = false;
  bool bias = false;
  Activation act = Activation::kNone;
  Precision precision = Precision::kFloat32;

  // Reads a "gemm" task; errors name the spec.
  static Result<GemmShape> FromTask(const Task& task);
  // Bytes of an element in global memory (half for both half precisions).
  int StorageBytes() const { return precision == Precision::kFloat32 ? 4 : 2; }
  // Bytes of an element in local memory and registers (float16-acc32 stages and computes in float).
  int LocalElemBytes() const { return precision == Precision::kFloat16 ? 2 : 4; }
};

struct GemmConfig {
  int64_t mwg = 32, nwg = 32, mdimc = 8, ndimc = 8, kwg = 16, kwi = 1;
  int64_t vwm = 1, vwn = 1, vwk = 1;
  bool sa = true, sb = true, db = false;

  static GemmConfig FromView(const ConfigView& v);
  int64_t mwi() const { return mwg / mdimc; }  // outputs per item in M
  int64_t nwi() const { return nwg / ndimc; }  // outputs per item in N
  int64_t threads() const { return mdimc * ndimc; }
  // Global loads per item per K tile, in vectors, of A (width vwk) and B (width vwn, or vwk when transb).
  int64_t a_loads() const { return mwg * kwg / (threads() * vwk); }
  int64_t b_loads(bool transb) const { return nwg * kwg / (threads() * (transb ? vwk : vwn)); }
  // __local bytes per work-group (tiles of float, or half for float16).
  uint64_t LocalBytes(const GemmShape& s) const;
  // Estimated 32-bit registers per item: accumulators, operands, prefetch registers, addressing.
  uint64_t Registers(const GemmShape& s) const;
};

// The space for a task: the knobs above, their structural constraints, and the device's limits.
Space MakeGemmSpace(const GemmShape& shape, const DeviceLimits& limits);

}  // namespace tunefleet
