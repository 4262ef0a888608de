// Whether a file's text holds a PEM block of a kind, so that a wrong --tls-* file is named in one line before gRPC
// reads it (gRPC logs several lines of its own, then the client only fails to connect).
// Thread safety: free function, no state.
#pragma once

#include <string>
#include <string_view>

namespace tunefleet {

// True when `text` has a "-----BEGIN ...<label>-----" line: `label` "CERTIFICATE", or "PRIVATE KEY" (which also
// matches "RSA PRIVATE KEY" and "EC PRIVATE KEY").
inline bool HasPemBlock(std::string_view text, std::string_view label) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kDashes = "-----";
  for (size_t at = text.find(kBegin); at != std::string_view::npos; at = text.find(kBegin, at + 1)) {
    const size_t start = at + kBegin.size();
    const size_t end = text.find(kDashes, start);
    if (end == std::string_view::npos) return false;
    const std::string_view name = text.substr(start, end - start);
    if (name.size() >= label.size() && name.substr(name.size() - label.size()) == label) return true;
  }
  return false;
}

}  // namespace tunefleet
