// `tunefleet export --db FILE --format autotvm|kernel-pack|csv -o OUT [--best-only]`: a tuning log as AutoTVM
// log lines (for `tvmc compile --tuning-records`), as kernel packs for applications (tunefleet-runtime), or
// as CSV for analysis.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/printable.h"
#include "storage/tuning_log.h"
#include "tuner/command.h"
#include "tuner/export_autotvm.h"
#include "tuner/export_csv.h"
#include "tuner/export_kernel_pack.h"

namespace tunefleet {
namespace {

// "N kernel(s) for DEVICE", the device's name as the log holds it, escaped.
std::string PackLine(const KernelPackFile& pack) {
  return std::to_string(pack.pack["kernels"].size()) + " kernel(s) for " +
         Printable(pack.pack["device"]["name"].get<std::string>(), 120);
}

struct ExportOptions {
  std::string db;
  std::string format;
  std::string out;
  bool best_only = false;
};

// The output as the closing line names it: "-" is standard output.
std::string OutputName(const std::string& out) { return out == "-" ? "standard output" : out; }

int RunExport(const ExportOptions& o) {
  auto log = TuningLog::OpenExisting(o.db);
  if (!log.ok()) return CommandError("export", log.status().message(), LogOpenExitCode(log.status()));
  // Checked with the log open: a name of one of this process's descriptors (/dev/fd/3) names the log only then.
  if (std::string over = OutputOverLog("-o", o.out, o.db); !over.empty()) return CommandError("export", over, 2);
  WarnDamagedRecords("export", **log);
  if (o.format == "autotvm") {
    ExportCounts counts;
    Status s = WriteOutput(o.out, [&](std::ostream& out) -> Status {
      TF_ASSIGN_OR_RETURN(counts, ExportAutotvm(**log, {o.best_only, {}}, out, std::cerr));
      // A file of no records would be taken by tvmc as tuned with nothing: an error, as an empty kernel pack is,
      // and the output stays as it was (the file is replaced only when the write succeeds).
      if (counts.written == 0 && counts.skipped == 0) return Status::NotFound(o.db + ": no records to export");
      if (counts.written == 0)
        return Status::NotFound(o.db + ": no record can be exported as an AutoTVM record (" +
                                std::to_string(counts.skipped) + " skipped, for the reasons above)");
      return Status::OK();
    });
    if (!s.ok()) return CommandError("export", s.message());
    std::cerr << "tunefleet export: " << counts.written << " AutoTVM records written to " << OutputName(o.out) << ", "
              << counts.skipped << " skipped";
    if (counts.repeats > 0) {
      std::cerr << ", " << counts.repeats << " repeated results left out (a config measured more than once is "
                << "written at its median result, as best ranks it)";
    }
    std::cerr << "\n";
    return 0;
  }
  if (o.format == "csv") {
    size_t rows = 0;
    Status s = WriteOutput(o.out, [&](std::ostream& out) -> Status {
      TF_ASSIGN_OR_RETURN(rows, ExportCsv(**log, o.best_only, out, std::cerr));
      return Status::OK();
    });
    if (!s.ok()) return CommandError("export", s.message());
    std::cerr << "tunefleet export: " << rows << " rows written to " << OutputName(o.out) << "\n";
    return 0;
  }
  // kernel-pack: always the best program per workload.
  auto packs = BuildKernelPacks(**log, {}, std::cerr);
  if (!packs.ok()) return CommandError("export", packs.status().message());
  if (packs->empty()) return CommandError("export", o.db + ": no successful records to pack");
  if (o.out == "-") {  // one pack is one JSON document; several are files of a folder
    if (packs->size() > 1)
      return CommandError("export", "the log holds " + std::to_string(packs->size()) +
                                        " device models, one kernel pack each: give -o FOLDER, not '-'", 2);
    Status s = WriteOutput("-", [&](std::ostream& out) {
      out << packs->front().pack.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return Status::OK();
    });
    if (!s.ok()) return CommandError("export", s.message());
    std::cerr << "tunefleet export: " << PackLine(packs->front()) << " written to standard output\n";
    return 0;
  }
  // A name ending in .json, or a file that exists, is a file: a log of several device models has no one file to
  // write (it made a folder of that name, or failed on the file with "cannot create directory").
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(o.out, ec);
  if (packs->size() > 1 && !folder && (o.out.ends_with(".json") || std::filesystem::exists(o.out, ec))) {
    return CommandError("export", "the log holds " + std::to_string(packs->size()) +
                                      " device models, one kernel pack each: give -o FOLDER, not the file " + o.out,
                        2);
  }
  auto paths = WriteKernelPacks(*packs, o.out);
  if (!paths.ok()) return CommandError("export", paths.status().message());
  for (size_t i = 0; i < paths->size(); ++i) {
    std::cerr << "tunefleet export: " << PackLine((*packs)[i]) << " written to " << (*paths)[i] << "\n";
  }
  return 0;
}

}  // namespace

void RegisterExport(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "Export a tuning log: AutoTVM records, kernel packs or CSV");
  sub->add_option("--db", opts->db, "Tuning log (SQLite file)")->required();
  sub->add_option("--format", opts->format, "autotvm | kernel-pack | csv")
      ->required()
      ->check(CLI::IsMember({"autotvm", "kernel-pack", "csv"}));
  sub->add_option("-o,--output", opts->out,
                  "Output file ('-' = stdout); kernel-pack: a directory, or a file or '-' for one device")
      ->required();
  sub->add_flag("--best-only", opts->best_only, "Only the best record per (task, template, device)");
  sub->callback([opts, exit_code] { *exit_code = RunExport(*opts); });
}

}  // namespace tunefleet
