// Free space where the OpenCL compiler writes: a worker that exits while it builds a kernel may have died of a full
// disk, not of the kernel (PoCL's LLVM prints "IO failure on output stream: No space left on device" and exits 1).
// Such a job is no result about its config.
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tunefleet::agent {

// A worker that died while building is taken for a full disk when a folder below has less free than this.
inline constexpr uint64_t kLowDiskBytes = uint64_t{16} << 20;

// The bytes an unprivileged process may still write on the file system of `path`, or of its nearest existing
// folder above; nullopt when not even that can be read.
std::optional<uint64_t> FreeBytes(const std::filesystem::path& path);

// The folders a worker's compiler writes into: the kernel cache folder (`cache_dir`, the agent's own when set,
// else POCL_CACHE_DIR, else PoCL's default below XDG_CACHE_HOME or HOME) and the temporary folder (TMPDIR, else
// /tmp).
std::vector<std::filesystem::path> CompilerWriteDirs(const std::filesystem::path& cache_dir);

// The first of `dirs` with less than `min_free` bytes free, said as "/tmp has 12 KB free"; nullopt when none is.
std::optional<std::string> NearlyFullDisk(const std::vector<std::filesystem::path>& dirs, uint64_t min_free);

}  // namespace tunefleet::agent
