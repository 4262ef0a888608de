// OpenMissingStandardStreams: a process started with standard input, output or error closed (`<&-`, `>&-`, a
// supervisor that closes them) hands those numbers to the next files it opens, such as gRPC's event fd or a socket,
// and then reads its task list from one of them or writes its lines into a connection. So each closed one is taken
// first: standard input reads as empty (/dev/null), and standard output and error fail every write as a closed one
// does (/dev/full), so a command still exits 1 for output it could not write. A library's static initializer may
// have taken the lowest closed number before main (gRPC's event fd, with FD_CLOEXEC, which no inherited stream has):
// that one cannot be had back, and a reader of standard input checks for it (tuner/task_file).
// Thread safety: call at the start of main, before other threads exist and before anything opens a file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tunefleet {

inline void OpenMissingStandardStreams() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = fd == STDIN_FILENO ? ::open("/dev/null", O_RDONLY) : ::open("/dev/full", O_WRONLY);
    if (opened >= 0 && opened != fd) {  // the lowest free number is `fd` unless a lower one was closed and not had
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

}  // namespace tunefleet
