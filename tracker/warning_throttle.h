// WarningThrottle: a warning that a peer can make the tracker say at will (a wrong token, a stream that never
// registers, an agent over --max-agents) is said at its first occurrence, then at most once per interval, with the
// count of occurrences since the last line: 6,000 calls with a wrong token wrote 6,000 lines in 1.6 s. What a burst
// that ended held back is said by SayHeldOver once the interval has passed (the tracker's housekeeping calls it),
// not only at the next occurrence, which may never come.
// Thread safety: safe to share; its own mutex guards it.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace tunefleet::tracker {

class WarningThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  // `what` names the occurrences in SayHeldOver's line: "calls refused for their token".
  explicit WarningThrottle(std::string what, Clock::duration interval = std::chrono::minutes(1))
      : what_(std::move(what)), interval_(interval) {}

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

  // The occurrences held back since the last line, once the interval has passed since it (they then count as said
  // at `now`); nullopt when there are none or it is too soon.
  std::optional<uint64_t> HeldOver(Clock::time_point now = Clock::now()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_ == 0 || !said_ || now - *said_ < interval_) return std::nullopt;
    said_ = now;
    const uint64_t count = held_;
    held_ = 0;
    return count;
  }

  // Says HeldOver's count, if any, in one warning: "calls refused for their token: 3 more since the last such line".
  void SayHeldOver(Clock::time_point now = Clock::now()) {
    if (const auto count = HeldOver(now)) {
      spdlog::warn("{}: {} more since the last such line (said once a minute)", what_, *count);
    }
  }

 private:
  const std::string what_;
  const Clock::duration interval_;
  std::mutex mu_;
  uint64_t held_ = 0;                      // occurrences since the last line
  std::optional<Clock::time_point> said_;  // when the last line was said
};

}  // namespace tunefleet::tracker
