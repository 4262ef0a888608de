// LeaseKeepAlive: renews a lease every ttl/3 on a thread of its own until destroyed, so a tuner that is
// busy generating candidates does not lose its devices. A failed renewal is logged (a warning at the first of a
// streak), remembered until the next success (last_error()) and retried at the next period; the lease is not
// released by this class.
//
// Thread safety: last_error() may be called from any thread. `client` must outlive the keep-alive.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "tracker/client.h"

namespace tunefleet {

class LeaseKeepAlive {
 public:
  LeaseKeepAlive(TrackerClient* client, Lease lease);
  ~LeaseKeepAlive();  // stops renewing (returns within one in-flight Renew)
  LeaseKeepAlive(const LeaseKeepAlive&) = delete;
  LeaseKeepAlive& operator=(const LeaseKeepAlive&) = delete;

  Status last_error() const;  // of the latest renewal: OK once one succeeded again
  int renewals() const;  // successful renewals so far
  // The agents the lease held at the latest renewal (its devices' count until then; 0: the tracker did not say).
  uint32_t devices() const;

 private:
  void Loop();

  TrackerClient* const client_;
  const Lease lease_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;     // guarded by mu_
  Status last_error_;     // guarded by mu_
  int renewals_ = 0;      // guarded by mu_
  uint32_t devices_;      // guarded by mu_
  std::thread thread_;
};

}  // namespace tunefleet
