// KernelDiskCache: a folder of one agent's own for PoCL's on-disk kernel cache (the worker's POCL_CACHE_DIR), kept
// under a size. PoCL keeps every program it builds on disk (about 59 KB a job in a soak), and its default folder
// (~/.cache/pocl/kcache) grows without bound on an agent that serves for weeks; without the cache (POCL_KERNEL_CACHE=0)
// every repeated kernel is compiled again.
//
// PoCL writes into a program's folder while the program lives (it compiles a kernel again for each local size at its
// first launch), so the folder is pruned only while no process uses it: the agents of one host share the root, and
// each takes the first slot folder ("slot-0", "slot-1", ...) whose lock file ("slot-N.lock", flock) no live agent
// holds; its supervisor prunes only between jobs, with its worker stopped. A restarted agent takes the slot its
// predecessor left (the lock file names what the agent served), and its kernels with it. Drivers other than PoCL do
// not read POCL_CACHE_DIR: the folder stays empty.
//
// Ownership: holds the slot's lock file open; the destructor releases the slot.
// Thread safety: none; one owner.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet::agent {

class KernelDiskCache {
 public:
  static constexpr int kMaxSlots = 64;

  // Takes a free slot below `root` (created when missing): the first that an agent of the same `owner` (what the
  // agent serves: key, platform, device) left, else the first no agent named, else the first free one, and writes
  // `owner` into its lock file. Only the slot taken gets a lock file and a folder. Fails when the root cannot be
  // made or all kMaxSlots slots are held.
  static Result<std::unique_ptr<KernelDiskCache>> Claim(const std::filesystem::path& root, uint64_t limit_bytes,
                                                        const std::string& owner = "");
  KernelDiskCache(const KernelDiskCache&) = delete;
  KernelDiskCache& operator=(const KernelDiskCache&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  uint64_t limit_bytes() const { return limit_bytes_; }

  // The bytes of the regular files below dir(); symbolic links are not followed (what a file that vanishes during
  // the walk held is not counted).
  uint64_t Bytes() const;

  struct Pruned {
    int entries = 0;           // entries removed
    uint64_t bytes = 0;        // what was removed
    uint64_t left = 0;         // what the folder holds after
    int failed = 0;            // entries that could not be removed (another user's, a read-only folder): left
    uint64_t stuck_bytes = 0;  // what they hold
    std::string first_failure;
  };
  // Removes the least recently used entries (PoCL's program folders, two levels below dir(), by the newest time of
  // their files; PoCL touches a program's `last_accessed` when it uses it) until the rest, leaving aside entries that
  // cannot be removed, hold at most half the limit. Only while no process uses dir(). A symbolic link is removed as a
  // link.
  Pruned Prune();
  // The same down to `keep_bytes` (0: every entry that can be removed; for a full disk).
  Pruned PruneTo(uint64_t keep_bytes);
  // Removes the temporary files PoCL left directly in dir() ("tempfile_*", one, often empty, at each worker's start):
  // the byte limit never reached them, and they used up a small disk's inodes. Only while no process uses dir().
  // Returns how many were removed.
  int RemoveLeftovers();

 private:
  KernelDiskCache(OwnedFd lock, std::filesystem::path dir, uint64_t limit_bytes)
      : lock_(std::move(lock)), dir_(std::move(dir)), limit_bytes_(limit_bytes) {}

  OwnedFd lock_;  // flock held while it lives
  std::filesystem::path dir_;
  uint64_t limit_bytes_;
};

}  // namespace tunefleet::agent
