// CallDeadlines: cancels calls that wait past a deadline for something their handler cannot wait for with a timeout
// of its own (a sync stream's first Read). A handler arms a deadline with the call's cancel function and keeps the
// returned Armed until what it waited for has come; the owner calls CancelOverdue() periodically (the tracker's
// housekeeping), which runs the cancel function of every call past its deadline, once.
//
// Ownership: the cancel function (which borrows the call's ServerContext) is kept only while armed, and is never run
// after its Armed is disarmed or destroyed: an Armed must not outlive what its cancel function borrows.
// Thread safety: all methods may be called from any thread; cancel functions run under the internal mutex, so they
// must not call back into this object.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "tracker/lease_table.h"  // Clock, TimePoint

namespace tunefleet::tracker {

class CallDeadlines {
 public:
  // An armed deadline; disarms when destroyed. Move-only.
  class [[nodiscard]] Armed {
   public:
    Armed(Armed&& o) noexcept : owner_(std::exchange(o.owner_, nullptr)), id_(o.id_) {}
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;
    Armed& operator=(Armed&&) = delete;
    ~Armed() { (void)Disarm(); }
    // False when the deadline had passed and the call was cancelled already. Idempotent (false after the first).
    bool Disarm() {
      CallDeadlines* owner = std::exchange(owner_, nullptr);
      return owner && owner->Erase(id_);
    }

   private:
    friend class CallDeadlines;
    Armed(CallDeadlines* owner, uint64_t id) : owner_(owner), id_(id) {}
    CallDeadlines* owner_;
    uint64_t id_;
  };

  CallDeadlines() = default;
  CallDeadlines(const CallDeadlines&) = delete;
  CallDeadlines& operator=(const CallDeadlines&) = delete;

  Armed Arm(TimePoint deadline, std::function<void()> cancel) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_id_++;
    armed_.emplace(id, Entry{deadline, std::move(cancel)});
    return Armed(this, id);
  }

  // Cancels (and disarms) every call whose deadline is <= now. TimePoint::max() cancels them all.
  void CancelOverdue(TimePoint now) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = armed_.begin(); it != armed_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      it->second.cancel();  // under mu_: its handler cannot disarm and return (ending the call) meanwhile
      it = armed_.erase(it);
    }
  }

 private:
  struct Entry {
    TimePoint deadline;
    std::function<void()> cancel;
  };

  bool Erase(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return armed_.erase(id) != 0;
  }

  std::mutex mu_;
  uint64_t next_id_ = 1;                // guarded by mu_
  std::map<uint64_t, Entry> armed_;     // by id; guarded by mu_
};

}  // namespace tunefleet::tracker
