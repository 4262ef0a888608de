// The tracker daemon: a gRPC server running TrackerService (and, optionally, the HTTP status side port).
// main() parses flags into ServerOptions and calls Run().
#pragma once

#include <memory>
#include <string>

#include "common/grpc_log_route.h"
#include "common/status.h"

namespace grpc {
class Server;
}

namespace tunefleet::tracker {

class TrackerService;
class HttpStatus;

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 9190;                // 0: pick a free port (see TrackerServer::port())
  std::string token;              // empty: no token required
  double lease_ttl = 30;          // seconds
  double heartbeat_timeout = 15;  // seconds; also how long a new agent stream may go without RegisterAgent
  uint32_t max_agents = 1000;     // agents registered at once
  int http_port = -1;             // < 0: no HTTP side port; 0: pick a free one
  std::string tls_cert_file;      // PEM; with tls_key_file enables TLS
  std::string tls_key_file;
  int max_message_mb = 64;        // both directions
};

// A running tracker. Thread safety: Shutdown() and the accessors may be called from any thread.
class TrackerServer {
 public:
  // Binds and starts serving. Errors: unreadable TLS files, port in use, bad options.
  static Result<std::unique_ptr<TrackerServer>> Start(const ServerOptions& options);
  ~TrackerServer();  // Shutdown(5 s) if not done yet
  TrackerServer(const TrackerServer&) = delete;
  TrackerServer& operator=(const TrackerServer&) = delete;

  int port() const { return port_; }            // the bound gRPC port
  int http_port() const { return http_port_; }  // the bound HTTP port, -1 when none
  // Ends open streams and waiting calls, then stops the server; calls still running after `deadline_s`
  // seconds are cancelled. Idempotent.
  void Shutdown(double deadline_s);

 private:
  TrackerServer() = default;

  std::unique_ptr<TrackerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpStatus> http_;
  int port_ = 0;
  int http_port_ = -1;
  bool shut_down_ = false;
};

// Runs the tracker until SIGINT or SIGTERM, then shuts down cleanly. Returns the process exit code: 0 after a clean
// shutdown; when the server could not start, 2 for bad input (a TLS file that is not PEM, a --host that is no
// address) and 1 otherwise (a port in use), after one line "tunefleet-tracker: error: <why>" on stderr; 1 when its
// gRPC port stopped accepting connections (`grpc_logs` says so: see the definition), after an error line in the log.
int Run(const ServerOptions& options, GrpcLogRoute& grpc_logs);

}  // namespace tunefleet::tracker
