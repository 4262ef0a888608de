#include "agent/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "agent/tracker_connection.h"
#include "common/tls_hint.h"

namespace tunefleet::agent {
namespace {

constexpr std::chrono::minutes kRepeatSaidEvery{5};  // a tracker that stays unreachable, said again so often

}  // namespace

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
  // A tracker down for hours was said every 10 s, 8,640 lines a day in a phone's log: a failure the same as the
  // last one said, with no registration between, is said once more ("still") and then every kRepeatSaidEvery.
  std::string said;  // the last failure said, empty after a registration
  bool still_said = false;
  std::chrono::steady_clock::time_point said_at;
  uint64_t unsaid = 0;  // attempts that failed the same way since the last line
  // A device that cannot take jobs at the start (its disk full) does not register only to leave after a job.
  if (WaitForRoom(/*say=*/true) == Room::kStopped) return Status::OK();
  for (;;) {
    bool registered = false;
    bool left_for_room = false;
    Status status = Connect(&registered, &left_for_room);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return Status::OK();
    }
    if (status.code() == Status::Code::kPermissionDenied) return status;
    if (const Room room = WaitForRoom(/*say=*/!left_for_room); room == Room::kStopped) {
      return Status::OK();
    } else if (room == Room::kAgain || left_for_room) {  // it left on purpose: nothing to say of how it ended
      // (left_for_room with room already: it came back in the milliseconds before the session looked)
      backoff = options_.initial_backoff;
      said.clear();
      continue;
    }
    if (registered) {
      backoff = options_.initial_backoff;
      said.clear();
    }
    const std::string hint =
        registered ? "" : TlsConnectionHint(status.message(), options_.tls_root_certs, std::time(nullptr));
    const std::string why = status.message() + (hint.empty() ? "" : " (" + hint + ")");
    const auto now = std::chrono::steady_clock::now();
    if (why != said) {
      spdlog::warn("tracker {}: {}; reconnecting in {:.1f} s", options_.tracker, why, backoff.count() / 1000.0);
      said = why;
      still_said = false;
      said_at = now;
      unsaid = 0;
    } else if (!still_said) {
      spdlog::warn("tracker {}: still failing: {}; reconnecting with a back-off of up to {:.1f} s, said again every "
                   "{} min while it fails so", options_.tracker, why, options_.max_backoff.count() / 1000.0,
                   std::chrono::duration_cast<std::chrono::minutes>(kRepeatSaidEvery).count());
      still_said = true;
      said_at = now;
    } else if (++unsaid; now - said_at >= kRepeatSaidEvery) {
      spdlog::warn("tracker {}: {}; reconnecting in {:.1f} s ({} attempt{} failed so since the last line)",
                   options_.tracker, why, backoff.count() / 1000.0, unsaid, unsaid == 1 ? "" : "s");
      said_at = now;
      unsaid = 0;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_cv_.wait_for(lock, backoff, [this] { return stopping_; })) return Status::OK();
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Session::Room Session::WaitForRoom(bool say) {
  std::optional<std::string> why = runner_->Unavailable();
  if (!why) return Room::kAvailable;
  if (say) {
    spdlog::warn("not taking jobs: {}; joining tracker {} once there is room (looked at every {:.0f} s)", *why,
                 options_.tracker, options_.room_check_interval.count() / 1000.0);
  }
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, options_.room_check_interval, [this] { return stopping_; })) return Room::kStopped;
    }
    if (!runner_->Unavailable()) return Room::kAgain;
  }
}

Status Session::Connect(bool* registered, bool* left_for_room) {
  TrackerConnection connection(options_, device_, runner_, &jobs_done_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::OK();
    active_ = &connection;
  }
  Status status = connection.Serve(registered);
  *left_for_room = connection.left_for_room();
  std::lock_guard<std::mutex> lock(mu_);
  active_ = nullptr;
  return status;
}

}  // namespace tunefleet::agent
