// OpenCL C source of the GEMM kernels: the tuned register-tiled kernel for one (shape, config) and the naive
// reference. Sizes are compiled in (#define M/N/K), so a tile that divides the problem has no bounds checks.
//
// Tails: sizes that are not multiples of the tile are handled by guards, not padding: out-of-range A/B
// elements load as zero into the tiles and out-of-range C elements are not stored. Vector accesses never
// straddle a tail because the space requires VWN | N and VWK | K.
//
// Precision: float32 is float throughout; float16 is half throughout (cl_khr_fp16); float16-acc32 has half
// buffers (`__global half*`, vload_halfN / vstore_halfN, no extension) and float tiles, registers and accumulators,
// so its local-memory and register estimates (gemm_config.h) are those of float32.
// Kernel arguments, in order: A, B, [bias when shape.bias], C (all buffers of the storage type).
// Launch: global = {ceil(N/NWG)*NDIMC, ceil(M/MWG)*MDIMC, batch}, local = {NDIMC, MDIMC, 1}.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search-spaces/gemm_config.h"

namespace tunefleet {

inline constexpr char kGemmEntry[] = "gemm_tuned";
inline constexpr char kGemmReferenceEntry[] = "gemm_reference";

std::string GemmKernelSource(const GemmShape& shape, const GemmConfig& config);
std::vector<uint64_t> GemmGlobalSize(const GemmShape& shape, const GemmConfig& config);
std::vector<uint64_t> GemmLocalSize(const GemmConfig& config);

// One work-item per output element, float accumulation in K order, same epilogue (bias, activation).
// Launch: global = {N, M, batch} rounded up to multiples of 8 in N and M, local = driver's choice.
std::string GemmReferenceSource(const GemmShape& shape);
std::vector<uint64_t> GemmReferenceGlobalSize(const GemmShape& shape);

}  // namespace tunefleet
