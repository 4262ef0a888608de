// Device keys: the name agents register under and tuners lease devices by ("pixel7-adreno"). A key is 1-128
// bytes of UTF-8, holds no control character (C0, C1 or a bidirectional override) and has no space at either
// end, so that it prints as one plain word in a log line, the query table and a Prometheus label. Checked where a
// key comes in: the agent's --key, the tuner's --rpc-key, and the tracker's RegisterAgent (a peer's key is not
// logged or counted before it passes).
// Thread safety: pure function.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "common/printable.h"
#include "common/utf8.h"

namespace tunefleet {

inline constexpr size_t kMaxDeviceKeyBytes = 128;

// What is wrong with `key`, as the end of a sentence ("is empty"); nullopt when it is a good key.
inline std::optional<std::string> DeviceKeyProblem(std::string_view key) {
  if (key.empty()) return "is empty";
  if (key.size() > kMaxDeviceKeyBytes) {
    return "is " + std::to_string(key.size()) + " bytes long (at most " + std::to_string(kMaxDeviceKeyBytes) + ")";
  }
  if (!IsUtf8(key)) return "is not valid UTF-8";  // it travels in protobuf strings
  for (size_t i = 0; i < key.size(); ++i) {
    if (ControlLength(key, i) > 0) {
      char what[64];
      std::snprintf(what, sizeof what, "holds a control character (byte 0x%02x at %zu)",
                    static_cast<unsigned char>(key[i]), i);
      return std::string(what);
    }
  }
  if (key.front() == ' ' || key.back() == ' ') return "starts or ends with a space";
  return std::nullopt;
}

}  // namespace tunefleet
