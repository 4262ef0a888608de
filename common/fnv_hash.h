// A stable 64-bit hash (FNV-1a) for cache keys, fingerprints and lock names: the same bytes give the same value on
// every machine and every run, unlike std::hash. Not cryptographic. Thread-safe (a value type).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tunefleet {

class FnvHash {
 public:
  // Adds `bytes` and a separator, so ("ab","c") and ("a","bc") differ.
  FnvHash& Add(std::string_view bytes) {
    for (unsigned char c : bytes) Mix(c);
    Mix(0xff);
    return *this;
  }
  FnvHash& Add(uint64_t value) { return Add(std::to_string(value)); }

  uint64_t value() const { return state_; }
  // 16 lowercase hex digits.
  std::string Hex() const {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(state_));
    return text;
  }

 private:
  void Mix(unsigned char c) {
    state_ ^= c;
    state_ *= 0x100000001b3ull;
  }
  uint64_t state_ = 0xcbf29ce484222325ull;
};

}  // namespace tunefleet
