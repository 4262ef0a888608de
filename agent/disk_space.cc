#include "agent/disk_space.h"

#include <spdlog/fmt/fmt.h>

#include <sys/statvfs.h>

#include <cstdlib>
#include <limits>

namespace tunefleet::agent {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string Size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  if (bytes < (uint64_t{1} << 20)) return std::to_string(bytes >> 10) + " KB";
  if (bytes < (uint64_t{10} << 20)) return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20));
  return std::to_string(bytes >> 20) + " MB";
}

}  // namespace

std::optional<FreeSpace> FreeSpaceOf(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return std::nullopt;
  for (;;) {
    struct statvfs st {};
    if (statvfs(p.c_str(), &st) == 0) {
      FreeSpace free;
      free.bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
      // A file system that does not count inodes (btrfs, some FUSE ones) says 0 of 0.
      free.inodes = st.f_files == 0 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(st.f_favail);
      return free;
    }
    if (!p.has_relative_path()) return std::nullopt;  // the root itself cannot be read
    p = p.parent_path();
  }
}

std::vector<std::filesystem::path> CompilerWriteDirs(const std::filesystem::path& cache_dir) {
  std::vector<std::filesystem::path> dirs;
  if (!cache_dir.empty()) {
    dirs.push_back(cache_dir);
  } else if (const std::string pocl = Env("POCL_CACHE_DIR"); !pocl.empty()) {
    dirs.emplace_back(pocl);
  } else if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) {
    dirs.push_back(std::filesystem::path(xdg) / "pocl");
  } else if (const std::string home = Env("HOME"); !home.empty()) {
    dirs.push_back(std::filesystem::path(home) / ".cache" / "pocl");
  }
  return dirs;
}

std::optional<std::string> NearlyFullDisk(const std::vector<std::filesystem::path>& dirs, uint64_t min_bytes,
                                          uint64_t min_inodes) {
  for (const auto& d : dirs) {
    const std::optional<FreeSpace> free = FreeSpaceOf(d);
    if (!free) continue;
    if (free->bytes < min_bytes) return d.string() + " has " + Size(free->bytes) + " free";
    if (free->inodes < min_inodes) return d.string() + " has " + std::to_string(free->inodes) + " inodes free";
  }
  return std::nullopt;
}

}  // namespace tunefleet::agent
