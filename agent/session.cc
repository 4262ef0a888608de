#include "agent/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "agent/tracker_connection.h"
#include "common/tls_hint.h"

namespace tunefleet::agent {

Session::Session(SessionOptions options, proto::DeviceInfo device, JobRunner* runner)
    : options_(std::move(options)), device_(std::move(device)), runner_(runner) {}

void Session::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  if (active_ != nullptr) active_->Stop();
  stop_cv_.notify_all();
}

Status Session::Run() {
  auto backoff = options_.initial_backoff;
  for (;;) {
    bool registered = false;
    Status status = Connect(&registered);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return Status::OK();
    }
    if (status.code() == Status::Code::kPermissionDenied) return status;
    if (registered) backoff = options_.initial_backoff;
    const std::string hint =
        registered ? "" : TlsConnectionHint(status.message(), options_.tls_root_certs, std::time(nullptr));
    spdlog::warn("tracker {}: {}{}; reconnecting in {:.1f} s", options_.tracker, status.message(),
                 hint.empty() ? "" : " (" + hint + ")", backoff.count() / 1000.0);
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_cv_.wait_for(lock, backoff, [this] { return stopping_; })) return Status::OK();
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Status Session::Connect(bool* registered) {
  TrackerConnection connection(options_, device_, runner_, &jobs_done_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::OK();
    active_ = &connection;
  }
  Status status = connection.Serve(registered);
  std::lock_guard<std::mutex> lock(mu_);
  active_ = nullptr;
  return status;
}

}  // namespace tunefleet::agent
