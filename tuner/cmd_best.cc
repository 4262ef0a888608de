// PLACEHOLDER until its owner lands the real subcommand; must not survive to a submission.
#include "tuner/command.h"

namespace tunefleet {

void RegisterBest(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("best", "(not built yet)");
  sub->callback([exit_code] { *exit_code = CommandError("best", "not built yet"); });
}

}  // namespace tunefleet
