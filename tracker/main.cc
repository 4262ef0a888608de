// tunefleet-tracker: the tracker daemon. main() only parses flags and calls Run().
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "common/cli_checks.h"
#include "common/file_limit.h"
#include "common/file_size_signal.h"
#include "common/grpc_log_route.h"
#include "common/seconds.h"
#include "common/standard_streams.h"
#include "common/utf8.h"
#include "tracker/server.h"

int main(int argc, char** argv) {
  tunefleet::OpenMissingStandardStreams();  // before anything opens a file
  tunefleet::IgnoreFileSizeLimitSignal();
  tunefleet::RaiseFileLimit();  // each agent, tuner and status page client holds a descriptor
  tunefleet::tracker::ServerOptions o;
  CLI::App app{"tunefleet-tracker: registry of OpenCL agents, leases and measurement relay", "tunefleet-tracker"};
  app.set_version_flag("--version", std::string("tunefleet-tracker ") + TUNEFLEET_VERSION);
  app.add_option("--host", o.host, "address to listen on")
      ->capture_default_str()
      ->check(tunefleet::cli::ListenHost());
  app.add_option("--port", o.port, "gRPC port (0: any free port)")
      ->capture_default_str()
      ->check(tunefleet::cli::WholeBetween(0, 65535));
  // An empty --token ("$SECRET" unset) read as "no token required": the tracker then took everyone, without a word.
  app.add_option("--token", o.token, "shared secret every agent and tuner must send (default: $TUNEFLEET_TOKEN)")
      ->check(tunefleet::cli::NotEmpty());
  // At most a day each: longer would not mean more, and a clock must hold it (1e308 s overflowed it).
  app.add_option("--lease-ttl", o.lease_ttl,
                 "seconds a lease lives without renewal (a batch in flight keeps it alive, and its end counts as a "
                 "renewal; at most 86400)")
      ->capture_default_str()->check(tunefleet::cli::PositiveAtMost(tunefleet::kOneDaySeconds));
  // Agents beat every 3 s: a shorter timeout dropped every agent between two beats.
  app.add_option("--heartbeat-timeout", o.heartbeat_timeout,
                 "seconds of agent silence before it is dropped (5 to 86400)")
      ->capture_default_str()
      ->check(tunefleet::cli::Between(5, tunefleet::kOneDaySeconds, "agents send a heartbeat every 3 s"));
  app.add_option("--max-agents", o.max_agents, "agents registered at once; more are refused until one leaves")
      ->capture_default_str()->check(tunefleet::cli::WholeBetween(1, 100000));
  app.add_option("--http-port", o.http_port, "serve a status page and /metrics on this port (0: any free port)")
      ->check(tunefleet::cli::WholeBetween(0, 65535));
  app.add_option("--tls-cert", o.tls_cert_file, "PEM certificate chain (enables TLS, with --tls-key)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", o.tls_key_file, "PEM private key")->check(CLI::ExistingFile);
  app.add_option("--max-message-mb", o.max_message_mb, "largest gRPC message, in MiB")
      ->capture_default_str()->check(tunefleet::cli::WholeBetween(1, 2047));
  if (auto done = tunefleet::cli::ParseCommandLine(app, argc, argv, "tunefleet-tracker")) return *done;
  // Conflicting options, refused before anything is bound (the status port had failed as "in use" by the tracker
  // itself, a run-time failure). Both 0 is fine: each gets a free port of its own.
  if (o.http_port > 0 && o.http_port == o.port) {
    std::fprintf(stderr, "tunefleet-tracker: error: --port and --http-port are both %d: the status page needs a port "
                 "of its own\n", o.port);
    return 2;
  }
  if (o.token.empty()) {
    if (const char* env = std::getenv("TUNEFLEET_TOKEN")) o.token = env;
  }
  // Tokens travel in protobuf strings, which must be UTF-8: no client could ever send this one.
  if (!tunefleet::IsUtf8(o.token)) {
    std::fprintf(stderr, "tunefleet-tracker: error: the token (--token or TUNEFLEET_TOKEN) is not valid UTF-8\n");
    return 2;
  }
  tunefleet::GrpcLogRoute grpc_logs(tunefleet::GrpcLogRoute::Mode::kShow);
  return tunefleet::tracker::Run(o, grpc_logs);
}
