// This machine's host name, as a run names itself in the log's sessions, its lock notes and its lease notes.
// Thread safety: free function, no state.
#pragma once

#include <unistd.h>

#include <string>

namespace tunefleet {

// "" when the system does not say.
inline std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace tunefleet
