// OwnedFd: owns one file descriptor and closes it when it goes (RAII for a file read with open/read).
// Thread safety: one owner.
#pragma once

#include <unistd.h>

namespace tunefleet {

class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace tunefleet
