#include "tuner/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace tunefleet {

SpaceReserve SpaceReserve::Take(const std::string& folder, size_t bytes) {
  OwnedFd fd(::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) return SpaceReserve();
  // posix_fallocate allocates the blocks (it writes them where the file system cannot): a sparse file holds nothing.
  if (::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)) != 0) return SpaceReserve();
  return SpaceReserve(std::move(fd));
}

bool SpaceReserve::Release() {
  if (!fd_.valid()) return false;
  fd_.reset();
  return true;
}

}  // namespace tunefleet
