#include "tuner/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace tunefleet {

SpaceReserve SpaceReserve::Take(const std::string& folder, size_t bytes, size_t at_least) {
  OwnedFd fd(::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) return SpaceReserve();
  // posix_fallocate allocates the blocks (it writes them where the file system cannot): a sparse file holds nothing.
  // A disk with less room than `bytes` gives what it has, halving down to `at_least`: a run that began on an almost
  // full disk held nothing back, and could not end its session when the disk filled.
  for (size_t size = bytes; size >= at_least && size > 0; size /= 2) {
    if (::posix_fallocate(fd.get(), 0, static_cast<off_t>(size)) == 0) return SpaceReserve(std::move(fd));
    if (::ftruncate(fd.get(), 0) != 0) break;  // what a failed try allocated, given back before the next
  }
  return SpaceReserve();
}

bool SpaceReserve::Release() {
  if (!fd_.valid()) return false;
  fd_.reset();
  return true;
}

}  // namespace tunefleet
