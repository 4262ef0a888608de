#include "agent/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace tunefleet::agent {
namespace {

std::string TempDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && *tmpdir != '\0') return tmpdir;
  struct stat st {};
  if (stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) && access("/tmp", W_OK) == 0) return "/tmp";
  return "/data/local/tmp";  // Android: no /tmp, and adb pushes land here
}

}  // namespace

Result<DeviceLock> DeviceLock::Open(const std::string& path) {
  // Read-only is enough for flock, so agents of other users can share a lock file the first one created.
  OwnedFd fd(open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::Unavailable("cannot open the device lock " + path + ": " + std::strerror(errno));
  return DeviceLock(std::move(fd), path);
}

std::string DeviceLock::DefaultPath(const std::string& fingerprint, int platform, int device) {
  return TempDir() + "/tunefleet-device-" + fingerprint + "-p" + std::to_string(platform) + "-d" +
         std::to_string(device) + ".lock";
}

DeviceLock::Guard& DeviceLock::Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void DeviceLock::Guard::Release() {
  if (fd_ >= 0) flock(fd_, LOCK_UN);
  fd_ = -1;
}

Result<DeviceLock::Guard> DeviceLock::TryAcquire() {
  if (flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) return Guard(fd_.get());
  if (errno == EWOULDBLOCK) return Guard();
  return Status::Unavailable("cannot lock " + path_ + ": " + std::strerror(errno));
}

Result<DeviceLock::Guard> DeviceLock::Acquire() {
  for (;;) {
    if (flock(fd_.get(), LOCK_EX) == 0) return Guard(fd_.get());
    if (errno != EINTR) return Status::Unavailable("cannot lock " + path_ + ": " + std::strerror(errno));
  }
}

}  // namespace tunefleet::agent
