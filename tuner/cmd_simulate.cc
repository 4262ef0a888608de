// PLACEHOLDER until its owner lands the real subcommand; must not survive to a submission.
#include "tuner/command.h"

namespace tunefleet {

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("simulate", "(not built yet)");
  sub->callback([exit_code] { *exit_code = CommandError("simulate", "not built yet"); });
}

}  // namespace tunefleet
