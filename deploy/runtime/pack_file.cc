#include "deploy/runtime/pack_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/owned_fd.h"

namespace tunefleet::runtime {
namespace {

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

}  // namespace

Result<std::string> ReadPackFile(const std::string& path, int64_t max_bytes) {
  OwnedFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    const std::string msg = path + ": cannot open kernel pack: " + ErrnoText(err);
    return err == ENOENT || err == ENOTDIR ? Status::NotFound(msg) : Status::IOError(msg);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::IOError(path + ": cannot stat kernel pack: " + ErrnoText(errno));
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + ": is a directory, not a kernel pack file");
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": is not a regular file, not a kernel pack");
  const std::string too_large =
      path + ": kernel pack is larger than the limit of " + std::to_string(max_bytes) + " bytes";
  if (st.st_size > max_bytes) return Status::InvalidArgument(too_large);
  std::string text;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(path + ": cannot read kernel pack: " + ErrnoText(errno));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > static_cast<size_t>(max_bytes)) {
      return Status::InvalidArgument(too_large);  // grew after fstat
    }
    text.append(chunk, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace tunefleet::runtime
