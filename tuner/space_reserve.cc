#include "tuner/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace tunefleet {

SpaceReserve SpaceReserve::Take(const std::string& folder, size_t bytes) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return SpaceReserve();
  // posix_fallocate allocates the blocks (it writes them where the file system cannot): a sparse file holds nothing.
  if (::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return SpaceReserve();
  }
  return SpaceReserve(fd);
}

SpaceReserve::SpaceReserve(SpaceReserve&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

bool SpaceReserve::Release() {
  if (fd_ < 0) return false;
  ::close(std::exchange(fd_, -1));  // the file has no name: its last descriptor closed, its blocks are free
  return true;
}

}  // namespace tunefleet
