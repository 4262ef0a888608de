#include "common/grpc_log_route.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

namespace tunefleet {
namespace {

// The live route, for gRPC's context-free hook, and the hook's calls that may be using it: the route's destructor
// waits for them, so that a gRPC thread never speaks through a route already gone.
std::atomic<GrpcLogRoute*> live_route{nullptr};
std::atomic<int> calls_in_flight{0};

const char* BaseName(const char* path) {
  if (path == nullptr) return "?";
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

void Forward(gpr_log_func_args* args) {
  ++calls_in_flight;  // before the route is read (sequentially consistent, as the destructor's store and wait)
  GrpcLogRoute* route = live_route.load();
  if (route != nullptr && args != nullptr)
    route->Say(args->severity == GPR_LOG_SEVERITY_ERROR, args->message, args->file, args->line);
  --calls_in_flight;
}

void Drop(gpr_log_func_args*) {}

}  // namespace

GrpcLogRoute::GrpcLogRoute(Mode mode, std::chrono::milliseconds quiet) : quiet_(quiet) {
  live_route.store(this);
  const bool asked = std::getenv("GRPC_VERBOSITY") != nullptr;
  gpr_set_log_function(mode == Mode::kShow || asked ? &Forward : &Drop);
}

// Not gRPC's own writer back: gRPC's threads outlive main's route (a handshake the CLI gave up on at its deadline
// still fails as the process exits), and their lines would reach stderr in gRPC's format after the last line of ours.
GrpcLogRoute::~GrpcLogRoute() {
  gpr_set_log_function(&Drop);
  live_route.store(nullptr);
  // A call that read the route before it was cleared is still in Say: wait for it (a log line's time).
  while (calls_in_flight.load() != 0) std::this_thread::yield();
}

void GrpcLogRoute::Watch(Watcher watcher) {
  std::lock_guard<std::mutex> lock(mu_);
  watcher_ = std::move(watcher);
}

void GrpcLogRoute::Say(bool error, const char* message, const char* file, int line) {
  const char* base = BaseName(file);
  uint64_t held_back = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (watcher_) watcher_(message != nullptr ? message : "");
    const auto now = std::chrono::steady_clock::now();
    auto [it, first] = places_.try_emplace({base, line});
    Place& place = it->second;
    if (!first && now - place.shown < quiet_) {
      ++place.held_back;
      return;
    }
    held_back = place.held_back;
    place.held_back = 0;
    place.shown = now;
  }
  spdlog::logger* logger = spdlog::default_logger_raw();
  if (logger == nullptr) return;
  const std::string more =
      held_back == 0 ? "" : "; " + std::to_string(held_back) + " more from there held back since the last one shown";
  logger->log(error ? spdlog::level::err : spdlog::level::info, "grpc: {} ({}:{}){}", message != nullptr ? message : "",
              base, line, more);
}

}  // namespace tunefleet
