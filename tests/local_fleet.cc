#include "tests/local_fleet.h"

#include <signal.h>
#include <sqlite3.h>

#include <memory>
#include <stdexcept>
#include <thread>

namespace tunefleet::testing {

LocalFleet::LocalFleet() : dir_("fleet", KeepOnFailure::kYes), port_(FreeLoopbackPort()) {}

LocalFleet::~LocalFleet() {
  for (auto& a : agents_) a->Signal(SIGTERM);
  if (tracker_) tracker_->Signal(SIGTERM);
  for (auto& a : agents_) a->Wait(std::chrono::seconds(5));
  if (tracker_) tracker_->Wait(std::chrono::seconds(5));
}

void LocalFleet::StartTracker(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinDir() + "/tunefleet-tracker", "--host", "127.0.0.1", "--port",
                                   std::to_string(port_)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  tracker_ = std::make_unique<Subprocess>(argv, dir() + "/tracker" + std::to_string(tracker_starts_++) + ".log");
  // Ready when it answers a query.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<std::string> query;  // a TLS tracker's certificate is self-signed: it is its own root
  for (size_t i = 0; i + 1 < extra.size(); ++i) {
    if (extra[i] == "--token") query.insert(query.end(), {"--token", extra[i + 1]});
    if (extra[i] == "--tls-cert") query.insert(query.end(), {"--tls-ca", extra[i + 1]});
  }
  query_args_ = query;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Query().is_null()) return;
    if (!tracker_->running()) throw std::runtime_error("tracker exited: " + tracker_->Log());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("tracker did not answer: " + tracker_->Log());
}

void LocalFleet::StopTracker(int sig) {
  if (!tracker_) return;
  tracker_->Signal(sig);
  tracker_->Wait(std::chrono::seconds(10));
}

size_t LocalFleet::StartAgent(const std::string& key, const std::vector<std::string>& extra,
                              const std::vector<std::string>& env) {
  std::vector<std::string> argv = {BinDir() + "/tunefleet-agent", "--tracker", address(), "--key", key};
  argv.insert(argv.end(), extra.begin(), extra.end());
  agents_.push_back(
      std::make_unique<Subprocess>(argv, dir() + "/agent" + std::to_string(agents_.size()) + ".log", env));
  return agents_.size() - 1;
}

nlohmann::json LocalFleet::Query(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"query", "--json"};
  args.insert(args.end(), query_args_.begin(), query_args_.end());
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = Cli(args, std::chrono::seconds(15));
  if (r.exit_code != 0) return nullptr;
  // The JSON document is the whole stdout; log lines (if any) go to stderr before it.
  auto start = r.output.find('{');
  if (start == std::string::npos) return nullptr;
  nlohmann::json j = nlohmann::json::parse(r.output.substr(start), nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

bool LocalFleet::WaitForAgents(const std::string& key, size_t n, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    nlohmann::json q = Query();
    size_t found = 0;
    if (q.is_object() && q.contains("agents"))
      for (const auto& a : q["agents"])
        if (a.value("key", "") == key) ++found;
    if (found >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

RunResult LocalFleet::Cli(std::vector<std::string> args, std::chrono::seconds timeout, bool with_tracker,
                          const std::vector<std::string>& env) {
  std::vector<std::string> argv = {BinDir() + "/tunefleet"};
  if (!args.empty()) {
    argv.push_back(args[0]);
    if (with_tracker) {
      argv.push_back("--rpc-tracker");
      argv.push_back(address());
    }
    argv.insert(argv.end(), args.begin() + 1, args.end());
  }
  return Run(argv, timeout, env);
}

std::unique_ptr<Subprocess> LocalFleet::CliAsync(std::vector<std::string> args) {
  std::vector<std::string> argv = {BinDir() + "/tunefleet", args[0], "--rpc-tracker", address()};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return std::make_unique<Subprocess>(argv, dir() + "/cli" + std::to_string(cli_runs_++) + ".log");
}

int LocalFleet::Count(const std::string& query, const std::string& db_path) const {
  std::vector<std::vector<std::string>> rows;
  try {
    rows = Sql(query, db_path);
  } catch (const std::runtime_error& e) {
    // The tuner has not created the log or its tables yet; any other failure (a query with a typo) is the test's.
    const std::string what = e.what();
    if (what.starts_with("cannot open ") || what.find("no such table") != std::string::npos) return 0;
    throw;
  }
  if (rows.empty() || rows.front().empty()) throw std::runtime_error("no value: " + query);
  return std::stoi(rows.front().front());
}

bool LocalFleet::WaitForRecords(int n, std::chrono::seconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Count("SELECT count(*) FROM records") >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

namespace {

using SqliteHandle = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// The database at `path`, owned also when the open failed (SQLite allocates a handle anyway). It waits up to 10 s
// for a lock, as the product's connections do: a tuner that is closing its log checkpoints the WAL under an
// exclusive lock, and a test's read at that moment failed "database is locked" without a busy timeout.
SqliteHandle OpenSqlite(const std::string& path, int flags, int* rc) {
  sqlite3* raw = nullptr;
  *rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (*rc == SQLITE_OK) sqlite3_busy_timeout(raw, 10000);
  return SqliteHandle(raw, sqlite3_close);
}

}  // namespace

void LocalFleet::ExecSql(const std::string& statements, const std::string& db_path) const {
  const std::string path = db_path.empty() ? this->db() : db_path;
  int open = SQLITE_OK;
  const SqliteHandle db = OpenSqlite(path, SQLITE_OPEN_READWRITE, &open);
  const int rc = open == SQLITE_OK ? sqlite3_exec(db.get(), statements.c_str(), nullptr, nullptr, nullptr) : open;
  if (rc != SQLITE_OK) throw std::runtime_error(path + ": " + statements + ": " + sqlite3_errmsg(db.get()));
}

std::vector<std::vector<std::string>> LocalFleet::Sql(const std::string& query, const std::string& db_path) const {
  std::string path = db_path.empty() ? this->db() : db_path;
  int open = SQLITE_OK;
  const SqliteHandle db = OpenSqlite(path, SQLITE_OPEN_READONLY, &open);
  if (open != SQLITE_OK) throw std::runtime_error("cannot open " + path);
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db.get(), query.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    throw std::runtime_error("bad query: " + std::string(sqlite3_errmsg(db.get())));
  }
  const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(st.get()); ++i) {
      const unsigned char* t = sqlite3_column_text(st.get(), i);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tunefleet::testing
