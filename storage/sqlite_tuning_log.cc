// TuningLog over one SQLite file. Every public write is its own transaction (BEGIN IMMEDIATE ... COMMIT), so
// a crash never loses an acknowledged record and several processes can append to one file (WAL + busy
// timeout). Errors from SQLite are returned with the database path in front.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "common/host_name.h"
#include "common/json_parse.h"
#include "common/wall_clock.h"
#include "proto/tunefleet.pb.h"
#include "storage/schema.h"
#include "storage/sqlite_handle.h"
#include "storage/tuning_log.h"

namespace tunefleet {
namespace {

// How long a writer waits for another writer's lock before giving up.
constexpr int kBusyTimeoutMs = 30000;
// Pages (4 KiB) of -wal after which a writer folds it into the file: a checkpoint costs about half a millisecond.
constexpr int kWalCheckpointPages = 16;

std::string CostsToJson(const std::vector<double>& costs) { return nlohmann::json(costs).dump(); }

std::vector<double> CostsFromJson(const std::string& text) {
  std::vector<double> out;
  auto j = ParseJson(text);
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

// A record as a tuner writes it: a MeasureStatus value, a config index of 0 or more, for an OK record a mean cost
// between 1 ps (below any kernel; an agent reports 1 ns / --number at the least) and 10^6 s, the range the tracker
// accepts from agents (tracker/result_check.cc), and a task, template and device the log holds. Readers leave out the
// rest (a log edited by hand or by another tool), which DamagedRecords() counts; in SQL over `records r`.
constexpr const char* kSoundRecord =
    "(typeof(r.status) = 'integer' AND r.status BETWEEN 0 AND 8 AND typeof(r.config_index) = 'integer' AND "
    "r.config_index >= 0 AND (r.status != 0 OR (typeof(r.mean_cost) IN ('real', 'integer') AND "
    "r.mean_cost >= 1e-12 AND r.mean_cost <= 1e6)) AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = r.task_id) AND "
    "EXISTS (SELECT 1 FROM templates tp WHERE tp.id = r.template_id) AND "
    "EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id))";

// Columns of `records` in RecordRow order; ReadRecord reads them starting at column `c`.
constexpr const char* kRecordColumns =
    "r.id, r.session_id, r.task_id, r.template_id, r.device_id, r.config_index, r.config, r.status, r.costs, "
    "r.mean_cost, r.compile_time, r.wall_time, r.message, r.timestamp";

// A template version as stored; -1 (no template's version) when it is outside int's range, instead of wrapping into
// another version.
int VersionFrom(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max() ? static_cast<int>(v) : -1; }

RecordRow ReadRecord(const SqliteStmt& st, int c) {
  RecordRow r;
  r.id = st.Int64(c + 0);
  r.session_id = st.Int64(c + 1);
  r.task_id = st.Int64(c + 2);
  r.template_id = st.Int64(c + 3);
  r.device_id = st.Int64(c + 4);
  r.config_index = static_cast<uint64_t>(st.Int64(c + 5));
  r.config = st.Text(c + 6);
  r.status = static_cast<int>(st.Int64(c + 7));
  r.costs = CostsFromJson(st.Text(c + 8));
  r.mean_cost = st.Double(c + 9);
  r.compile_time = st.Double(c + 10);
  r.wall_time = st.Double(c + 11);
  r.message = st.Text(c + 12);
  r.timestamp = st.Double(c + 13);
  return r;
}

// Which file a path names now (nullopt: none).
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  nlink_t links = 0;
};
std::optional<FileId> FileIdOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino, st.st_nlink};
}

// The file a written log was opened as: SQLite's resolved name for it, and its identity then.
struct OpenedFile {
  std::string path;
  FileId id;
};

class SqliteTuningLog final : public TuningLog {
 public:
  // `file`: the file the log was opened as, for a log that is written (see Write); nullopt for a read-only one.
  SqliteTuningLog(SqliteDb db, std::optional<OpenedFile> file) : db_(std::move(db)), file_(std::move(file)) {
    // Replaces the busy timeout (the two are one setting in SQLite): the same 30 s, or as long as SetLockWait says.
    if (file_) sqlite3_busy_handler(db_.get(), &SqliteTuningLog::OnBusy, this);
  }

  void SetLockWait(std::function<bool(double waited_s)> keep_waiting) override {
    keep_waiting_ = std::move(keep_waiting);
  }

  Result<int64_t> UpsertDevice(const proto::DeviceInfo& info) override {
    if (info.fingerprint().empty()) return Fail(Status::InvalidArgument("device has no fingerprint"));
    std::string info_json;
    google::protobuf::util::JsonPrintOptions opts;
    opts.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(info, &info_json, opts).ok()) info_json = "{}";
    return UpsertReturningId(
        "INSERT INTO devices (fingerprint, vendor, name, driver, opencl_version, info_json, first_seen) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (fingerprint) DO NOTHING",
        "SELECT id FROM devices WHERE fingerprint = ?1",
        [&](SqliteStmt& st) {
          st.Bind(1, info.fingerprint()).Bind(2, info.vendor()).Bind(3, info.name()).Bind(4, info.driver_version());
          st.Bind(5, info.device_version()).Bind(6, info_json).Bind(7, WallClockSeconds());
        },
        [&](SqliteStmt& st) { st.Bind(1, info.fingerprint()); });
  }

  Result<int64_t> UpsertTask(const std::string& spec, const std::string& op, const std::string& workload_json,
                             double flops) override {
    return UpsertReturningId(
        "INSERT INTO tasks (spec, op, workload, flops) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (spec) DO NOTHING",
        "SELECT id FROM tasks WHERE spec = ?1",
        [&](SqliteStmt& st) {
          st.Bind(1, spec).Bind(2, op).Bind(3, workload_json.empty() ? std::string("{}") : workload_json);
          st.Bind(4, flops);
        },
        [&](SqliteStmt& st) { st.Bind(1, spec); });
  }

  Status EditTaskWorkload(int64_t task_id,
                          const std::function<std::optional<std::string>(const std::string&)>& edit) override {
    Status s = Write([&]() -> Status {
      TF_ASSIGN_OR_RETURN(SqliteStmt sel, db_.Prepare("SELECT workload FROM tasks WHERE id = ?1"));
      sel.Bind(1, task_id);
      TF_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) return Status::NotFound("no task #" + std::to_string(task_id) + " in the log");
      const std::optional<std::string> edited = edit(sel.Text(0));
      if (!edited) return Status::OK();
      TF_ASSIGN_OR_RETURN(SqliteStmt upd, db_.Prepare("UPDATE tasks SET workload = ?1 WHERE id = ?2"));
      upd.Bind(1, *edited).Bind(2, task_id);
      return upd.Run();
    });
    return Fail(s);
  }

  Result<int64_t> UpsertTemplate(const std::string& name, int version) override {
    return UpsertReturningId(
        "INSERT INTO templates (name, version) VALUES (?1, ?2) ON CONFLICT (name, version) DO NOTHING",
        "SELECT id FROM templates WHERE name = ?1 AND version = ?2",
        [&](SqliteStmt& st) { st.Bind(1, name).Bind(2, static_cast<int64_t>(version)); },
        [&](SqliteStmt& st) { st.Bind(1, name).Bind(2, static_cast<int64_t>(version)); });
  }

  Result<int64_t> BeginSession(const std::string& args_json, const std::string& run_lock) override {
    int64_t id = 0;
    Status s = Write([&]() -> Status {
      TF_ASSIGN_OR_RETURN(SqliteStmt st, db_.Prepare("INSERT INTO sessions (started, state, args, host, run_lock) "
                                                     "VALUES (?1, 'running', ?2, ?3, ?4)"));
      st.Bind(1, WallClockSeconds()).Bind(2, args_json.empty() ? std::string("{}") : args_json).Bind(3, HostName());
      st.Bind(4, run_lock);
      TF_RETURN_IF_ERROR(st.Run());
      id = db_.LastInsertId();
      return Status::OK();
    });
    if (!s.ok()) return Fail(s);
    return id;
  }

  Status EndSession(int64_t session_id, const std::string& state) override {
    Status s = Write([&]() -> Status {
      TF_ASSIGN_OR_RETURN(SqliteStmt st, db_.Prepare("UPDATE sessions SET ended = ?1, state = ?2 WHERE id = ?3"));
      st.Bind(1, WallClockSeconds()).Bind(2, state).Bind(3, session_id);
      return st.Run();
    });
    return Fail(s);
  }

  Result<std::vector<RunningSession>> RunningSessions() override {
    Result<SqliteStmt> st =
        db_.Prepare("SELECT id, host, run_lock FROM sessions WHERE state = 'running' ORDER BY id");
    if (!st.ok()) return Fail(st.status());
    std::vector<RunningSession> out;
    for (;;) {
      Result<bool> row = st->Step();
      if (!row.ok()) return Fail(row.status());
      if (!*row) return out;
      out.push_back({st->Int64(0), st->Text(1), st->Text(2)});
    }
  }

  Result<bool> EndKilledSession(int64_t session_id) override {
    bool ended = false;
    Status s = Write([&]() -> Status {
      TF_ASSIGN_OR_RETURN(
          SqliteStmt st,
          db_.Prepare("UPDATE sessions SET state = 'killed', ended = coalesce((SELECT max(timestamp) FROM records "
                      "WHERE session_id = ?1), started) WHERE id = ?1 AND state = 'running'"));
      st.Bind(1, session_id);
      TF_RETURN_IF_ERROR(st.Run());
      ended = db_.Changes() > 0;
      return Status::OK();
    });
    if (!s.ok()) return Fail(s);
    return ended;
  }

  Result<int64_t> AddRecord(const RecordRow& r) override {
    int64_t id = 0;
    Status s = Write([&]() -> Status { return InsertRecord(r, &id); });
    if (!s.ok()) return Fail(s);
    return id;
  }

  Result<std::vector<std::optional<int64_t>>> AddRecordsUnlessPresent(const std::vector<RecordRow>& rows) override {
    std::vector<std::optional<int64_t>> ids;
    Status s = Write([&]() -> Status {
      ids.clear();  // a retried transaction starts over
      // Under the write lock: a record another process added since the caller looked is seen here. "+status" keeps
      // SQLite on records_by_workload (down to the config and its time): on records_best (by status) it scanned every
      // success of the workload for each record, and an import of 34,650 lines took 3 minutes instead of seconds.
      for (const RecordRow& r : rows) {
        RecordRow row = r;
        if (row.timestamp <= 0) row.timestamp = WallClockSeconds();  // as InsertRecord stores it
        TF_ASSIGN_OR_RETURN(SqliteStmt st, db_.Prepare("SELECT 1 FROM records WHERE task_id = ?1 AND template_id = ?2 "
                                                       "AND device_id = ?3 AND config_index = ?4 AND config = ?5 AND "
                                                       "+status = ?6 AND costs = ?7 AND timestamp = ?8 LIMIT 1"));
        st.Bind(1, r.task_id).Bind(2, r.template_id).Bind(3, r.device_id);
        st.Bind(4, static_cast<int64_t>(r.config_index));
        st.Bind(5, row.config).Bind(6, static_cast<int64_t>(row.status)).Bind(7, CostsToJson(row.costs));
        st.Bind(8, row.timestamp);
        TF_ASSIGN_OR_RETURN(bool present, st.Step());
        if (present) {
          ids.push_back(std::nullopt);
          continue;
        }
        int64_t added = 0;
        TF_RETURN_IF_ERROR(InsertRecord(row, &added));
        ids.push_back(added);
      }
      return Status::OK();
    });
    if (!s.ok()) return Fail(s);
    return ids;
  }

  Status VisitRecords(int64_t task_id, int64_t template_id, int64_t device_id,
                      const std::function<void(RecordRow&&)>& visit) override {
    // Only the ids given are compared, so that SQLite takes records_by_workload: with "(?1 = 0 OR r.task_id = ?1)" it
    // read the whole table for every task (an import of 1,000 new tasks into a log of 512k records took 50 s).
    std::string sql = std::string("SELECT ") + kRecordColumns + " FROM records r WHERE " + kSoundRecord;
    if (task_id != 0) sql += " AND r.task_id = " + std::to_string(task_id);
    if (template_id != 0) sql += " AND r.template_id = " + std::to_string(template_id);
    if (device_id != 0) sql += " AND r.device_id = " + std::to_string(device_id);
    sql += " ORDER BY r.id";
    return Query(sql, [](SqliteStmt&) {}, [&](const SqliteStmt& st) { visit(ReadRecord(st, 0)); });
  }

  Result<int64_t> CountOthersOfTemplate(int64_t template_id, int64_t task_id, int64_t device_id) override {
    int64_t count = 0;
    TF_RETURN_IF_ERROR(Query(
        "SELECT count(*) FROM records WHERE template_id = ?1 AND NOT (task_id = ?2 AND device_id = ?3)",
        [&](SqliteStmt& st) { st.Bind(1, template_id).Bind(2, task_id).Bind(3, device_id); },
        [&](const SqliteStmt& st) { count = st.Int64(0); }));
    return count;
  }

  Result<std::vector<uint64_t>> MeasuredIndices(int64_t task_id, int64_t template_id, int64_t device_id) override {
    std::vector<uint64_t> out;
    Status s = Query(
        std::string("SELECT DISTINCT r.config_index FROM records r WHERE r.task_id = ?1 AND r.template_id = ?2 "
                    "AND (?3 = 0 OR r.device_id = ?3) AND ") + kSoundRecord + " ORDER BY r.config_index",
        [&](SqliteStmt& st) { st.Bind(1, task_id).Bind(2, template_id).Bind(3, device_id); },
        [&](const SqliteStmt& st) { out.push_back(static_cast<uint64_t>(st.Int64(0))); });
    if (!s.ok()) return s;
    return out;
  }

  Result<std::vector<BestRow>> Best(const std::string& task_spec) override {
    std::vector<BestRow> out;
    TF_RETURN_IF_ERROR(RankedRows(std::nullopt, task_spec, [&out](BestRow&& row) {
      out.push_back(std::move(row));
      return true;
    }));
    return out;
  }
  Status VisitRankedSuccesses(int64_t task_id, int64_t template_id, int64_t device_id,
                              const std::function<bool(BestRow&&)>& visit) override {
    return RankedRows(std::array<int64_t, 3>{task_id, template_id, device_id}, "", visit);
  }

  Result<std::vector<FailedUnitRow>> UnitsWithoutSuccess() override {
    std::vector<FailedUnitRow> out;
    Status s = Query(
        std::string("SELECT t.spec, tp.name, d.name, d.fingerprint, count(*) FROM records r JOIN tasks t ON t.id = "
                    "r.task_id JOIN templates tp ON tp.id = r.template_id JOIN devices d ON d.id = r.device_id "
                    "WHERE ") + kSoundRecord +
            " GROUP BY r.task_id, r.template_id, r.device_id HAVING sum(r.status = 0) = 0 "
            "ORDER BY t.spec, tp.name, d.name, r.task_id, r.template_id, r.device_id",
        [](SqliteStmt&) {},
        [&](const SqliteStmt& st) {
          out.push_back({st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Int64(4)});
        });
    if (!s.ok()) return s;
    return out;
  }

  Result<int64_t> DamagedRecords() override {
    int64_t n = 0;
    Status s = Query(std::string("SELECT count(*) FROM records r WHERE NOT ") + kSoundRecord, [](SqliteStmt&) {},
                     [&](const SqliteStmt& st) { n = st.Int64(0); });
    if (!s.ok()) return s;
    return n;
  }

  Result<std::vector<DeviceRow>> Devices() override {
    std::vector<DeviceRow> out;
    Status s = Query(
        "SELECT id, fingerprint, vendor, name, driver, opencl_version, info_json FROM devices ORDER BY id",
        [](SqliteStmt&) {},
        [&](const SqliteStmt& st) {
          out.push_back({st.Int64(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4), st.Text(5), st.Text(6)});
        });
    if (!s.ok()) return s;
    return out;
  }

  Result<std::vector<TaskRow>> Tasks() override {
    std::vector<TaskRow> out;
    Status s = Query("SELECT id, spec, op, workload, flops FROM tasks ORDER BY id", [](SqliteStmt&) {},
                     [&](const SqliteStmt& st) {
                       out.push_back({st.Int64(0), st.Text(1), st.Text(2), st.Text(3), st.Double(4)});
                     });
    if (!s.ok()) return s;
    return out;
  }

  Result<std::vector<TemplateRow>> Templates() override {
    std::vector<TemplateRow> out;
    Status s = Query("SELECT id, name, version FROM templates ORDER BY id", [](SqliteStmt&) {},
                     [&](const SqliteStmt& st) {
                       out.push_back({st.Int64(0), st.Text(1), VersionFrom(st.Int64(2))});
                     });
    if (!s.ok()) return s;
    return out;
  }

  Result<ReadSnapshot> HoldReadSnapshot() override {
    // Within a snapshot already held (a reader calling another), the outer one is the snapshot.
    if (sqlite3_get_autocommit(db_.get()) == 0) return ReadSnapshot();
    // A deferred transaction: its snapshot is taken by its first read; a read-only connection can begin it too.
    if (Status s = db_.Exec("BEGIN"); !s.ok()) return s;
    // A COMMIT that failed would leave the connection in the transaction: every later snapshot would be this one,
    // and a write's BEGIN IMMEDIATE would fail. Rolled back then (a read-only transaction loses nothing).
    return ReadSnapshot([this] {
      if (!db_.Exec("COMMIT").ok()) (void)db_.Exec("ROLLBACK");
    });
  }

  const std::string& path() const override { return db_.path(); }

 private:
  // The INSERT of AddRecord, inside the caller's transaction.
  Status InsertRecord(const RecordRow& r, int64_t* id) {
    TF_ASSIGN_OR_RETURN(
        SqliteStmt st,
        db_.Prepare("INSERT INTO records (session_id, task_id, template_id, device_id, config_index, config, "
                    "status, costs, mean_cost, compile_time, wall_time, message, timestamp) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"));
    if (r.session_id > 0) {
      st.Bind(1, r.session_id);
    } else {
      st.BindNull(1);  // a record of no session (a caller that began none)
    }
    st.Bind(2, r.task_id).Bind(3, r.template_id).Bind(4, r.device_id);
    st.Bind(5, static_cast<int64_t>(r.config_index)).Bind(6, r.config).Bind(7, static_cast<int64_t>(r.status));
    st.Bind(8, CostsToJson(r.costs)).Bind(9, r.mean_cost).Bind(10, r.compile_time).Bind(11, r.wall_time);
    st.Bind(12, r.message).Bind(13, r.timestamp > 0 ? r.timestamp : WallClockSeconds());
    TF_RETURN_IF_ERROR(st.Run());
    *id = db_.LastInsertId();
    return Status::OK();
  }

  // Configs ranked by mean cost within (task, template, device), ties to the earliest record: without `group`, each
  // group's first (of the task `task_spec` only, when it is given); with it, every config of that (task id, template
  // id, device id). Each row is given to `visit` until it returns false. A config measured more than once (tune
  // --confirm, a --fresh pass, a recording's passes: records of one config JSON, what was measured) stands as its
  // lower median record (of two, the faster), so that one lucky measurement does not make it the best.
  Status RankedRows(const std::optional<std::array<int64_t, 3>>& group, const std::string& task_spec,
                    const std::function<bool(BestRow&&)>& visit) {
    std::string filter;
    if (group) {
      filter = " AND r.task_id = ?1 AND r.template_id = ?2 AND r.device_id = ?3";
    } else if (!task_spec.empty()) {  // SQLite reads that task's records alone (records_best begins with the task)
      filter = " AND r.task_id IN (SELECT id FROM tasks WHERE spec = ?1)";
    }
    std::string sql = std::string(
                          "WITH per_config AS (SELECT r.*, ROW_NUMBER() OVER (PARTITION BY r.task_id, r.template_id, "
                          "r.device_id, r.config ORDER BY r.mean_cost, r.id) AS k, COUNT(*) OVER (PARTITION BY "
                          "r.task_id, r.template_id, r.device_id, r.config) AS n FROM records r "
                          "WHERE r.status = 0 AND ") + kSoundRecord + filter +
                      std::string("), ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.task_id, "
                                  "m.template_id, m.device_id ORDER BY m.mean_cost, m.id) AS rank FROM per_config m "
                                  "WHERE m.k = (m.n + 1) / 2) "
                          "SELECT t.spec, tp.name, tp.version, d.name, d.fingerprint, t.flops, ") +
                      kRecordColumns +
                      " FROM ranked r JOIN tasks t ON t.id = r.task_id JOIN templates tp ON tp.id = r.template_id "
                      "JOIN devices d ON d.id = r.device_id" + std::string(group ? "" : " WHERE r.rank = 1") +
                      " ORDER BY t.spec, tp.name, d.name, r.task_id, r.template_id, r.device_id, r.rank";
    auto bind = [&](SqliteStmt& st) {
      if (group) {
        st.Bind(1, (*group)[0]).Bind(2, (*group)[1]).Bind(3, (*group)[2]);
      } else if (!task_spec.empty()) {
        st.Bind(1, task_spec);
      }
    };
    return QueryWhile(sql, bind, [&](const SqliteStmt& st) {
      BestRow b;
      b.task = st.Text(0);
      b.template_name = st.Text(1);
      b.template_version = VersionFrom(st.Int64(2));
      b.device_name = st.Text(3);
      b.device_fingerprint = st.Text(4);
      b.flops = st.Double(5);
      b.record = ReadRecord(st, 6);
      return visit(std::move(b));
    });
  }


  Status Fail(const Status& s) const { return s.WithContext(db_.path()); }

  // SQLite's busy handler: `count` is how often it was called for this lock; 0 to give up (SQLITE_BUSY).
  static int OnBusy(void* self_arg, int count) {
    auto* self = static_cast<SqliteTuningLog*>(self_arg);
    const auto now = std::chrono::steady_clock::now();
    if (count == 0) self->busy_since_ = now;
    const double waited = std::chrono::duration<double>(now - self->busy_since_).count();
    if (self->keep_waiting_ ? !self->keep_waiting_(waited) : waited * 1000 >= kBusyTimeoutMs) return 0;
    // Short sleeps first (another run's record takes a millisecond), then 20 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(count + 1, 20)));
    return 1;
  }

  // Every write is its own transaction, on the file the log was opened as. When the name SQLite resolved no longer
  // names that file (removed, renamed, or another file put at its path while this process writes), the write is
  // refused: what it wrote would end up in no file, or its write-ahead log (named by that name) apart from it.
  template <typename Fn>
  Status Write(Fn&& body) {
    if (file_) {
      const std::optional<FileId> now = FileIdOf(file_->path);
      if (!now || now->dev != file_->id.dev || now->ino != file_->id.ino) {
        const char* what = now ? "replaced by another file at its path" : "removed or renamed";
        return Status::IOError(std::string("the log was ") + what +
                               " while this process wrote to it; nothing more is written (move or delete a log "
                               "only when no run writes to it)" + FoldWalIntoMovedFile());
      }
    }
    return InTransaction(db_, std::forward<Fn>(body));
  }

  // The write-ahead file keeps the log's old name, and a moved log lacked what it held (a small run's every record):
  // a checkpoint writes it into the file this connection has open, wherever it now lies. Said as the message's end.
  std::string FoldWalIntoMovedFile() {
    Result<SqliteStmt> st = db_.Prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    Result<bool> row = st.ok() ? st->Step() : Result<bool>(st.status());
    if (row.ok() && *row && st->Int64(0) == 0 && st->Int64(1) == st->Int64(2))
      return "; if it was moved, the moved file holds all it wrote (if it was removed, that is gone)";
    return "; what it wrote last may be only in " + db_.path() + "-wal: put it beside the moved file, named as " +
           "that file with -wal added, before anything opens either";
  }

  // INSERT ... ON CONFLICT DO NOTHING, then SELECT the id, in one write transaction.
  template <typename BindInsert, typename BindSelect>
  Result<int64_t> UpsertReturningId(const char* insert_sql, const char* select_sql, BindInsert bind_insert,
                                    BindSelect bind_select) {
    int64_t id = 0;
    Status s = Write([&]() -> Status {
      TF_ASSIGN_OR_RETURN(SqliteStmt ins, db_.Prepare(insert_sql));
      bind_insert(ins);
      TF_RETURN_IF_ERROR(ins.Run());
      TF_ASSIGN_OR_RETURN(SqliteStmt sel, db_.Prepare(select_sql));
      bind_select(sel);
      TF_ASSIGN_OR_RETURN(bool row, sel.Step());
      if (!row) return Status::Internal("upsert found no row");
      id = sel.Int64(0);
      return Status::OK();
    });
    if (!s.ok()) return Fail(s);
    return id;
  }

  template <typename BindFn, typename RowFn>
  Status Query(const std::string& sql, BindFn bind, RowFn on_row) {
    return QueryWhile(sql, bind, [&](const SqliteStmt& st) {
      on_row(st);
      return true;
    });
  }
  // As Query, until `on_row` returns false.
  template <typename BindFn, typename RowFn>
  Status QueryWhile(const std::string& sql, BindFn bind, RowFn on_row) {
    Result<SqliteStmt> st = db_.Prepare(sql);
    if (!st.ok()) return Fail(st.status());
    bind(*st);
    for (;;) {
      Result<bool> row = st->Step();
      if (!row.ok()) return Fail(row.status());
      if (!*row || !on_row(*st)) return Status::OK();
    }
  }

  SqliteDb db_;
  std::optional<OpenedFile> file_;
  std::function<bool(double)> keep_waiting_;  // SetLockWait
  std::chrono::steady_clock::time_point busy_since_;  // when the current wait for a lock began
};

Status SwitchToWal(SqliteDb& db) {
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("PRAGMA journal_mode = WAL"));
  TF_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.Text(0) != "wal") return Status::IOError("cannot switch to WAL journal mode");
  return Status::OK();
}  // the statement is finalized on return: an unfinished one would block the migration's COMMIT

Status Configure(SqliteDb& db) {
  TF_RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs)));
  // The first statement that reads the file (a non-database fails here), before the switch to WAL below: that switch
  // rewrote another program's database (and a newer log), which was then refused.
  TF_RETURN_IF_ERROR(CheckIsLog(db));
  // Switching a new file to WAL while another process does the same can fail at once with SQLITE_BUSY: SQLite
  // does not call the busy handler there. So it is tried again, as the busy timeout would, until that runs out.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    Status s = SwitchToWal(db);
    if (s.code() != Status::Code::kUnavailable || std::chrono::steady_clock::now() >= give_up) {
      TF_RETURN_IF_ERROR(s);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  TF_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  // The file itself, not only its -wal, holds all but the last few records of a running (or killed) run, for a
  // copy of the log taken meanwhile: SQLite folds the -wal in once it holds this many pages (default 1000, 4 MB).
  TF_RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint = " + std::to_string(kWalCheckpointPages)));
  TF_RETURN_IF_ERROR(MigrateSchema(db));
  return CheckTables(db);
}

Status Damaged(const SqliteDb& db, const std::string& what) {
  std::string damaged = "the log is damaged (SQLite's quick_check: " + what + ")";
  if (db.wal_held_back()) {
    // Read through a -wal that a killed run left: that -wal may be another file's, the file as it is sound.
    return Status::Corruption(
        damaged + " as read through its write-ahead file " + db.path() + "-wal, which holds transactions not yet in " +
        "it; the file itself was left as it was. If the log was replaced (a copy restored, another log moved in its " +
        "place) after a run writing it was killed, that -wal is the old file's: move " + db.path() + "-wal and " +
        db.path() + "-shm away and the log reads as it stands; otherwise give another --db, or a copy of the log " +
        "from before the damage");
  }
  return Status::Corruption(damaged + ": a tune or import into it would fail at the first record that touches the "
                            "damage (a tune after measuring it); give another --db, or a copy of the log from before "
                            "the damage");
}

// SQLite's quick check of the whole file (its pages and indexes, not the rows' values): a run writing into a damaged
// log would fail at the first record that touches the damage, after its device was leased and the result measured
// (a damaged index page: the reading commands, which may not use it, read such a log without a word). Read-only, so
// it is done before Configure switches the journal to WAL or migrates the schema: a damaged log is refused as it
// was. A -wal that a killed run left is folded into the file (when the connection closes) only once the log reads
// sound through it: one that belongs to a file since replaced would damage the new file for good. Reads the whole
// log once, about 2 ms a MB (1.4 s for 741 MB of 3 million records); done by the writers, before anything is leased
// or imported, and by the readers of a log with such a -wal.
Status CheckNotDamaged(SqliteDb& db) {
  // A file SQLite cannot read at all (no database) fails here; Configure says that one as it always did. A log
  // locked past the busy timeout is said here, and so is damage that stops the check itself.
  auto unless_locked = [&db](const Status& failed) {
    if (failed.code() == Status::Code::kUnavailable) return failed;
    if (failed.code() == Status::Code::kCorruption && failed.message().find("malformed") != std::string::npos) {
      return Damaged(db, failed.message());
    }
    return Status::OK();
  };
  Result<SqliteStmt> st = db.Prepare("PRAGMA quick_check(1)");
  if (!st.ok()) return unless_locked(st.status());
  Result<bool> row = st->Step();
  if (!row.ok()) return unless_locked(row.status());
  if (!*row) return Status::OK();
  const std::string found = st->Text(0);
  if (found == "ok") {
    db.FoldWalOnClose();
    return Status::OK();
  }
  // "*** in database main ***\nPage 10: btreeInitPage() returns error code 11": the last line says what.
  return Damaged(db, found.substr(found.rfind('\n') == std::string::npos ? 0 : found.rfind('\n') + 1));
}

// The refusal of a log file with several names (nullopt when it has one).
std::optional<Status> SeveralNames(const std::string& path, const FileId& file) {
  if (file.links <= 1) return std::nullopt;
  return Status::InvalidArgument(path + ": the file has " + std::to_string(file.links) +
                                 " names (hard links); a log is written through one name only, since SQLite keeps "
                                 "its write-ahead log per name and runs writing through two would lose records "
                                 "(copy it, or use a symbolic link)");
}

// Refuses a path that names something other than a file (a symlink's target): a folder, a device, a FIFO (reading
// one blocked forever). A path that names nothing passes.
Status CheckNotOtherThanAFile(const std::string& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (!ec && type != std::filesystem::file_type::regular && type != std::filesystem::file_type::not_found)
    return Status::InvalidArgument(path + ": not a regular file (a tuning log is an SQLite file)");
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<TuningLog>> TuningLog::Open(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("the tuning log's path is empty");
  if (path == ":memory:") {
    return Status::InvalidArgument(":memory: is SQLite's in-memory database, whose records would be gone at exit: a "
                                   "tuning log is a file (give ./:memory: for a file of that name)");
  }
  TF_RETURN_IF_ERROR(CheckNotOtherThanAFile(path));
  TF_ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path));
  // The file SQLite opened, as it resolved the path (symlinks followed): its write-ahead log is named after it.
  const char* opened = sqlite3_db_filename(db.get(), "main");
  const std::string file_path = opened && *opened ? opened : path;
  // SQLite names a database's write-ahead log after that name: two runs writing one file through two of its names
  // (hard links) would each keep their own, and one's records would be lost. Checked before anything is written.
  if (std::optional<FileId> before = FileIdOf(file_path)) {
    if (std::optional<Status> refused = SeveralNames(path, *before)) return *refused;
  }
  TF_RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs)).WithContext(path));
  TF_RETURN_IF_ERROR(CheckNotDamaged(db).WithContext(path));
  Status s = Configure(db);
  if (!s.ok()) {
    if (s.code() == Status::Code::kCorruption) {
      return Status::Corruption(path + ": not a tunefleet tuning log (" + s.message() + ")");
    }
    return s.WithContext(path);
  }
  const std::optional<FileId> file = FileIdOf(file_path);  // a new file exists by now
  if (!file) return Status::IOError(path + ": the log vanished as it was opened");
  if (std::optional<Status> refused = SeveralNames(path, *file)) return *refused;
  return std::unique_ptr<TuningLog>(new SqliteTuningLog(std::move(db), OpenedFile{file_path, *file}));
}

namespace {

// True when `path` is an empty file or an SQLite database without a table or a schema version: no tuning log in
// it, which a reading command must not turn into one. Read-only; anything it cannot read is left to Open.
bool HoldsNoLog(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec) return true;
  Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  if (!db.ok()) return false;
  Result<SqliteStmt> st =
      db->Prepare("SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
  if (!st.ok()) return false;
  Result<bool> row = st->Step();
  return row.ok() && *row && st->Int64(0) == 0 && st->Int64(1) == 0;
}

// A log whose schema the reading queries understand as it is, opened read-only: a reading command leaves the file
// as it found it (Open would switch its journal to WAL and migrate it), and reads a log it cannot write. Nullopt when
// it is anything else (too old, newer, not a log), which Open handles and names. A log read through a -wal that a
// killed run left (or a running one writes) is checked first: damaged so, it is refused and nothing is folded in.
Result<std::optional<SqliteDb>> OpenReadableReadOnly(const std::string& path) {
  Result<SqliteDb> db = SqliteDb::OpenReadOnly(path);
  if (!db.ok() && db.status().code() == Status::Code::kIOError) return db.status();  // Open would say it less well
  if (!db.ok() || !db->Exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs)).ok())
    return std::optional<SqliteDb>();
  Result<SqliteStmt> st = db->Prepare("PRAGMA user_version");
  if (!st.ok()) return std::optional<SqliteDb>();
  Result<bool> row = st->Step();
  if (!row.ok() || !*row || st->Int64(0) < OldestReadableSchemaVersion() || st->Int64(0) > LatestSchemaVersion())
    return std::optional<SqliteDb>();
  st = SqliteStmt();  // done with before the check
  if (db->wal_held_back()) TF_RETURN_IF_ERROR(CheckNotDamaged(*db).WithContext(path));
  return std::optional<SqliteDb>(std::move(db).value());
}

}  // namespace

Result<std::unique_ptr<TuningLog>> TuningLog::OpenExisting(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("the tuning log's path is empty");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    // A mistyped folder is said as such: "no such tuning log" alone sent the user looking for the file.
    const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
    std::string why;
    if (const std::filesystem::file_type type = std::filesystem::status(folder, ec).type();
        type == std::filesystem::file_type::not_found) {
      why = " (its folder " + folder.string() + " does not exist)";
    } else if (type != std::filesystem::file_type::directory && type != std::filesystem::file_type::none) {
      why = " (" + folder.string() + " is a file, not a folder)";
    }
    return Status::NotFound(path + ": no such tuning log" + why);
  }
  TF_RETURN_IF_ERROR(CheckNotOtherThanAFile(path));
  // Said as it is: otherwise the read-only opens below fail and Open says it cannot write the log.
  TF_RETURN_IF_ERROR(SqliteDb::CheckWalReadable(path));
  if (HoldsNoLog(path)) return Status::NotFound(path + ": no tuning log in it (an empty file or database)");
  TF_ASSIGN_OR_RETURN(std::optional<SqliteDb> db, OpenReadableReadOnly(path));
  if (db) {
    TF_RETURN_IF_ERROR(CheckTables(*db).WithContext(path));
    return std::unique_ptr<TuningLog>(new SqliteTuningLog(std::move(*db), std::nullopt));
  }
  return Open(path);  // a schema too old to read is brought up to date; anything else is refused with the reason
}

}  // namespace tunefleet
