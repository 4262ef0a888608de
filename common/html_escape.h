// HTML text and attribute escaping, for the tracker's status page and the tuner's report: a device name or a task
// spec comes from an agent or a log and must not become markup. Control characters, which HTML does not allow in a
// page (a tab and line ends aside), are shown as \xNN, as tunefleet's other output shows them.
// Thread safety: free function, no state.
#pragma once

#include <cstdio>
#include <string>

namespace tunefleet {

inline std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        const auto b = static_cast<unsigned char>(c);
        if ((b < 0x20 && c != '\t' && c != '\n' && c != '\r') || b == 0x7f) {
          char escaped[5];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", b);
          out += escaped;
        } else {
          out += c;
        }
      }
    }
  }
  return out;
}

}  // namespace tunefleet
