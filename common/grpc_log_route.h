// GrpcLogRoute: gRPC's own log lines (gpr_log: TLS handshake failures, resolver and transport errors) through
// spdlog's default logger, so that they read like the rest of a binary's output, "grpc: <message> (<file>:<line>)",
// instead of gRPC's "E1201 12:57:21.304002472  9917 ssl_transport_security.cc:1501] ..." on stderr.
//
// GRPC_VERBOSITY still decides what gRPC emits (ERROR and worse when unset). Levels: gRPC's ERROR is error; INFO
// and DEBUG, which gRPC emits only when GRPC_VERBOSITY asks for them, are info.
//
// Throttled per source line: a line of gRPC's said within `quiet` of the last one shown from the same place is
// counted, not shown, and the next one shown says how many were held back. A daemon that anyone can connect to
// (every failed TLS handshake is a gRPC error line) cannot be made to flood its log.
//
// RAII, one per process, made in main() once the default logger is set: the destructor silences gRPC for the rest
// of the process (its threads can still speak as the process exits, after main's route is gone). gRPC's hook is
// process-wide and takes no context, so the one live route is found through a process-wide
// pointer (set and cleared by the route; the hook's only way back to it).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace tunefleet {

class GrpcLogRoute {
 public:
  enum class Mode {
    kShow,           // daemons (tracker, agent): every line gRPC emits (throttled)
    kOnlyWhenAsked,  // the tuner CLI: its errors carry gRPC's status, so gRPC's lines only when GRPC_VERBOSITY is set
  };
  explicit GrpcLogRoute(Mode mode, std::chrono::milliseconds quiet = std::chrono::seconds(10));
  ~GrpcLogRoute();
  GrpcLogRoute(const GrpcLogRoute&) = delete;
  GrpcLogRoute& operator=(const GrpcLogRoute&) = delete;

  // The hook's work: says `message` from file:line unless that place spoke within `quiet`, and hands every message
  // (said or held back) to the watcher.
  void Say(bool error, const char* message, const char* file, int line);

  // Calls `watcher` on gRPC's thread with each of gRPC's messages from now on, in place of the one before; an empty
  // one stops the calls. It runs under the route's lock, so it is quick and never logs; once Watch returns, the
  // watcher it replaced is not running and is never called again (it may refer to a caller's locals).
  using Watcher = std::function<void(const std::string& message)>;
  void Watch(Watcher watcher);

 private:
  struct Place {
    std::chrono::steady_clock::time_point shown;
    uint64_t held_back = 0;
  };
  const std::chrono::milliseconds quiet_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, Place> places_;  // guarded by mu_
  Watcher watcher_;                                       // guarded by mu_
};

}  // namespace tunefleet
