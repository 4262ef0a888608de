// Test-only: a fresh temporary directory, <tmp>/tf_test_<label>_XXXXXX (the label is the running test's name unless
// one is given; <tmp> is TMPDIR's, else /tmp), removed with all it holds when the object goes. Several may live at
// once, in one test or in tests run in parallel. With KeepOnFailure::kYes it is kept when the running test has
// failed, for a post-mortem, and its path is said on stderr (the multi-process tests keep their logs so).
// RAII: make it outlive the processes that write into it.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

namespace tunefleet {

enum class KeepOnFailure { kNo, kYes };

class TempDir {
 public:
  explicit TempDir(std::string label = "", KeepOnFailure keep = KeepOnFailure::kNo) : keep_(keep) {
    if (label.empty()) {
      const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
      label = test ? test->name() : "outside_a_test";
    }
    std::replace(label.begin(), label.end(), '/', '_');  // a parameterized test's name ("Name/0")
    std::string tmpl = (std::filesystem::temp_directory_path() / ("tf_test_" + label + "_XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    if (keep_ == KeepOnFailure::kYes && ::testing::Test::HasFailure()) {
      std::cerr << "kept " << path_ << " (the test failed)\n";
      return;
    }
    std::error_code ec;  // a file that a stray child still writes is left; nothing a test asserts depends on it
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory (`name` may hold folders that do not exist).
  std::string File(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
  KeepOnFailure keep_;
};

}  // namespace tunefleet
