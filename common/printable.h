// Printable: text read from a file or a peer (a tuning log's device name, task spec, template name, a parser's
// message quoting its input), made safe to print on a terminal or in a one-line message: control characters (a
// newline that forges a table row, an escape sequence that clears the screen; C1 controls such as U+009B, which some
// terminals read as an escape; the bidirectional overrides and isolates that reorder what is shown) and bytes that
// are not well-formed UTF-8 become \xNN per byte, and text longer than `max_bytes` is cut with a note of its length.
// kAsciiOnly escapes every byte outside printable ASCII too.
// Thread safety: a pure function.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/utf8.h"

namespace tunefleet {

enum class PrintableBytes { kUtf8Kept, kAsciiOnly };

// The length in bytes of a control character at `text[i]` (C0 or DEL: 1; C1 as UTF-8, U+0080-U+009F: 2; U+202A-
// U+202E or U+2066-U+2069 as UTF-8: 3), 0 when there is none there.
inline size_t ControlLength(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0; };
  const unsigned char c = at(0);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && at(1) >= 0x80 && at(1) <= 0x9f) return 2;
  const bool bidi = c == 0xe2 && ((at(1) == 0x80 && at(2) >= 0xaa && at(2) <= 0xae) ||
                                   (at(1) == 0x81 && at(2) >= 0xa6 && at(2) <= 0xa9));
  return bidi ? 3 : 0;
}

inline std::string Printable(std::string_view text, size_t max_bytes = 200,
                             PrintableBytes keep = PrintableBytes::kUtf8Kept) {
  std::string out;
  const std::string_view head = text.substr(0, max_bytes);
  for (size_t i = 0; i < head.size();) {
    const auto c = static_cast<unsigned char>(head[i]);
    size_t control = keep == PrintableBytes::kAsciiOnly ? (c < 0x20 || c >= 0x7f ? 1 : 0) : ControlLength(head, i);
    if (control == 0 && keep == PrintableBytes::kUtf8Kept) {
      const size_t sequence = Utf8SequenceLength(head, i);
      if (sequence == 0) {
        control = 1;  // a byte that is not UTF-8: escaped alone, what follows it read afresh
      } else {
        out.append(head.substr(i, sequence));
        i += sequence;
        continue;
      }
    }
    if (control == 0) {
      out += head[i++];
      continue;
    }
    for (size_t k = 0; k < control && i < head.size(); ++k, ++i) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(head[i]));
      out += escaped;
    }
  }
  if (text.size() > max_bytes) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace tunefleet
