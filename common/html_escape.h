// HTML text and attribute escaping, for the tracker's status page and the tuner's report: a device name or a task
// spec comes from an agent or a log and must not become markup.
// Thread safety: free function, no state.
#pragma once

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
      default: out += c;
    }
  }
  return out;
}

}  // namespace tunefleet
