// Subprocess: a real child process for the integration tests, with its output in a file.
// RAII: the destructor kills (SIGKILL) and reaps a child that is still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tunefleet::testing {

class Subprocess {
 public:
  // Starts argv[0] (a path) with `argv`, stdout+stderr appended to `log_path`, extra `env` entries
  // ("NAME=value") added to the current environment, replacing those of the same name.
  Subprocess(std::vector<std::string> argv, std::string log_path, std::vector<std::string> env = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `sig` (no-op when already reaped).
  void Signal(int sig);
  // Waits up to `timeout` for the exit; returns the exit code (128+signal when killed), nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string log_path_;
};

struct RunResult {
  int exit_code = -1;   // 128+signal when killed, -1 on timeout (then the child was killed)
  std::string output;   // stdout and stderr together
};

// The number of lines in `output` (its newlines): a bad input's answer should be one.
inline int CountLines(const std::string& output) {
  int n = 0;
  for (char c : output) n += c == '\n';
  return n;
}

// Runs a command to completion (bounded by `timeout`) and returns its exit code and output.
RunResult Run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
              const std::vector<std::string>& env = {});

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

// Directory of the built binaries (tunefleet, tunefleet-tracker, tunefleet-agent).
std::string BinDir();

}  // namespace tunefleet::testing
