#include "common/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "common/fnv_hash.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// Writes through `write` into `file` (the partial file, or the target itself for what a rename must not replace);
// errors name `path`, the file the caller asked for.
Status WriteStream(const std::string& path, const fs::path& file, const std::function<Status(std::ostream&)>& write) {
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  if (!f) {
    const int err = errno;
    // The partial file is the writer's own: the user is told of the folder it could not be made in.
    if (file != fs::path(path)) {
      const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
      return Status::IOError(path + ": cannot write a file in its folder " + folder.string() + ": " +
                             std::strerror(err));
    }
    return Status::IOError(path + ": cannot open it for writing: " + std::strerror(err));
  }
  errno = 0;
  Status written = write(f);
  f.close();
  // A stream that failed (a full disk) is said so, naming the file, whatever the writer made of it ("writing the CSV
  // failed"), with its cause where errno holds one a write or close gives (the writer's own calls, SQLite's say,
  // may have left another there).
  if (!f) return Status::IOError(path + ": write failed" + WriteErrorCause(errno));
  return written;
}

// The partial file of `target`: its name plus ".partial", beside it. A name that leaves no room for the suffix within
// the folder's file system's limit (pathconf's _PC_NAME_MAX: 255 bytes on most, 143 on eCryptfs) is cut at a UTF-8
// character's start, and the hash of the whole name added ("<cut>~<16 hex>.partial"), so that two such names cut
// alike still have partial files of their own.
fs::path PartialPath(const fs::path& target) {
  constexpr char kSuffix[] = ".partial";
  constexpr size_t kSuffixBytes = sizeof(kSuffix) - 1;
  const std::string name = target.filename().string();
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const long limit = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const size_t name_max = limit > 0 ? static_cast<size_t>(limit) : NAME_MAX;
  if (name.size() + kSuffixBytes <= name_max) return fs::path(target.string() + kSuffix);
  const std::string hash = "~" + FnvHash().Add(name).Hex();
  size_t cut = name_max > hash.size() + kSuffixBytes ? name_max - hash.size() - kSuffixBytes : 0;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
  return target.parent_path() / (name.substr(0, cut) + hash + kSuffix);
}

// fsync(2) of `file` (a file or a folder); the errno of the failure, 0 when it is on disk.
int SyncToDisk(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

std::string WriteErrorCause(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EFBIG:
    case EPIPE:
    case EROFS:
      return std::string(": ") + std::strerror(err);
    default:
      return "";
  }
}

Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  std::error_code ec;  // status() of a path that does not exist sets it too; only the link's resolution is checked
  // A symbolic link stays one: the file it names is replaced.
  // What the path names, links followed by the system: a device, a FIFO or a pipe (/dev/stdout, whose link names
  // "pipe:[N]", no path) is written in place.
  const fs::file_status named = fs::status(path, ec);
  if (fs::exists(named) && !fs::is_regular_file(named) && !fs::is_directory(named)) {
    return WriteStream(path, path, write);
  }
  // Followed link by link, so that a link whose file does not exist yet (weakly_canonical left such a link as it
  // was, and the rename replaced it) is written through too.
  fs::path target(path);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) return Status::IOError(path + ": too many levels of symbolic links");
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) return Status::IOError(path + ": cannot resolve the link: " + ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status)) return Status::IOError(path + ": is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) return WriteStream(path, target, write);  // a device, a FIFO

  const fs::path partial = PartialPath(target);
  Status written = WriteStream(path, partial, write);
  if (written.ok() && fs::exists(status)) fs::permissions(partial, status.permissions(), ec);  // keep its mode
  // On disk before the rename, and the rename on disk after it: a power cut leaves the old file or the new one,
  // never an empty one (the rename alone may reach the disk before the data).
  if (const int err = written.ok() ? SyncToDisk(partial) : 0; err != 0)
    written = Status::IOError(path + ": write failed: " + std::strerror(err));
  if (written.ok()) fs::rename(partial, target, ec);
  if (written.ok() && ec) written = Status::IOError(path + ": cannot replace it: " + ec.message());
  if (written.ok()) (void)SyncToDisk(target.has_parent_path() ? target.parent_path() : fs::path("."));
  if (!written.ok()) fs::remove(partial, ec);
  return written;
}

Status WriteOutput(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  if (path != "-") return WriteFileAtomically(path, write);
  errno = 0;
  Status written = write(std::cout);
  std::cout.flush();
  if (!std::cout) return Status::IOError("standard output: write failed" + WriteErrorCause(errno));
  return written;
}

Status FlushStandardOutput() {
  // A write that failed before (std::endl's flush of --version's line) left the stream in error and its cause in
  // errno, unless a call failed since: the cause said is then that call's, when it is one of WriteErrorCause's
  // (a database write on the same full disk), else none. Callers flush right after writing to keep it the write's.
  const int earlier = errno;
  const bool failed_before = !std::cout || std::ferror(stdout) != 0;
  errno = 0;
  std::cout.flush();
  const bool failed = failed_before || !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  const int cause = failed_before && errno == 0 ? earlier : errno;
  return failed ? Status::IOError("standard output: write failed" + WriteErrorCause(cause)) : Status::OK();
}

}  // namespace tunefleet
