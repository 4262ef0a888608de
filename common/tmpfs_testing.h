// Test-only: a small tmpfs of its own, to see what a write into a full disk does. Mounting needs root (CI runs as
// root); elsewhere why_not() says why there is none, and the test skips with that line. Unmounted (lazily, so that
// a file still open in it cannot keep it) and removed at the end.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace tunefleet {

class SmallTmpfs {
 public:
  // Mounts a tmpfs of `bytes` on `folder` (created).
  SmallTmpfs(const std::string& folder, size_t bytes) : folder_(folder) {
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    if (::geteuid() != 0) {
      why_not_ = "mounting a small tmpfs to fill needs root; skipped (run the tests as root to run it)";
      return;
    }
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", folder_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      why_not_ = "cannot mount a small tmpfs on " + folder_ + " (" + std::strerror(errno) +
                 "; a container without CAP_SYS_ADMIN?); skipped";
      return;
    }
    mounted_ = true;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(folder_.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove_all(folder_, ec);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  // Empty when the tmpfs is mounted; else why not.
  const std::string& why_not() const { return why_not_; }
  std::string File(const std::string& name) const { return folder_ + "/" + name; }

  // Fills the file system with a file of its own until not one byte more fits; returns the file's path (remove it to
  // make room again).
  std::string Fill() const {
    const std::string path = File("filler");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return path;
    const std::vector<char> block(4096, 'f');
    for (size_t size = block.size(); size > 0;) {
      if (::write(fd, block.data(), size) < static_cast<ssize_t>(size)) size /= 2;  // the last page: smaller writes
    }
    ::close(fd);
    return path;
  }

 private:
  std::string folder_;
  std::string why_not_;
  bool mounted_ = false;
};

}  // namespace tunefleet
