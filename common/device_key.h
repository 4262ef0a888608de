// Device keys: the name agents register under and tuners lease devices by ("pixel7-adreno"). A key is 1-128
// bytes, holds no control character and has no space at either end, so that it prints as one plain word in a log
// line, the query table and a Prometheus label. Checked where a key comes in: the agent's --key, the tuner's
// --rpc-key, and the tracker's RegisterAgent (a peer's key is not logged or counted before it passes).
// Thread safety: pure function.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace tunefleet {

inline constexpr size_t kMaxDeviceKeyBytes = 128;

// What is wrong with `key`, as the end of a sentence ("is empty"); nullopt when it is a good key.
inline std::optional<std::string> DeviceKeyProblem(std::string_view key) {
  if (key.empty()) return "is empty";
  if (key.size() > kMaxDeviceKeyBytes) {
    return "is " + std::to_string(key.size()) + " bytes long (at most " + std::to_string(kMaxDeviceKeyBytes) + ")";
  }
  for (size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c < 0x20 || c == 0x7f) {
      char what[64];
      std::snprintf(what, sizeof what, "holds a control character (byte 0x%02x at %zu)", c, i);
      return std::string(what);
    }
  }
  if (key.front() == ' ' || key.back() == ' ') return "starts or ends with a space";
  return std::nullopt;
}

}  // namespace tunefleet
