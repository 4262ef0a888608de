// ExpectRefusedInOneLine: the bad-input tests' check that a command refused its input as it should, in one line and
// exit 2. Test-only.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/subprocess.h"

namespace tunefleet::testing {

// Runs `argv` to completion and expects exit 2 and one line of output that contains `says`.
inline void ExpectRefusedInOneLine(const std::vector<std::string>& argv, const std::string& says) {
  RunResult r = Run(argv, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << says << ": " << r.output;
  EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
  EXPECT_EQ(CountLines(r.output), 1) << r.output;
}

}  // namespace tunefleet::testing
