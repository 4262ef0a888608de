// TempDir: a fresh folder for one test's files (logs, tuning logs), under $TMPDIR or /tmp, removed with all it holds
// when the object goes. The suite made about 800 of them a run and removed none (535 MB in a /tmp that had seen some
// dozens of runs).
// With KeepOnFailure::kYes a folder is kept when the running test has failed, for a post-mortem, and its path is
// said on stderr.
// RAII: the destructor removes the folder; make it outlive the processes that write into it.
#pragma once

#include <string>

namespace tunefleet::testing {

enum class KeepOnFailure { kNo, kYes };

class TempDir {
 public:
  // Makes <tmp>/tunefleet-<prefix>-XXXXXX; throws std::runtime_error when it cannot.
  explicit TempDir(const std::string& prefix, KeepOnFailure keep = KeepOnFailure::kYes);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  KeepOnFailure keep_;
};

}  // namespace tunefleet::testing
