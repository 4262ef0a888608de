// LocalFleet: the world of an integration test, built from real processes on loopback — a tracker, agents
// on this machine's OpenCL device (PoCL), and the tunefleet CLI — plus a SQLite file in a temp dir.
#pragma once

#include <csignal>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/temp_dir_testing.h"
#include "tests/subprocess.h"

namespace tunefleet::testing {

class LocalFleet {
 public:
  LocalFleet();
  ~LocalFleet();

  // Starts (or restarts, on the same port) the tracker with extra flags.
  void StartTracker(const std::vector<std::string>& extra = {});
  void StopTracker(int sig = SIGTERM);
  // Starts an agent of `key`; returns its index.
  size_t StartAgent(const std::string& key, const std::vector<std::string>& extra = {},
                    const std::vector<std::string>& env = {});
  Subprocess& agent(size_t i) { return *agents_[i]; }
  Subprocess& tracker() { return *tracker_; }

  // `tunefleet query --json` (with the token and certificate the tracker was started with), or a null json when the
  // tracker does not answer.
  nlohmann::json Query(const std::vector<std::string>& extra = {});
  // Waits until the tracker lists `n` agents of `key`; false on timeout.
  bool WaitForAgents(const std::string& key, size_t n, std::chrono::seconds timeout = std::chrono::seconds(60));

  // Runs `tunefleet <args...>` to completion (with --rpc-tracker added after the subcommand when `with_tracker`).
  RunResult Cli(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(600),
                bool with_tracker = true, const std::vector<std::string>& env = {});
  // Starts `tunefleet <args...>` in the background (with --rpc-tracker).
  std::unique_ptr<Subprocess> CliAsync(std::vector<std::string> args);

  int port() const { return port_; }  // the tracker's, on 127.0.0.1
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_.path(); }  // removed with the fleet unless the test failed
  std::string db() const { return dir_.path() + "/tune.db"; }

  // The first column of the first row of a SELECT (over the test's database, or `db_path`) as a number; 0 while the
  // tables do not exist yet.
  int Count(const std::string& query, const std::string& db_path = "") const;
  // Waits until the test's database holds at least `n` records; false on timeout.
  bool WaitForRecords(int n, std::chrono::seconds timeout) const;

  // SELECT over the test's database through the sqlite3 C API; each row as strings.
  std::vector<std::vector<std::string>> Sql(const std::string& query, const std::string& db_path = "") const;
  // Runs `statements` on the log (or `db_path`) as another program would, to damage it; throws on an error.
  void ExecSql(const std::string& statements, const std::string& db_path = "") const;

 private:
  TempDir dir_;  // first: it goes after the processes that write into it
  int cli_runs_ = 0;  // names each CliAsync's output file
  int port_;
  std::unique_ptr<Subprocess> tracker_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  int tracker_starts_ = 0;
  std::vector<std::string> query_args_;  // what Query needs to reach the tracker (its token, its certificate)
};

}  // namespace tunefleet::testing
