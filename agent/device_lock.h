// An exclusive, cross-process lock on one OpenCL device, so several agents (each with its own worker) can share a
// device: they build kernels in parallel, but only one at a time uploads, runs and times on it. Timing is never
// disturbed by another agent's kernels, and compile-bound tuning (most GPUs: building a candidate takes far longer
// than timing it) gets one compiler per agent.
//
// The lock is flock(2) on a file, so the kernel releases it when its holder dies (a crashed or killed worker never
// leaves the device locked). The default file is named by the device's fingerprint and its platform/device index
// in the temporary directory ($TMPDIR, else /tmp, else /data/local/tmp on Android), so agents on the same device
// find each other without configuration.
//
// Ownership: owns the file descriptor; a Guard holds the lock until it is destroyed.
// Thread safety: none; one worker thread uses it.
#pragma once

#include <string>
#include <utility>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet::agent {

class DeviceLock {
 public:
  // Opens (creating when missing) the lock file at `path`. Does not take the lock.
  static Result<DeviceLock> Open(const std::string& path);
  // The default lock file of a device: <tmpdir>/tunefleet-device-<fingerprint>-p<platform>-d<device>.lock.
  static std::string DefaultPath(const std::string& fingerprint, int platform, int device);

  // Holds the lock while alive.
  class Guard {
   public:
    Guard() = default;
    Guard(Guard&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Guard& operator=(Guard&& other) noexcept;
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { Release(); }
    bool held() const { return fd_ >= 0; }
    void Release();

   private:
    friend class DeviceLock;
    explicit Guard(int fd) : fd_(fd) {}
    int fd_ = -1;
  };

  // Takes the lock without waiting; an empty Guard when another process holds it.
  Result<Guard> TryAcquire();
  // Takes the lock, waiting as long as another process holds it.
  Result<Guard> Acquire();

 private:
  DeviceLock(OwnedFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  OwnedFd fd_;
  std::string path_;
};

}  // namespace tunefleet::agent
