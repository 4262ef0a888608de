// `tunefleet best --db FILE [--json] [--task SPEC]`: the fastest successful config per (task, template,
// device) recorded in a tuning log, of those in the template's space (tuner/best_in_space.h).
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "common/cli_checks.h"
#include "common/printable.h"
#include "search-spaces/task.h"
#include "storage/tuning_log.h"
#include "tuner/best_in_space.h"
#include "tuner/command.h"
#include "tuner/export_best.h"

namespace tunefleet {
namespace {

struct BestOptions {
  std::string db;
  std::string task;
  bool json = false;
};

int RunBest(const BestOptions& o) {
  std::string task = o.task;
  if (!task.empty()) {
    // Accept any spelling of the spec that parses; compare canonical forms.
    auto parsed = Task::Parse(task);
    if (!parsed.ok()) return CommandError("best", "--task " + parsed.status().message(), 2);
    task = parsed->ToSpec();
  }
  auto log = TuningLog::OpenExisting(o.db);
  if (!log.ok()) return CommandError("best", log.status().message(), LogOpenExitCode(log.status()));
  WarnDamagedRecords("best", **log);
  if (!task.empty()) {
    // A task the log does not hold is said as such, as simulate says it: it read "no successful records for TASK",
    // exit 0, as a task whose every config failed.
    auto tasks = (*log)->Tasks();
    if (!tasks.ok()) return CommandError("best", tasks.status().message());
    bool held = false;
    for (const TaskRow& t : *tasks) {
      auto parsed = Task::Parse(t.spec);
      held = held || t.spec == task || (parsed.ok() && parsed->ToSpec() == task);
    }
    if (!held) {
      return CommandError("best", o.db + ": task '" + task + "' is not in the log (tunefleet best --db " + o.db +
                                      " lists the tasks it holds)", 2);
    }
  }
  std::ostringstream notes;
  auto rows = BestInSpace(**log, {}, notes, task);
  std::istringstream lines(notes.str());
  for (std::string line; std::getline(lines, line);) std::cerr << "tunefleet best: " << line << "\n";
  if (!rows.ok()) return CommandError("best", rows.status().message());
  auto best = std::move(rows).value();
  // A unit whose every config failed (a template the device cannot run) has no row: said, not left out silently.
  auto failed = (*log)->UnitsWithoutSuccess();
  if (!failed.ok()) return CommandError("best", failed.status().message());
  for (const FailedUnitRow& u : *failed) {
    if (!task.empty() && u.task != task) continue;
    std::cerr << "tunefleet best: " << Printable(u.task) << " (" << Printable(u.template_name) << ") on "
              << Printable(u.device_name) << " [" << Printable(u.device_fingerprint) << "]: no successful result, "
              << u.failures << " failed (their messages: tunefleet report or export --format csv)\n";
  }
  if (o.json) {
    // Text from the log that is not UTF-8 (a log written by another tool) is shown with U+FFFD, not refused.
    std::cout << BestToJson(best).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (best.empty()) {
    std::cerr << "tunefleet best: no successful records" << (notes.str().empty() ? "" : " of a config in its space")
              << (task.empty() ? "" : " for " + task) << " in " << o.db << "\n";
  } else {
    // A device named alike with another of the log's (one phone model on two drivers) is told apart by fingerprint,
    // also where `--task` shows only one of them, as the report tells them.
    std::set<std::string> shared;
    if (auto devices = (*log)->Devices(); devices.ok()) {
      std::map<std::string, std::set<std::string>> fingerprints;
      for (const DeviceRow& d : *devices) fingerprints[d.name].insert(d.fingerprint);
      for (const auto& [name, prints] : fingerprints)
        if (prints.size() > 1) shared.insert(name);
    }
    std::cout << FormatBestTable(best, shared);
  }
  return 0;
}

}  // namespace

void RegisterBest(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<BestOptions>();
  auto* sub = app.add_subcommand("best", "Best config per (task, template, device) in a tuning log");
  sub->add_option("--db", opts->db, "Tuning log (SQLite file)")->required();
  sub->add_option("--task", opts->task, "Only this task (spec, e.g. gemm:256,256,256:float32)")
      ->check(cli::NotEmpty());
  sub->add_flag("--json", opts->json, "Print JSON instead of a table");
  sub->callback([opts, exit_code] { *exit_code = RunBest(*opts); });
}

}  // namespace tunefleet
