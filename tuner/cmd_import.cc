// `tunefleet import --format autotvm FILE --db FILE`: AutoTVM log lines into a tuning log (the reverse of
// `export --format autotvm`), so records tuned with TVM seed tunefleet's search and show in `best`.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "common/cli_checks.h"
#include "common/standard_input.h"
#include "storage/tuning_log.h"
#include "tuner/command.h"
#include "tuner/deferred_log.h"
#include "tuner/import_autotvm.h"
#include "tuner/stop_signals.h"

namespace tunefleet {
namespace {

struct ImportOptions {
  std::string db;
  std::string format = "autotvm";
  std::string file;
};

int RunImport(const ImportOptions& o) {
  // '-': standard input (`tunefleet export --format autotvm -o - | tunefleet import - --db B`), named so in lines.
  const bool from_stdin = o.file == "-";
  if (from_stdin && StandardInputClosed()) {
    return CommandError("import", "-: standard input is closed (give the file's path instead)", 2);
  }
  std::error_code ec;
  // A directory or /dev/zero would be read for ever (standard input is bounded per line: ImportAutotvm).
  if (!from_stdin && !std::filesystem::is_regular_file(o.file, ec)) {
    // A directory is "a directory" too: CLI11's check said "File is actually a directory", and "File does not
    // exist" for a missing one.
    const bool exists = std::filesystem::exists(o.file, ec);
    const std::string what = ec                                         ? ": cannot open: " + ec.message()
                             : std::filesystem::is_directory(o.file, ec) ? ": a directory, not an AutoTVM log"
                             : exists                                    ? ": not a file"
                                                                         : ": no such file";
    return CommandError("import", o.file + what, 2);
  }
  std::ifstream file;
  if (!from_stdin) {
    file.open(o.file);
    if (!file) return CommandError("import", o.file + ": cannot open", 2);
  }
  std::istream& in = from_stdin ? std::cin : file;
  const std::string source = from_stdin ? "standard input" : o.file;
  // A log that exists is opened now, and a path where none could be created is said now, before the file is read; a
  // new log is created when the import first writes to it, so that a file refused at its first lines (or an import
  // stopped before then) leaves no new, empty log.
  auto log = DeferredLog::Open(o.db);
  if (!log.ok()) return CommandError("import", log.status().message(), LogOpenExitCode(log.status()));
  // Ctrl-C ends the import between two lines, its session 'interrupted'.
  StopOnSignals signals(std::chrono::milliseconds(1000), "the records added so far are kept");
  ImportProgress progress;
  progress.out = &std::cerr;  // a line every few seconds of a long import; stdout stays as it was
  auto counts = ImportAutotvm(in, source, *log, {}, std::cerr, signals.token(), progress);
  if (!counts.ok()) return CommandError("import", counts.status().message(), LogOpenExitCode(counts.status()));
  if (counts->interrupted) {
    if (log->IfOpen() == nullptr) {
      std::cerr << "tunefleet import: interrupted by " << signals.signal_name() << " before anything was written; "
                << "no log was created at " << o.db << "\n";
      return 130;
    }
    std::cerr << "tunefleet import: interrupted by " << signals.signal_name() << " after " << counts->added
              << " records added to " << o.db << " (importing the file again skips them)\n";
    return 130;
  }
  // An import that wrote nothing (an empty file, or only skipped lines) still leaves the log it names: an empty one.
  if (Result<TuningLog*> made = log->Get(); !made.ok()) {
    return CommandError("import", made.status().message(), LogOpenExitCode(made.status()));
  }
  std::cerr << "tunefleet import: " << counts->added << " records added to " << o.db
            << (counts->outside_space == 0 ? ""
                                           : ", of which " + std::to_string(counts->outside_space) +
                                                 " its target cannot run (best passes them over)")
            << ", " << counts->duplicate << " already present, " << counts->skipped << " skipped\n";
  return 0;
}

}  // namespace

void RegisterImport(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<ImportOptions>();
  auto* sub = app.add_subcommand("import", "Import AutoTVM tuning records into a tuning log");
  sub->add_option("--format", opts->format, "autotvm")->check(CLI::IsMember({"autotvm"}));
  sub->add_option("file", opts->file, "AutoTVM log (JSON lines; '-': standard input)")
      ->required()
      ->check(cli::NotEmpty());
  sub->add_option("--db", opts->db, "Tuning log (SQLite file)")->required();
  sub->callback([opts, exit_code] { *exit_code = RunImport(*opts); });
}

}  // namespace tunefleet
