// Mailbox<T>: a closable FIFO between threads. Producers Push() (never blocks); one consumer takes
// everything queued with Take(). Used as the write queue of a stream: TrackerState pushes jobs for an agent
// or events for a Measure call while holding its lock, and the stream's handler thread writes them to the
// wire outside any lock.
//
// Thread safety: all methods are safe to call concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace tunefleet::tracker {

template <typename T>
class Mailbox {
 public:
  enum class Took { kItems, kTimeout, kClosed };

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Ignored after Close().
  void Push(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      items_.push_back(std::move(item));
    }
    cv_.notify_all();
  }

  // Wakes the consumer; items already queued are still taken, then Take() reports kClosed.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

  // Moves every queued item into `out` (cleared first). Waits up to `timeout` for at least one.
  Took Take(std::vector<T>* out, std::chrono::milliseconds timeout) {
    out->clear();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return closed_ || !items_.empty(); });
    if (items_.empty()) return closed_ ? Took::kClosed : Took::kTimeout;
    out->assign(std::make_move_iterator(items_.begin()), std::make_move_iterator(items_.end()));
    items_.clear();
    return Took::kItems;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;  // guarded by mu_
  bool closed_ = false;  // guarded by mu_
};

}  // namespace tunefleet::tracker
