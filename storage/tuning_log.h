// The SQLite tuning log: one file, WAL, migrations in code. Table and column names are a user-facing contract
// (people query the log with sqlite3): devices, tasks, templates, sessions, records.
// Thread safety: a TuningLog is used by one thread at a time; several processes may write one file at once
// (WAL + busy timeout).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tunefleet {
namespace proto { class DeviceInfo; }

struct RecordRow {
  int64_t id = 0;
  int64_t session_id = 0;
  int64_t task_id = 0;
  int64_t template_id = 0;
  int64_t device_id = 0;
  uint64_t config_index = 0;
  std::string config;          // JSON text
  int status = 0;              // MeasureStatus 0..8
  std::vector<double> costs;   // seconds
  double mean_cost = 0;        // seconds; 0 on failure
  double compile_time = 0;     // seconds
  double wall_time = 0;        // seconds
  std::string message;
  double timestamp = 0;        // unix seconds
};

struct BestRow {
  std::string task;            // spec
  std::string template_name;
  int template_version = 0;
  std::string device_name;
  std::string device_fingerprint;
  RecordRow record;
  double flops = 0;            // of one run of the task (tasks.flops)
  // 0 unless both the task's FLOPs and the cost are finite and above 0 (a log edited by hand may hold anything).
  double gflops() const {
    return flops > 0 && record.mean_cost > 0 && std::isfinite(flops) && std::isfinite(record.mean_cost)
               ? flops / record.mean_cost / 1e9
               : 0;
  }
};

// A (task, template, device) of the log whose every record failed: Best has no row for it.
struct FailedUnitRow {
  std::string task;  // spec
  std::string template_name;
  std::string device_name;
  std::string device_fingerprint;
  int64_t failures = 0;
};

struct DeviceRow {
  int64_t id = 0;
  std::string fingerprint;
  std::string vendor;
  std::string name;
  std::string driver;
  std::string opencl_version;
  std::string info_json;       // the agent's DeviceInfo, protobuf JSON form
};

struct TaskRow {
  int64_t id = 0;
  std::string spec;
  std::string op;
  std::string workload;        // JSON text
  double flops = 0;
};

// A session whose run has not ended it (state 'running').
struct RunningSession {
  int64_t id = 0;
  std::string host;
  std::string run_lock;        // the lock file's name in LOG.locks/ ('' when the run took none)
};

struct TemplateRow {
  int64_t id = 0;
  std::string name;
  int version = 0;
};

// A read snapshot of a log, held until destroyed (TuningLog::HoldReadSnapshot). Move-only.
class ReadSnapshot {
 public:
  ReadSnapshot() = default;
  explicit ReadSnapshot(std::function<void()> end) : end_(std::move(end)) {}
  ReadSnapshot(ReadSnapshot&& other) noexcept : end_(std::exchange(other.end_, nullptr)) {}
  ReadSnapshot& operator=(ReadSnapshot&& other) noexcept {
    if (this != &other) {
      Release();
      end_ = std::exchange(other.end_, nullptr);
    }
    return *this;
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot() { Release(); }

 private:
  void Release() {
    if (end_) std::exchange(end_, nullptr)();
  }
  std::function<void()> end_;
};

class TuningLog {
 public:
  // Opens or creates the database and runs pending migrations. An unwritable path, a file that is not a
  // tunefleet database, or a file with several names (hard links: SQLite keeps a write-ahead log per name) gives
  // one clear error naming the path. Each write checks first that the path (as SQLite resolved it, symlinks followed)
  // still names the file it opened: a log removed, renamed, or another file put at its path meanwhile fails the
  // write with IOError, since nothing written would be kept. (A file copied over it in place is not seen.)
  static Result<std::unique_ptr<TuningLog>> Open(const std::string& path);
  // Open for the commands that read a log (best, export, report, simulate): a path with no file is a typo, not an
  // empty log, so it is an error (NotFound, naming the path) and no file is created; an empty file or an SQLite
  // database without tables is NotFound too, and left as it is. A log of a schema the reading queries understand
  // (schema.h: OldestReadableSchemaVersion on) is opened read-only, so the file stays as it was, byte for byte, and
  // one that cannot be written is read (writing through it fails; RunningSessions needs schema 2); an older one is
  // brought up to date.
  static Result<std::unique_ptr<TuningLog>> OpenExisting(const std::string& path);
  virtual ~TuningLog() = default;
  TuningLog(const TuningLog&) = delete;
  TuningLog& operator=(const TuningLog&) = delete;

  // Inserts or finds by fingerprint; returns devices.id.
  virtual Result<int64_t> UpsertDevice(const proto::DeviceInfo& info) = 0;
  // Inserts or finds by spec; `workload_json` holds op and params; flops of one run. Returns tasks.id.
  virtual Result<int64_t> UpsertTask(const std::string& spec, const std::string& op,
                                     const std::string& workload_json, double flops) = 0;
  // Rewrites task `task_id`'s workload JSON in one write transaction: `edit` gets the stored text and returns the
  // new text, or nothing to leave it. Two runs editing one task at once each see the other's edit. Errors: no such
  // task (NotFound), the database's.
  virtual Status EditTaskWorkload(int64_t task_id,
                                  const std::function<std::optional<std::string>(const std::string&)>& edit) = 0;
  // Inserts or finds by (name, version); returns templates.id.
  virtual Result<int64_t> UpsertTemplate(const std::string& name, int version) = 0;
  // A tuning session (one tuner run); `args_json` records the command line, `run_lock` the name of the lock file
  // the run holds while it lives ('' for none; tuner/run_session.h). Returns sessions.id.
  virtual Result<int64_t> BeginSession(const std::string& args_json, const std::string& run_lock) = 0;
  virtual Status EndSession(int64_t session_id, const std::string& state) = 0;
  // Sessions in state 'running', in id order.
  virtual Result<std::vector<RunningSession>> RunningSessions() = 0;
  // Ends a session whose run died without ending it (killed, or its machine went down): state 'killed', `ended`
  // its last record's time (its start when it has none). False when the session was no longer running.
  virtual Result<bool> EndKilledSession(int64_t session_id) = 0;

  // Commits one record at once (its own transaction). Returns records.id.
  virtual Result<int64_t> AddRecord(const RecordRow& r) = 0;
  // Each record of `rows`, unless the log holds one of the same workload, config, status, costs and timestamp (an
  // import of a file another import is adding too): checked in the inserts' transaction, one for all the rows (an
  // import committing each record took a millisecond a line). Returns each row's id, or nullopt where it was present.
  virtual Result<std::vector<std::optional<int64_t>>> AddRecordsUnlessPresent(const std::vector<RecordRow>& rows) = 0;
  // Records of (task, template, device) in id order; an id of 0 matches any (so Records(0, 0, 0) is every
  // record).
  Result<std::vector<RecordRow>> Records(int64_t task_id, int64_t template_id, int64_t device_id) {
    std::vector<RecordRow> out;
    TF_RETURN_IF_ERROR(VisitRecords(task_id, template_id, device_id, [&out](RecordRow&& r) {
      out.push_back(std::move(r));
    }));
    return out;
  }
  // The same records, each given to `visit` as it is read, for a caller that keeps less than the rows (a warm start
  // from every record of a template).
  virtual Status VisitRecords(int64_t task_id, int64_t template_id, int64_t device_id,
                              const std::function<void(RecordRow&&)>& visit) = 0;
  // How many rows of the records table are of `template_id` and not of (`task_id`, `device_id`), read from an index
  // alone: rows that no reader gives (VisitRecords leaves unsound ones out) are counted too, so it is an upper bound
  // on what VisitRecords(0, template_id, 0) gives of other tasks and devices, for a caller that skips that read when
  // too few could be new (a warm start's refresh read 173k records, 0.47 s, every plan).
  virtual Result<int64_t> CountOthersOfTemplate(int64_t template_id, int64_t task_id, int64_t device_id) = 0;
  // Config indices already recorded for (task, template, device), for resume.
  virtual Result<std::vector<uint64_t>> MeasuredIndices(int64_t task_id, int64_t template_id, int64_t device_id) = 0;
  // Best successful record per (task, template, device).
  Result<std::vector<BestRow>> Best() { return Best(""); }
  // Those of the task `task_spec` (its spec as the log holds it) alone: its records are the only ones read (`best
  // --task` of a task of 10 records took 10 s in a log of 612k).
  virtual Result<std::vector<BestRow>> Best(const std::string& task_spec) = 0;
  // The successful records of one (task, template, device), fastest first (ties: the earliest), each given to
  // `visit` until it returns false: the first is its Best row. For callers that must pass over a record Best picks (a
  // config edited by hand, or imported from another device, that is not in its template's space). One row is held at
  // a time: a group of 512k successes whose fastest lay outside the space peaked at 452 MB when returned whole.
  virtual Status VisitRankedSuccesses(int64_t task_id, int64_t template_id, int64_t device_id,
                                      const std::function<bool(BestRow&&)>& visit) = 0;
  // All of them, as VisitRankedSuccesses gives them.
  Result<std::vector<BestRow>> RankedSuccesses(int64_t task_id, int64_t template_id, int64_t device_id) {
    std::vector<BestRow> out;
    TF_RETURN_IF_ERROR(VisitRankedSuccesses(task_id, template_id, device_id, [&out](BestRow&& row) {
      out.push_back(std::move(row));
      return true;
    }));
    return out;
  }
  // Every (task, template, device) with records, none of them successful, in Best's order (task spec, template,
  // device name).
  virtual Result<std::vector<FailedUnitRow>> UnitsWithoutSuccess() = 0;

  // Listings in id order, for export and reports.
  // Records no tuner writes (a status that is no MeasureStatus, a negative config index, an OK record whose mean
  // cost is not a number between 1 ps and 10^6 s, or a task, template or device the log lacks): Records,
  // MeasuredIndices and Best leave them out.
  virtual Result<int64_t> DamagedRecords() = 0;
  virtual Result<std::vector<DeviceRow>> Devices() = 0;
  virtual Result<std::vector<TaskRow>> Tasks() = 0;
  virtual Result<std::vector<TemplateRow>> Templates() = 0;
  // Until the returned snapshot is destroyed, every read of this log sees it as it stood at the first of them,
  // whatever other processes commit meanwhile: a reader that reads the tables one after another (tasks, then
  // records) would otherwise meet a record whose task row was committed after it read the tasks. Only for reading:
  // a write while it is held fails. Held again within one held, it is that one. Errors: the database's (it cannot
  // begin a transaction).
  virtual Result<ReadSnapshot> HoldReadSnapshot() = 0;
  // The file this log was opened from.
  virtual const std::string& path() const = 0;
  // A write waits up to 30 s for another process's write lock on the log (another run's record, a sqlite3 shell's
  // open transaction, a VACUUM), then fails with Unavailable. With `keep_waiting` set, it waits instead as long as
  // that returns true: it is called with the seconds waited so far, every few milliseconds, on the writing thread.
  // Empty: the 30 s bound again. The caller keeps what it captures alive until it sets another.
  virtual void SetLockWait(std::function<bool(double waited_s)> keep_waiting) = 0;

 protected:
  TuningLog() = default;
};

}  // namespace tunefleet
