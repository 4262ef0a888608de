#include "storage/schema.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace tunefleet {
namespace {

// Every entry is applied once, in order; append only. Times are unix seconds (REAL), costs seconds.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: the initial schema.
      R"sql(
      CREATE TABLE devices (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        vendor TEXT NOT NULL DEFAULT '',
        name TEXT NOT NULL DEFAULT '',
        driver TEXT NOT NULL DEFAULT '',
        opencl_version TEXT NOT NULL DEFAULT '',
        info_json TEXT NOT NULL DEFAULT '{}',
        first_seen REAL NOT NULL
      );
      CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        spec TEXT NOT NULL UNIQUE,
        op TEXT NOT NULL,
        workload TEXT NOT NULL DEFAULT '{}',
        flops REAL NOT NULL DEFAULT 0
      );
      CREATE TABLE templates (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        UNIQUE (name, version)
      );
      CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        started REAL NOT NULL,
        ended REAL,
        state TEXT NOT NULL DEFAULT 'running',
        args TEXT NOT NULL DEFAULT '{}',
        host TEXT NOT NULL DEFAULT ''
      );
      CREATE TABLE records (
        id INTEGER PRIMARY KEY,
        session_id INTEGER REFERENCES sessions(id),
        task_id INTEGER NOT NULL REFERENCES tasks(id),
        template_id INTEGER NOT NULL REFERENCES templates(id),
        device_id INTEGER NOT NULL REFERENCES devices(id),
        config_index INTEGER NOT NULL,
        config TEXT NOT NULL,
        status INTEGER NOT NULL,
        costs TEXT NOT NULL DEFAULT '[]',
        mean_cost REAL NOT NULL DEFAULT 0,
        compile_time REAL NOT NULL DEFAULT 0,
        wall_time REAL NOT NULL DEFAULT 0,
        message TEXT NOT NULL DEFAULT '',
        timestamp REAL NOT NULL
      );
      CREATE INDEX records_by_workload ON records (task_id, template_id, device_id, config_index);
      CREATE INDEX records_best ON records (task_id, template_id, device_id, status, mean_cost);
      CREATE INDEX records_by_session ON records (session_id);
      )sql",
      // 2: the lock file (in LOG.locks/) a tune run holds while it lives, so that a later run can tell a session
      // whose run was killed from one still running; '' for sessions of older runs and of imports.
      R"sql(
      ALTER TABLE sessions ADD COLUMN run_lock TEXT NOT NULL DEFAULT '';
      )sql",
      // 3: records_by_workload ends with the time. An import's check for a record already present (the same config
      // measured at the same time) read every record of the config, so importing N measurements of one config took
      // time in N squared (8,000 took 7.9 s, 2,000 0.7 s). IF EXISTS: a log whose index was dropped by hand.
      R"sql(
      DROP INDEX IF EXISTS records_by_workload;
      CREATE INDEX records_by_workload ON records (task_id, template_id, device_id, config_index, timestamp);
      )sql",
  };
  return kMigrations;
}

Result<int> UserVersion(SqliteDb& db) {
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("PRAGMA user_version"));
  TF_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? static_cast<int>(st.Int64(0)) : 0;
}

Result<int64_t> ForeignTableCount(SqliteDb& db) {
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'"));
  TF_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int64(0) : 0;
}

// The tables of `db` (the migrations' own, in a scratch database), in name order.
Result<std::vector<std::string>> Tables(SqliteDb& db) {
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"));
  std::vector<std::string> out;
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(st.Text(0));
  }
}

// The columns of `table` in `db`, lower-cased (SQLite's names are not case-sensitive), in their order; none when
// the table does not exist. Only the named table is read: another table of the file (a virtual table of a module
// this SQLite lacks, say) is not touched.
Result<std::vector<std::string>> Columns(SqliteDb& db, const std::string& table) {
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid"));
  st.Bind(1, table);
  std::vector<std::string> out;
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    std::string name = st.Text(0);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    out.push_back(std::move(name));
  }
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

// 2 added sessions.run_lock, which only `tune` reads; 3 changed an index.
int OldestReadableSchemaVersion() { return 1; }

Status CheckIsLog(SqliteDb& db) {
  // The version and the tables in one statement, one snapshot: read apart, a version 0 and the tables of another
  // process's migration committed between the two reads looked like another program's database. Reading them also
  // tells a non-database file apart (SQLITE_NOTADB → Corruption).
  TF_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("SELECT (SELECT user_version FROM pragma_user_version), (SELECT "
                                                "count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%')"));
  TF_ASSIGN_OR_RETURN(bool row, st.Step());
  const int version = row ? static_cast<int>(st.Int64(0)) : 0;
  const int64_t tables = row ? st.Int64(1) : 0;
  if (version < 0) {
    return Status::InvalidArgument("not a tunefleet tuning log (schema version " + std::to_string(version) + ")");
  }
  if (version > LatestSchemaVersion()) {
    return Status::InvalidArgument("schema version " + std::to_string(version) +
                                   " is newer than this tunefleet understands (" +
                                   std::to_string(LatestSchemaVersion()) + "); upgrade tunefleet");
  }
  if (version == 0 && tables > 0) {
    return Status::InvalidArgument("not a tunefleet tuning log (it holds tables but no schema version)");
  }
  return Status::OK();
}

Status MigrateSchema(SqliteDb& db) {
  TF_RETURN_IF_ERROR(CheckIsLog(db));
  TF_ASSIGN_OR_RETURN(int version, UserVersion(db));
  if (version == LatestSchemaVersion()) return Status::OK();
  // Each migration re-reads the version under the write lock: another process may have migrated meanwhile.
  for (;;) {
    Status s = InTransaction(db, [&]() -> Status {
      TF_ASSIGN_OR_RETURN(int v, UserVersion(db));
      if (v >= LatestSchemaVersion()) return Status::OK();
      if (v < 0)
        return Status::InvalidArgument("not a tunefleet tuning log (schema version " + std::to_string(v) + ")");
      if (v == 0) {
        TF_ASSIGN_OR_RETURN(int64_t others, ForeignTableCount(db));
        if (others > 0) {
          return Status::InvalidArgument("not a tunefleet tuning log (it holds tables but no schema version)");
        }
      }
      TF_RETURN_IF_ERROR(db.Exec(Migrations()[v]));
      return db.Exec("PRAGMA user_version = " + std::to_string(v + 1));
    });
    TF_RETURN_IF_ERROR(s);
    TF_ASSIGN_OR_RETURN(version, UserVersion(db));
    if (version >= LatestSchemaVersion()) return Status::OK();
  }
}

Status CheckTables(SqliteDb& db) {
  TF_ASSIGN_OR_RETURN(int version, UserVersion(db));
  if (version < 1 || version > LatestSchemaVersion()) return Status::OK();
  // What the migrations up to `version` make, in a scratch database of SQLite's memory.
  TF_ASSIGN_OR_RETURN(SqliteDb scratch, SqliteDb::Open(":memory:"));
  for (int v = 0; v < version; ++v) TF_RETURN_IF_ERROR(scratch.Exec(Migrations()[v]));
  TF_ASSIGN_OR_RETURN(auto tables, Tables(scratch));
  for (const std::string& table : tables) {
    TF_ASSIGN_OR_RETURN(auto want, Columns(scratch, table));
    TF_ASSIGN_OR_RETURN(auto have_list, Columns(db, table));
    if (have_list.empty()) {
      return Status::InvalidArgument("not a whole tunefleet tuning log: it lacks the table '" + table + "'");
    }
    const std::set<std::string> have(have_list.begin(), have_list.end());
    for (const std::string& column : want) {
      if (!have.count(column)) {
        return Status::InvalidArgument("not a whole tunefleet tuning log: it lacks the column '" + table + "." +
                                       column + "'");
      }
    }
  }
  return Status::OK();
}

}  // namespace tunefleet
