// A duration in seconds as the tracker's messages say it: "12.5 s".
// Thread safety: free function, no state.
#pragma once

#include <cstdio>
#include <string>

namespace tunefleet {

inline std::string SecondsText(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

}  // namespace tunefleet
