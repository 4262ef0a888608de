// tunefleet: the tuner CLI. main() only builds the command table and dispatches.
#include <iostream>

#include "tuner/command.h"

namespace {

// One entry per subcommand; each lives in tuner/cmd_<name>.cc.
constexpr tunefleet::RegisterCommandFn kCommands[] = {
    tunefleet::RegisterTune,
    tunefleet::RegisterBest,
    tunefleet::RegisterQuery,
    tunefleet::RegisterSimulate,
    tunefleet::RegisterTasks,
    tunefleet::RegisterReport,
    tunefleet::RegisterExport,
    tunefleet::RegisterImport,
    tunefleet::RegisterMeasure,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tunefleet: distributed auto-tuning of OpenCL kernels (tuner CLI)", "tunefleet"};
  app.set_version_flag("--version", std::string("tunefleet ") + TUNEFLEET_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  for (auto reg : kCommands) reg(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::cerr << "tunefleet: error: " << e.what() << " (see tunefleet --help)\n";
      return 2;
    }
    return app.exit(e);
  }
  return exit_code;
}
