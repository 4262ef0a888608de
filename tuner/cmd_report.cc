// PLACEHOLDER until its owner lands the real subcommand; must not survive to a submission.
#include "tuner/command.h"

namespace tunefleet {

void RegisterReport(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("report", "(not built yet)");
  sub->callback([exit_code] { *exit_code = CommandError("report", "not built yet"); });
}

}  // namespace tunefleet
