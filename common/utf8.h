// IsUtf8: whether text is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF). Text that
// goes into a protobuf string (a token) or into JSON (a tuning log's arguments) must be; the command-line tools refuse
// other bytes in one line rather than let protobuf or the JSON writer fail later with messages of their own.
// Thread safety: a pure function.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tunefleet {

// The length in bytes of the well-formed UTF-8 sequence at `text[i]` (1 for ASCII), 0 when the bytes there are none.
inline size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto c = static_cast<uint8_t>(text[i]);
  int more = 0;
  uint32_t cp = 0, min = 0;
  if (c < 0x80) {
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    more = 1, cp = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    more = 2, cp = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    more = 3, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;  // a continuation byte first, or 0xf8-0xff
  }
  if (text.size() - i <= static_cast<size_t>(more)) return 0;  // cut short
  for (int k = 1; k <= more; ++k) {
    const auto b = static_cast<uint8_t>(text[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return static_cast<size_t>(more) + 1;
}

inline bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// The longest head of `text` of at most `max_bytes` that ends at a character's end: a cut that would split a UTF-8
// sequence is made before it (other bytes count as one character each).
inline std::string_view Utf8Head(std::string_view text, size_t max_bytes) {
  size_t end = 0;
  while (end < text.size()) {
    const size_t n = std::max<size_t>(Utf8SequenceLength(text, end), 1);
    if (end + n > max_bytes) break;
    end += n;
  }
  return text.substr(0, end);
}

}  // namespace tunefleet
