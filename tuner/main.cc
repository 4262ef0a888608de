// tunefleet: the tuner CLI. main() only builds the command table and dispatches.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "common/file_size_signal.h"
#include "common/grpc_log_route.h"
#include "common/standard_streams.h"
#include "common/utf8.h"
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
  tunefleet::OpenMissingStandardStreams();  // before anything opens a file
  tunefleet::IgnoreFileSizeLimitSignal();
  // A command's errors carry gRPC's status; gRPC's own lines only when GRPC_VERBOSITY asks for them.
  tunefleet::GrpcLogRoute grpc_logs(tunefleet::GrpcLogRoute::Mode::kOnlyWhenAsked);
  CLI::App app{"tunefleet: distributed auto-tuning of OpenCL kernels (tuner CLI)", "tunefleet"};
  app.set_version_flag("--version", std::string("tunefleet ") + TUNEFLEET_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  for (auto reg : kCommands) reg(app, &exit_code);
  // Arguments are recorded in the tuning log as JSON text, which must be UTF-8.
  for (int i = 1; i < argc; ++i) {
    if (!tunefleet::IsUtf8(argv[i])) {
      std::cerr << "tunefleet: error: argument " << i << " is not valid UTF-8 (see tunefleet --help)\n";
      return 2;
    }
  }
  // The token travels in a protobuf string, which must be UTF-8 too.
  if (const char* token = std::getenv("TUNEFLEET_TOKEN"); token != nullptr && !tunefleet::IsUtf8(token)) {
    std::cerr << "tunefleet: error: TUNEFLEET_TOKEN is not valid UTF-8\n";
    return 2;
  }
  // "-1" or a value past 64 bits for a 64-bit or size_t option was taken clamped (CLI11 reads it with strtoull).
  tunefleet::cli::GuardWholeNumbers(app);
  tunefleet::cli::RefuseRepeatedFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      // A first word that is no command reads better as such than as CLI11's "A subcommand is required".
      const std::string first = argc > 1 ? argv[1] : "";
      auto named = [&](CLI::App* sub) { return sub->check_name(first); };
      const std::vector<CLI::App*> command = app.get_subcommands(named);
      if (!first.empty() && first[0] != '-' && command.empty()) {
        std::cerr << "tunefleet: error: unknown command '" << tunefleet::Printable(first)
                  << "' (see tunefleet --help)\n";
        return 2;
      }
      // Named as the command's own later errors are ("tunefleet tune: error: ..."); its options are in its own
      // help, not in the list of commands.
      const bool in_command = !first.empty() && first[0] != '-';
      const std::string who = in_command ? "tunefleet " + command.front()->get_name() : "tunefleet";
      std::cerr << who << ": error: "
                << tunefleet::Printable(tunefleet::cli::ErrorText(app, e), std::string::npos) << " (see " << who
                << " --help)\n";
      return 2;
    }
    exit_code = app.exit(e);  // --help, --version: printed, and checked at once (the cause of a failure is in errno)
    if (tunefleet::Status out = tunefleet::FlushStandardOutput(); !out.ok()) {
      std::cerr << "tunefleet: error: " << out.message() << "\n";
      exit_code = 1;
    }
  } catch (const std::exception& e) {  // a defect, not an input: still one line and a non-zero exit
    std::cerr << "tunefleet: error: internal error: " << e.what() << "\n";
    exit_code = 1;
  }
  // gRPC's threads outlive the command (a TLS handshake given up on at its deadline goes on), and OpenSSL's exit
  // handler frees what they use: returning crashed 6-8 of 100 such runs (SIGSEGV in OpenSSL after the error line).
  // Every file and log of the command is closed by now; the output is flushed and the process ends without exit
  // handlers.
  spdlog::default_logger()->flush();  // kept, not dropped: a gRPC line may still reach it until the end
  // What a command printed is its result (`best --json > best.json`): output that did not reach its file (a full
  // disk, a closed stdout) is a failed command, not an empty file and exit 0. A command that failed already said
  // its one line (the same failure, when it wrote its result itself: `export -o -`).
  if (tunefleet::Status out = tunefleet::FlushStandardOutput(); !out.ok() && exit_code == 0) {
    const std::vector<CLI::App*> ran = app.get_subcommands();  // named as the command's own errors are
    std::cerr << (ran.empty() ? "tunefleet" : "tunefleet " + ran.front()->get_name()) << ": error: " << out.message()
              << "\n";
    exit_code = 1;
  }
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(exit_code);
}
