// Durations in seconds: the longest one a tool or the tracker gives a clock, and how the tracker's messages say one.
// Thread safety: free functions and constants, no state.
#pragma once

#include <cstdio>
#include <string>

namespace tunefleet {

// A day: the longest lease ttl and heartbeat timeout the tracker takes (and its client believes), in seconds.
inline constexpr double kOneDaySeconds = 86400.0;
// The longest wait or budget taken, in seconds: longer would mean nothing, and a clock must hold it (1e300 s
// overflowed it).
inline constexpr double kOneYearSeconds = 365 * kOneDaySeconds;

// "12.5 s".
inline std::string SecondsText(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

}  // namespace tunefleet
