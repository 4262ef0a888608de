// The wall clock in seconds since the Unix epoch, as the tuning log stores times (sessions, records).
// Thread safety: free function, no state.
#pragma once

#include <chrono>

namespace tunefleet {

inline double WallClockSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace tunefleet
