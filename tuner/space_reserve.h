// SpaceReserve: a little disk space held back on the file system of a tuning log, to be given up for the write that
// must not fail for want of it. A run whose disk filled up fails, and ending its session as 'failed' is a write too:
// without room it failed as well, the session stayed 'running', and the next run took it for a killed run's.
// The space is an unnamed file (O_TMPFILE) allocated at once; giving it up, or the end of the process however it
// ends, frees it, and nothing is ever left on disk. Best effort: a file system without O_TMPFILE (NFS), or without
// even the least room asked, gives an empty reserve.
//
// Ownership: owns the file's descriptor. Thread safety: one owner.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "common/owned_fd.h"

namespace tunefleet {

class SpaceReserve {
 public:
  // Holds `bytes` of the file system that holds `folder`, or as much as it has down to `at_least` (halving); an
  // empty reserve when it cannot.
  static SpaceReserve Take(const std::string& folder, size_t bytes, size_t at_least);

  SpaceReserve() = default;

  // Frees the space for other writes; true when some was held.
  bool Release();

 private:
  explicit SpaceReserve(OwnedFd fd) : fd_(std::move(fd)) {}
  OwnedFd fd_;  // the file has no name: its last descriptor closed, its blocks are free
};

}  // namespace tunefleet
