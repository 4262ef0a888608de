// Free space where the OpenCL compiler writes: a build that fails, or a worker that exits while it builds, may have
// failed for the full disk, not for the kernel (PoCL's LLVM prints "IO failure on output stream: No space left on
// device" and exits 1; with no byte left clBuildProgram fails). Such a job is no result about its config.
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tunefleet::agent {

// A build that failed is taken for the full disk's fault when a folder below has less free than this (bytes), or
// fewer free inodes than kLowDiskInodes.
inline constexpr uint64_t kLowDiskBytes = uint64_t{16} << 20;
inline constexpr uint64_t kLowDiskInodes = 64;
// An agent that starts with less than this free there (bytes), or fewer free inodes than kFullAtStartInodes, does not
// take jobs until there is room: too little for a few builds (a 64^3 GEMM's build failed with 1008 KB free, LLVM's
// temporary files; a program then takes 40-110 KB and about 6 inodes in PoCL's cache). Above it, and under
// kLowDiskBytes, it starts: kernels may still build there, and a build that fails for the disk is given back (above).
inline constexpr uint64_t kFullAtStartBytes = uint64_t{4} << 20;
inline constexpr uint64_t kFullAtStartInodes = 32;

struct FreeSpace {
  uint64_t bytes = 0;   // what an unprivileged process may still write
  uint64_t inodes = 0;  // files it may still make; UINT64_MAX where the file system does not count them
};

// The free space of the file system of `path`, or of its nearest existing folder above; nullopt when not even
// that can be read.
std::optional<FreeSpace> FreeSpaceOf(const std::filesystem::path& path);

// The folders a worker's compiler writes into: the kernel cache folder (`cache_dir`, the agent's own when set,
// else POCL_CACHE_DIR, else PoCL's default below XDG_CACHE_HOME or HOME; a relative one is the agent's working
// folder's, as for the worker). PoCL writes its temporary files there too, not into TMPDIR (a full TMPDIR built and
// ran kernels).
std::vector<std::filesystem::path> CompilerWriteDirs(const std::filesystem::path& cache_dir);

// The first of `dirs` with less than `min_bytes` bytes or `min_inodes` inodes free, said as "/tmp has 12 KB free"
// or "/tmp has 3 inodes free"; nullopt when none is.
std::optional<std::string> NearlyFullDisk(const std::vector<std::filesystem::path>& dirs, uint64_t min_bytes,
                                          uint64_t min_inodes = kLowDiskInodes);

}  // namespace tunefleet::agent
