#include "tuner/run_session.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include "common/host_name.h"
#include "common/printable.h"

namespace tunefleet {

std::string RunHolder(const std::string& command) {
  const std::string host = HostName();
  return "tunefleet " + command + " pid " + std::to_string(getpid()) + "@" + (host.empty() ? "?" : host);
}

namespace {

// Room for ending a session on a full disk: a WAL frame of the sessions table's page, and a step of SQLite's
// shared-memory index (32 KiB), with room to spare.
constexpr size_t kEndReserveBytes = 256 * 1024;
// The least held back when the disk has less room than that: a WAL frame of a page, and its header.
constexpr size_t kEndReserveLeastBytes = 16 * 1024;

// The folder of the file `log_path` resolves to: where SQLite writes the log and its write-ahead log.
std::string LogFolder(const std::string& log_path) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(log_path, ec);
  if (ec || resolved.empty()) resolved = log_path;
  return resolved.has_parent_path() ? resolved.parent_path().string() : std::string(".");
}

}  // namespace

Result<RunSession> RunSession::Begin(TuningLog& log, const std::string& args_json, const std::string& holder,
                                     SessionLock need) {
  // Unique per run: the holder names the pid and host, the clock tells two runs of one pid apart.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const RunLockScope scope =
      RunLockScope::Session(holder + " at " + std::to_string(std::chrono::nanoseconds(now).count()));
  // Taken before the row exists, so that no other run sees the row without its lock held.
  Result<LogRunLock> lock = LogRunLock::Acquire(log.path(), scope, {""}, holder);
  if (!lock.ok() && need == SessionLock::kBestEffort) {
    spdlog::warn("{}; the session names no lock, so a later run cannot tell it from one that was killed",
                 lock.status().message());
    TF_ASSIGN_OR_RETURN(int64_t id, log.BeginSession(args_json, ""));
    RunSession session(log, std::nullopt, id);
    session.reserve_ = SpaceReserve::Take(LogFolder(log.path()), kEndReserveBytes, kEndReserveLeastBytes);
    return session;
  }
  if (!lock.ok()) return lock.status();
  const std::string name = std::filesystem::path(LogRunLock::LockPath(log.path(), scope, "")).filename().string();
  TF_ASSIGN_OR_RETURN(int64_t id, log.BeginSession(args_json, name));
  RunSession session(log, std::move(lock).value(), id);
  session.reserve_ = SpaceReserve::Take(LogFolder(log.path()), kEndReserveBytes, kEndReserveLeastBytes);
  // Housekeeping: the run goes on without it (a log busy past the timeout, say), and a later run does it.
  if (Result<int> ended = EndKilledSessions(log, id); !ended.ok()) {
    spdlog::warn("ending the sessions of killed runs: {}; left for a later run", ended.status().message());
  }
  return session;
}

RunSession::RunSession(RunSession&& other) noexcept
    : log_(std::exchange(other.log_, nullptr)),
      lock_(std::move(other.lock_)),
      id_(other.id_),
      reserve_(std::move(other.reserve_)) {}

RunSession::~RunSession() { (void)End("failed"); }

Status RunSession::End(const std::string& state) {
  if (log_ == nullptr) return Status::OK();
  TuningLog* log = std::exchange(log_, nullptr);
  Status ended = log->EndSession(id_, state);
  // A full disk (what failed the run, often) fails this write too: the reserve makes room for it.
  if (!ended.ok() && ended.code() == Status::Code::kIOError && reserve_.Release()) ended = log->EndSession(id_, state);
  reserve_.Release();
  return ended;
}

Result<int> EndKilledSessions(TuningLog& log, int64_t own) {
  TF_ASSIGN_OR_RETURN(std::vector<RunningSession> running, log.RunningSessions());
  const std::filesystem::path folder = LogRunLock::LockFolder(log.path());
  int ended = 0;
  for (const RunningSession& s : running) {
    // A name with a separator is no name this code wrote (a log edited by hand): not looked up outside the folder.
    if (s.id == own || s.run_lock.empty() || s.run_lock.find('/') != std::string::npos) continue;
    Result<bool> abandoned = LogRunLock::Abandoned((folder / s.run_lock).string());
    if (!abandoned.ok()) {
      spdlog::warn("session {}: {}; left as it is", s.id, abandoned.status().message());
      continue;
    }
    if (!*abandoned) continue;
    TF_ASSIGN_OR_RETURN(bool now_ended, log.EndKilledSession(s.id));
    if (!now_ended) continue;  // its run ended it meanwhile
    ++ended;
    spdlog::info("session {} (on {}) was left 'running' by a run that ended without closing it (killed, or its "
                 "machine went down): marked 'killed'; its records are kept",
                 s.id, Printable(s.host, 100));
  }
  // A run killed after taking its lock and before its row named it left a file no row names: removed once no one
  // holds it. (A live run's file is held, from before its row exists.)
  // Stepped with an error code: a range-for's step throws when reading the folder fails part-way.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(LogRunLock::kSessionLockPrefix, 0) != 0) continue;
    (void)LogRunLock::Abandoned(it->path().string());
  }
  return ended;
}

}  // namespace tunefleet
