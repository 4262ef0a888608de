// HTML text and attribute escaping, for the tracker's status page and the tuner's report: a device name or a task
// spec comes from an agent or a log and must not become markup. Control characters, which HTML does not allow in a
// page (a tab and line ends aside), are shown as \xNN per byte, as tunefleet's other output (Printable) shows them:
// C0, DEL, C1 and the bidirectional overrides and isolates, which reordered the text around a device name on the
// page; so are bytes that are not UTF-8 (the page declares UTF-8).
// Thread safety: free function, no state.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/printable.h"
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
        const size_t control = c == '\t' || c == '\n' || c == '\r' ? 0 : ControlLength(s, i);
        if (control > 0 || sequence == 0) {
          const size_t bytes = std::max<size_t>(control, 1);
          for (size_t k = 0; k < bytes; ++k) {
            char escaped[5];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(s[i + k]));
            out += escaped;
          }
          i += bytes;
        } else {
          out.append(s, i, sequence);
          i += sequence;
        }
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace tunefleet
