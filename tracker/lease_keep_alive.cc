#include "tracker/lease_keep_alive.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tunefleet {

LeaseKeepAlive::LeaseKeepAlive(TrackerClient* client, Lease lease)
    : client_(client),
      lease_(std::move(lease)),
      devices_(static_cast<uint32_t>(lease_.devices.size())),
      thread_([this] { Loop(); }) {}

LeaseKeepAlive::~LeaseKeepAlive() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LeaseKeepAlive::Loop() {
  // ttl/3 leaves two more chances before the lease runs out; never spin faster than 100 ms.
  const auto period = std::chrono::milliseconds(std::max<int64_t>(100, static_cast<int64_t>(lease_.ttl * 1000 / 3)));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    lock.unlock();
    // Bounded by the period: a renewal on a stalled link does not hold up the next one, nor this object's end.
    Result<uint32_t> renewed = client_->Renew(lease_, std::chrono::duration<double>(period).count());
    lock.lock();
    if (stop_ || client_->cancelled()) break;  // a stop cancels the renewal: nothing to say of it
    const Status s = renewed.status();
    if (s.ok()) {
      if (!last_error_.ok()) spdlog::info("lease {} renewed again", lease_.lease_id);
      renewals_++;
      devices_ = *renewed;
      last_error_ = Status::OK();
    } else {
      // Said once per streak: the tracker may be restarting (the run waits for it), or the lease ran out (the next
      // batch acquires another).
      if (last_error_.ok()) spdlog::warn("cannot renew lease {}: {}", lease_.lease_id, s.message());
      last_error_ = s;
    }
  }
}

Status LeaseKeepAlive::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

uint32_t LeaseKeepAlive::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_;
}

int LeaseKeepAlive::renewals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return renewals_;
}

}  // namespace tunefleet
