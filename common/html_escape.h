// HTML text and attribute escaping, for the tracker's status page and the tuner's report: a device name or a task
// spec comes from an agent or a log and must not become markup. Control characters, which HTML does not allow in a
// page (a tab and line ends aside), are shown as \xNN, as tunefleet's other output shows them; so are bytes that are
// not UTF-8 (the page declares UTF-8).
// Thread safety: free function, no state.
#pragma once

#include <cstdio>
#include <string>

#include "common/utf8.h"

namespace tunefleet {

inline std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto b = static_cast<unsigned char>(c);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        // A byte that starts no UTF-8 character (a page in UTF-8 may hold no other) is shown as \xNN too.
        const size_t sequence = b < 0x80 ? 1 : Utf8SequenceLength(s, i);
        if ((b < 0x20 && c != '\t' && c != '\n' && c != '\r') || b == 0x7f || sequence == 0) {
          char escaped[5];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", b);
          out += escaped;
        } else {
          out.append(s, i, sequence);
          i += sequence;
          continue;
        }
      }
    }
    ++i;
  }
  return out;
}

}  // namespace tunefleet
