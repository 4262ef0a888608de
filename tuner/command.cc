#include "tuner/command.h"

#include <filesystem>
#include <iostream>

#include "common/printable.h"

namespace tunefleet {

int CommandError(const char* cmd, const std::string& message, int code) {
  // One line whatever the message quotes (a node name of a model, a target of an AutoTVM line, an argument):
  // control characters are shown escaped, not sent.
  std::cerr << "tunefleet " << cmd << ": error: " << Printable(message, std::string::npos) << "\n";
  return code;
}

int LogOpenExitCode(const Status& s) {
  return s.code() == Status::Code::kUnavailable || s.code() == Status::Code::kIOError ? 1 : 2;
}

std::string AboutLog(const std::string& db, const std::string& message) {
  return message.rfind(db + ": ", 0) == 0 ? message : db + ": " + message;
}

std::string OutputOverLog(const std::string& option, const std::string& out, const std::string& db) {
  if (out.empty()) return option + " is empty: give a file path";
  if (out == "-") return "";
  std::error_code ec;
  if (std::filesystem::equivalent(out, db, ec) && !ec)
    return option + " " + out + " is the tuning log itself (--db " + db + "): writing it would destroy the records";
  // SQLite's files beside the log, which need not exist when the output is written: compared by name.
  const std::string out_name = std::filesystem::weakly_canonical(out, ec).string();
  const std::string db_name = ec ? db : std::filesystem::weakly_canonical(db, ec).string();
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    if (!ec && out_name == db_name + suffix)
      return option + " " + out + " is SQLite's " + suffix + " file of the tuning log (--db " + db +
             "): writing it could destroy the records";
  }
  return "";
}

void WarnDamagedRecords(const char* cmd, TuningLog& log) {
  Result<int64_t> damaged = log.DamagedRecords();
  if (!damaged.ok() || *damaged == 0) return;
  std::cerr << "tunefleet " << cmd << ": warning: " << log.path() << ": " << *damaged
            << " record(s) hold values no tunefleet writes (a status, a config index, or an OK record's cost that is "
               "not between 1 ps and 10^6 s) or name a task, template or device the log lacks; they are left out\n";
}

}  // namespace tunefleet
