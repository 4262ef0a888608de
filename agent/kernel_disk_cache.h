// KernelDiskCache: a folder of one agent's own for PoCL's on-disk kernel cache (the worker's POCL_CACHE_DIR), kept
// under a size. PoCL keeps every program it builds on disk (about 59 KB a job in a soak), and its default folder
// (~/.cache/pocl/kcache) grows without bound on an agent that serves for weeks; without the cache (POCL_KERNEL_CACHE=0)
// every repeated kernel is compiled again.
//
// PoCL writes into a program's folder while the program lives (it compiles a kernel again for each local size at its
// first launch), so the folder is pruned only while no process uses it: the agents of one host share the root, and
// each takes the first slot folder ("slot-0", "slot-1", ...) whose lock file ("slot-N.lock", flock) no live agent
// holds; its supervisor prunes only between jobs, with its worker stopped. A restarted agent takes the slot its
// predecessor left, and its kernels with it. Drivers other than PoCL do not read POCL_CACHE_DIR: the folder stays
// empty.
//
// Ownership: holds the slot's lock file open; the destructor releases the slot.
// Thread safety: none; one owner.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet::agent {

class KernelDiskCache {
 public:
  static constexpr int kMaxSlots = 64;

  // Takes the first free slot below `root` (created when missing); fails when the root cannot be made or all
  // kMaxSlots slots are held.
  static Result<std::unique_ptr<KernelDiskCache>> Claim(const std::filesystem::path& root, uint64_t limit_bytes);
  KernelDiskCache(const KernelDiskCache&) = delete;
  KernelDiskCache& operator=(const KernelDiskCache&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  uint64_t limit_bytes() const { return limit_bytes_; }

  // The bytes of the files below dir() (what a file that vanishes during the walk held is not counted).
  uint64_t Bytes() const;

  struct Pruned {
    int entries = 0;      // programs removed
    uint64_t bytes = 0;   // what they held
    uint64_t left = 0;    // what the folder holds after
  };
  // Removes the least recently used entries (PoCL's program folders, two levels below dir(), by the newest time of
  // their files) until the rest hold at most half the limit. Only while no process uses dir(). An entry that cannot
  // be removed fails the prune, with what was removed before it gone.
  Result<Pruned> Prune();

 private:
  KernelDiskCache(OwnedFd lock, std::filesystem::path dir, uint64_t limit_bytes)
      : lock_(std::move(lock)), dir_(std::move(dir)), limit_bytes_(limit_bytes) {}

  OwnedFd lock_;  // flock held while it lives
  std::filesystem::path dir_;
  uint64_t limit_bytes_;
};

}  // namespace tunefleet::agent
