// Subcommands of the `tunefleet` CLI. Each subcommand lives in its own cmd_<name>.cc and registers itself
// through one function listed in main.cc's table (ninja's kTools[] idea).
#pragma once

#include <CLI/CLI.hpp>

#include "storage/tuning_log.h"

namespace tunefleet {

// Adds one subcommand to `app`. When the subcommand runs, its callback stores the process exit code in
// `*exit_code` (0 success; 1 runtime failure; 2 bad input). Errors are printed as one line:
// "tunefleet <cmd>: error: <what>".
using RegisterCommandFn = void (*)(CLI::App& app, int* exit_code);

// Prints "tunefleet <cmd>: error: <message>" to stderr and returns `code`.
int CommandError(const char* cmd, const std::string& message, int code = 1);

// The exit code for a tuning log that `TuningLog::Open` or `OpenExisting` refused, or a write to it that failed: 1
// when the system is at fault (the log stayed locked by another writer past the busy timeout, a disk error, the log
// removed meanwhile, a run that began to write a log read as it stands), 2 when the input is (not a log, a newer
// schema, a path that cannot be created, a file with several names, a bad line of an imported file).
int LogOpenExitCode(const Status& s);

// `message`, an error about the tuning log `db`, naming it once: "DB: MESSAGE", or the message as it is when it
// begins with the log's path already (SQLite's errors do).
std::string AboutLog(const std::string& db, const std::string& message);

// When the output file `out` (of `option`) is empty, is the tuning log `db` itself, or names SQLite's -wal, -shm or
// -journal file beside it (writing there would destroy records), the one-line message that refuses it. Empty when
// it is fine ("-", or any other file).
std::string OutputOverLog(const std::string& option, const std::string& out, const std::string& db);

// Says on stderr, in one line, how many records of the log hold values no tunefleet writes (TuningLog::DamagedRecords)
// and are left out: "tunefleet <cmd>: warning: LOG: N record(s) ...". Nothing when there are none.
void WarnDamagedRecords(const char* cmd, TuningLog& log);

void RegisterTune(CLI::App& app, int* exit_code);      // cmd_tune.cc
void RegisterBest(CLI::App& app, int* exit_code);   // cmd_best.cc
void RegisterQuery(CLI::App& app, int* exit_code);  // cmd_query.cc
void RegisterSimulate(CLI::App& app, int* exit_code); // cmd_simulate.cc
void RegisterTasks(CLI::App& app, int* exit_code);  // cmd_tasks.cc
void RegisterReport(CLI::App& app, int* exit_code); // cmd_report.cc
void RegisterExport(CLI::App& app, int* exit_code); // cmd_export.cc
void RegisterImport(CLI::App& app, int* exit_code); // cmd_import.cc
void RegisterMeasure(CLI::App& app, int* exit_code); // cmd_measure.cc

}  // namespace tunefleet
