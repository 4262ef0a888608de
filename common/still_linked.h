// StillLinked: whether an open descriptor still names the file at a path. A file that several processes lock by
// name (a run lock, a lease note) is removed by whoever finds it abandoned while holding its lock; a process that
// opened the name just before and locks it just after holds a file nobody else will ever open again, and must open
// the name anew.
// Thread safety: free function, no state.
#pragma once

#include <sys/stat.h>

#include <string>

namespace tunefleet {

inline bool StillLinked(int fd, const std::string& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace tunefleet
