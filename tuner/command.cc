#include "tuner/command.h"

#include <filesystem>
#include <iostream>

namespace tunefleet {

int CommandError(const char* cmd, const std::string& message, int code) {
  std::cerr << "tunefleet " << cmd << ": error: " << message << "\n";
  return code;
}

std::string OutputOverLog(const std::string& option, const std::string& out, const std::string& db) {
  std::error_code ec;
  if (out.empty() || out == "-" || !std::filesystem::equivalent(out, db, ec) || ec) return "";
  return option + " " + out + " is the tuning log itself (--db " + db + "): writing it would destroy the records";
}

}  // namespace tunefleet
