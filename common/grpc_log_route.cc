#include "common/grpc_log_route.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>

namespace tunefleet {
namespace {

const char* BaseName(const char* path) {
  if (path == nullptr) return "?";
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

void Forward(gpr_log_func_args* args) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  if (logger == nullptr || args == nullptr) return;
  const auto level = args->severity == GPR_LOG_SEVERITY_ERROR ? spdlog::level::err : spdlog::level::info;
  logger->log(level, "grpc: {} ({}:{})", args->message != nullptr ? args->message : "", BaseName(args->file),
              args->line);
}

void Drop(gpr_log_func_args*) {}

}  // namespace

GrpcLogRoute::GrpcLogRoute(Mode mode) {
  const bool asked = std::getenv("GRPC_VERBOSITY") != nullptr;
  gpr_set_log_function(mode == Mode::kShow || asked ? &Forward : &Drop);
}

// nullptr gives gRPC its own writer back (gRPC 1.51, Debian 12's).
GrpcLogRoute::~GrpcLogRoute() { gpr_set_log_function(nullptr); }

}  // namespace tunefleet
