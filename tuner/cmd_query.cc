// `tunefleet query`: lists a tracker's agents and per-key queues, as a table or as JSON.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "common/cli_checks.h"
#include "tracker/client.h"
#include "tracker/summary_format.h"
#include "tuner/command.h"

namespace tunefleet {
namespace {

struct QueryOptions {
  std::string tracker;
  std::string token;
  std::string tls_ca_file;
  bool json = false;
  double timeout = 5;  // seconds, for connecting and for the Summary call each
};

int RunQuery(const QueryOptions& o) {
  TrackerClientOptions co;
  co.token = o.token;
  if (co.token.empty()) {
    if (const char* env = std::getenv("TUNEFLEET_TOKEN")) co.token = env;
  }
  co.connect_timeout = o.timeout;
  co.call_timeout = o.timeout;
  co.tls_ca_file = o.tls_ca_file;
  co.give_up_on_first_failure = true;  // a question about now: a refused connection is the answer
  auto client = TrackerClient::Connect(o.tracker, co);
  if (!client.ok()) {
    return CommandError("query", client.status().message(),
                        client.status().code() == Status::Code::kInvalidArgument ? 2 : 1);
  }
  auto summary = (*client)->Summary();
  if (!summary.ok()) return CommandError("query", summary.status().message());
  std::cout << (o.json ? SummaryAsJson(*summary) : SummaryAsTable(*summary));
  return 0;
}

}  // namespace

void RegisterQuery(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<QueryOptions>();
  auto* sub = app.add_subcommand("query", "List a tracker's agents and the queue per key");
  sub->add_option("--rpc-tracker", opts->tracker, "tracker address, host:port")->required()->check(cli::HostPort());
  sub->add_option("--token", opts->token, "shared secret of the tracker (default: $TUNEFLEET_TOKEN)")
      ->check(cli::NotEmpty());
  sub->add_option("--tls-ca", opts->tls_ca_file, "PEM root certificates: connect with TLS")->check(CLI::ExistingFile);
  sub->add_option("--timeout", opts->timeout,
                  "seconds to wait for the tracker to answer (a refused connection fails at once)")
      ->capture_default_str()
      ->check(cli::PositiveAtMost(3600));
  sub->add_flag("--json", opts->json, "print JSON instead of tables");
  sub->callback([opts, exit_code] { *exit_code = RunQuery(*opts); });
}

}  // namespace tunefleet
