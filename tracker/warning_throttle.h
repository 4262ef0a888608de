// WarningThrottle: a warning that a peer can make the tracker say at will (a wrong token, a stream that never
// registers, an agent over --max-agents) is said at its first occurrence, then at most once per interval, with the
// count of occurrences since the last line: 6,000 calls with a wrong token wrote 6,000 lines in 1.6 s.
// Thread safety: safe to share; its own mutex guards it.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace tunefleet::tracker {

class WarningThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WarningThrottle(Clock::duration interval = std::chrono::minutes(1)) : interval_(interval) {}

  // Counts an occurrence at `now`. When a line is due, the occurrences it stands for (this one included, those held
  // back since the last line too); nullopt when it is held back.
  std::optional<uint64_t> Occurred(Clock::time_point now = Clock::now()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++held_;
    if (said_ && now - *said_ < interval_) return std::nullopt;
    said_ = now;
    const uint64_t count = held_;
    held_ = 0;
    return count;
  }

 private:
  const Clock::duration interval_;
  std::mutex mu_;
  uint64_t held_ = 0;                      // occurrences since the last line
  std::optional<Clock::time_point> said_;  // when the last line was said
};

}  // namespace tunefleet::tracker
