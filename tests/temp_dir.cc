#include "tests/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <system_error>

namespace tunefleet::testing {

TempDir::TempDir(const std::string& prefix, KeepOnFailure keep) : keep_(keep) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/tunefleet-" + prefix + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (keep_ == KeepOnFailure::kYes && ::testing::Test::HasFailure()) {
    std::cerr << "kept " << path_ << " (the test failed)\n";
    return;
  }
  std::error_code ec;  // a file a stray child still writes is left; nothing a test asserts depends on it
  std::filesystem::remove_all(path_, ec);
}

}  // namespace tunefleet::testing
