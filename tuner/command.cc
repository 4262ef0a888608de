#include "tuner/command.h"

#include <iostream>

namespace tunefleet {

int CommandError(const char* cmd, const std::string& message, int code) {
  std::cerr << "tunefleet " << cmd << ": error: " << message << "\n";
  return code;
}

}  // namespace tunefleet
