// GrpcLogRoute: gRPC's own log lines (gpr_log: TLS handshake failures, resolver and transport errors) through
// spdlog's default logger, so that they read like the rest of a binary's output, "grpc: <message> (<file>:<line>)",
// instead of gRPC's "E1201 12:57:21.304002472  9917 ssl_transport_security.cc:1501] ..." on stderr.
//
// GRPC_VERBOSITY still decides what gRPC emits (ERROR and worse when unset). Levels: gRPC's ERROR is error; INFO
// and DEBUG, which gRPC emits only when GRPC_VERBOSITY asks for them, are info.
//
// RAII, one per process, made in main() once the default logger is set: the destructor hands gRPC its own writer
// back. gRPC's hook is process-wide and takes no context, so the route holds no state of its own.
#pragma once

namespace tunefleet {

class GrpcLogRoute {
 public:
  enum class Mode {
    kShow,           // daemons (tracker, agent): every line gRPC emits
    kOnlyWhenAsked,  // the tuner CLI: its errors carry gRPC's status, so gRPC's lines only when GRPC_VERBOSITY is set
  };
  explicit GrpcLogRoute(Mode mode);
  ~GrpcLogRoute();
  GrpcLogRoute(const GrpcLogRoute&) = delete;
  GrpcLogRoute& operator=(const GrpcLogRoute&) = delete;
};

}  // namespace tunefleet
