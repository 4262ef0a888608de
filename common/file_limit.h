// RaiseFileLimit: the soft RLIMIT_NOFILE raised to the hard one, for a daemon whose connections are its file
// descriptors. At the common soft limit of 1024 a burst of connections used them all, and the system gRPC's
// accept loop did not recover from "Too many open files" (its port took no connection after the burst ended while
// the process lived on); the hard limit (systemd's LimitNOFILE=, often 524288) leaves a burst far more room.
// Thread safety: call at the start of main, before other threads exist.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace tunefleet {

// Returns the soft limit in force afterwards (the old one when it cannot be raised).
inline uint64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
  }
  return limit.rlim_cur;
}

}  // namespace tunefleet
