// The launch geometry that the gemm.buffer template writes into a kernel pack, checked before the example launches
// a pack's GEMM kernel. A pack is a JSON file that anyone can edit, and the program's geometry is not free: the
// exporter (tuner/export_kernel_pack.cc) regenerates the program from the entry's task and config, and gemm.buffer
// (search-spaces/gemm_kernel.cc, GemmGlobalSize and GemmLocalSize) launches one work-group of NDIMC x MDIMC x 1 items
// per NWG x MWG tile of C per batch: global [ceil(N/NWG)*NDIMC, ceil(M/MWG)*MDIMC, batch], local [NDIMC, MDIMC, 1].
// Its kernel checks no bounds where the tiles divide the problem, so a launch of more work-items reads and writes
// past the buffers (the example crashed with SIGSEGV on a pack whose global_size had been raised by hand).
// The same holds for the operands' sizes: Run() checks the application's buffers against the pack's counts, and the
// kernel indexes A, B and C by the M, N and K compiled into it, so a count edited down would let a smaller buffer
// pass. The runtime library knows no template; this check is the GEMM application's (the example's), beside it.
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "deploy/runtime/kernel_pack.h"

namespace tunefleet::runtime {

// OK when `kernel` is a gemm.buffer program of one launch whose geometry is exactly what its config ("MWG", "NWG",
// "MDIMC", "NDIMC") gives for C of `batch` x `m` x `n`, and whose float32 buffers A, B and C hold batch x m x k,
// batch x k x n and batch x m x n elements; else InvalidArgument naming the task, what the pack says and what the
// workload gives.
Status CheckGemmBufferLaunch(const PackedKernel& kernel, uint64_t m, uint64_t n, uint64_t k, uint64_t batch = 1);

}  // namespace tunefleet::runtime
