// Printable: text read from a file or a peer (a tuning log's device name, task spec, template name, a parser's
// message quoting its input), made safe to print on a terminal or in a one-line message: control characters (a
// newline that forges a table row, an escape sequence that clears the screen) become \xNN, and text longer than
// `max_bytes` is cut with a note of its length. kAsciiOnly escapes every byte outside printable ASCII too, for text
// that may hold bytes which are not UTF-8.
// Thread safety: a pure function.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tunefleet {

enum class PrintableBytes { kUtf8Kept, kAsciiOnly };

inline std::string Printable(std::string_view text, size_t max_bytes = 200,
                             PrintableBytes keep = PrintableBytes::kUtf8Kept) {
  std::string out;
  const std::string_view head = text.substr(0, max_bytes);
  for (char ch : head) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || (c > 0x7f && keep == PrintableBytes::kAsciiOnly)) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  if (text.size() > max_bytes) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace tunefleet
