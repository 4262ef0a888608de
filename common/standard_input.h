// Whether this process was started with its standard input closed (`<&-`), for commands that read '-'.
#pragma once

#include <fcntl.h>
#include <unistd.h>

namespace tunefleet {

// An inherited standard input never has FD_CLOEXEC (exec closes those): with it, or none, the one given was closed
// and the number belongs to a file this process opened since, such as gRPC's event fd. Ask before opening files.
inline bool StandardInputClosed() {
  const int flags = ::fcntl(STDIN_FILENO, F_GETFD);
  return flags == -1 || (flags & FD_CLOEXEC) != 0;
}

}  // namespace tunefleet
