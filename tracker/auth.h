// The optional shared token. Every RPC carries it (a `token` field in the request, or in RegisterAgent).
// Thread safety: safe to share (the token is immutable; the refusals' warning throttle guards itself).
#pragma once

#include <grpcpp/server_context.h>

#include <string>

#include "tracker/warning_throttle.h"

namespace tunefleet::tracker {

class TokenCheck {
 public:
  explicit TokenCheck(std::string token) : token_(std::move(token)) {}

  // OK when no token is configured or `given` matches; otherwise UNAUTHENTICATED "invalid token", and a
  // warning naming the peer and the RPC is logged: the first refusal's, then at most one a minute with the count.
  grpc::Status Check(const std::string& given, const grpc::ServerContext& ctx, const char* rpc) const;
  // Says the refusals the last minute's warning held back, once it is past (housekeeping).
  void SayHeldOver(WarningThrottle::Clock::time_point now) const { refusals_.SayHeldOver(now); }

 private:
  const std::string token_;
  mutable WarningThrottle refusals_{"calls refused for their token"};
};

// What a tracker listening on `host` without a token should warn of: "" when `token_required`, or when `host` is a
// loopback address (127.0.0.0/8, ::1, localhost: only this machine, and phones through `adb reverse`, reach it);
// otherwise one line saying that whoever reaches the port can register agents and lease the lab's devices.
std::string OpenTrackerWarning(const std::string& host, bool token_required);

// What a tracker with a token and a status port on `host` should warn of: "" without a token (OpenTrackerWarning
// says more) or on loopback; otherwise one line saying that the status page and /metrics answer without the token.
std::string OpenStatusPortWarning(const std::string& host, bool token_required);

}  // namespace tunefleet::tracker
