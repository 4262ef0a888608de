// PLACEHOLDER until its owner lands the real subcommand; must not survive to a submission.
#include "tuner/command.h"

namespace tunefleet {

void RegisterExport(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("export", "(not built yet)");
  sub->callback([exit_code] { *exit_code = CommandError("export", "not built yet"); });
}

}  // namespace tunefleet
