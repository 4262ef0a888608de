#include "tracker/auth.h"

#include <spdlog/spdlog.h>

namespace tunefleet::tracker {
namespace {

// Compares in time independent of where the strings differ, so the token cannot be guessed byte by byte.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

// 127.0.0.0/8, ::1 (bracketed or not), localhost: only this machine, and phones through `adb reverse`, reach it.
bool IsLoopbackHost(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

}  // namespace

grpc::Status TokenCheck::Check(const std::string& given, const grpc::ServerContext& ctx, const char* rpc) const {
  if (token_.empty() || SameSecret(token_, given)) return grpc::Status::OK;
  // A client that sent none is told that one is needed: "invalid token" alone read as a wrong one.
  const char* what = given.empty() ? "invalid token: none given, and this tracker requires one (--token or "
                                     "$TUNEFLEET_TOKEN)"
                                   : "invalid token";
  if (const auto count = refusals_.Occurred()) {
    spdlog::warn("{} from {}: {}{}", rpc, ctx.peer(), given.empty() ? "no token" : "invalid token",
                 *count == 1 ? "" : " (" + std::to_string(*count) +
                                        " calls refused for their token since the last such line, said once a minute)");
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, what);
}

std::string OpenStatusPortWarning(const std::string& host, bool token_required) {
  if (!token_required || IsLoopbackHost(host)) return "";
  return "the status page and /metrics answer without the token: whoever reaches the status port sees the keys, "
         "the agents' devices and their addresses (keep that port to the lab's network, or drop --http-port)";
}

std::string OpenTrackerWarning(const std::string& host, bool token_required) {
  if (token_required || IsLoopbackHost(host)) return "";
  return "no token is set and the tracker listens on " + (host.empty() ? std::string("every address") : host) +
         ", beyond this machine: whoever reaches its port can register agents and lease this lab's devices (set "
         "TUNEFLEET_TOKEN, or listen on 127.0.0.1)";
}

}  // namespace tunefleet::tracker
