// Milliseconds as the tables, the run's summary and the report print a kernel's time: 4 decimals, or 4 significant
// digits below 0.1 ms (a kernel of 1.77 us showed as 0.0018, one below 0.05 us as 0.0000).
// Thread safety: a pure function.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tunefleet {

inline std::string FormatMilliseconds(double ms) {
  char buf[64];
  if (ms > 0 && ms < 0.1) {
    // The decimals of the value as rounded to 4 significant digits: 0.09999996 is 0.1000, not 0.10000.
    std::snprintf(buf, sizeof buf, "%.3e", ms);
    const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
    if (exponent < -1) {
      std::snprintf(buf, sizeof buf, "%.*f", std::min(15, 3 - exponent), ms);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.4f", ms);
  return buf;
}

}  // namespace tunefleet
