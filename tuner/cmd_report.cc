// `tunefleet report --db FILE -o report.html`: one self-contained HTML page about what a tuning log holds.
#include <iostream>
#include <memory>
#include <sstream>

#include "common/atomic_file.h"
#include "storage/tuning_log.h"
#include "tuner/command.h"
#include "tuner/report_data.h"
#include "tuner/report_html.h"

namespace tunefleet {
namespace {

struct ReportArgs {
  std::string db;
  std::string out = "report.html";
  std::string title;
};

int RunReport(const ReportArgs& args) {
  auto log = TuningLog::OpenExisting(args.db);
  if (!log.ok()) return CommandError("report", log.status().message(), LogOpenExitCode(log.status()));
  // Checked with the log open: a name of one of this process's descriptors (/dev/fd/3) names the log only then.
  if (std::string over = OutputOverLog("-o", args.out, args.db); !over.empty()) return CommandError("report", over, 2);
  WarnDamagedRecords("report", **log);
  std::ostringstream notes;  // BestInSpace's, as `best` says them
  auto data = LoadReportData(**log, notes);
  std::istringstream lines(notes.str());
  for (std::string line; std::getline(lines, line);) std::cerr << "tunefleet report: " << line << "\n";
  if (!data.ok()) return CommandError("report", AboutLog(args.db, data.status().message()), 1);
  if (!args.title.empty()) data->title = args.title;
  const std::string html = RenderReportHtml(*data);
  Status written = WriteOutput(args.out, [&](std::ostream& out) {  // "-": standard output, as for export
    out << html;
    return Status::OK();
  });
  if (!written.ok()) return CommandError("report", written.message(), 1);
  if (args.out == "-") return 0;
  size_t records = 0;
  for (const auto& s : data->series) records += s.records.size();
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::cout << "wrote " << args.out << ": " << count(data->series.size(), "series", "series") << ", "
            << count(records, "record", "records") << ", " << count(data->devices.size(), "device", "devices") << "\n";
  return 0;
}

}  // namespace

void RegisterReport(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "Write a self-contained HTML report of a tuning log");
  sub->add_option("--db", args->db, "Tuning log (SQLite file)")->required();
  sub->add_option("-o,--output", args->out, "HTML file to write (default report.html; - for standard output)");
  sub->add_option("--title", args->title, "Title of the page");
  sub->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace tunefleet
