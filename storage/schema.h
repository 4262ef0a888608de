// The tuning log's schema and its numbered migrations. PRAGMA user_version holds the number of the last
// migration applied; migration N (1-based) moves a database from version N-1 to N, in one transaction.
// Table and column names are a user-facing contract (people query them with sqlite3): never rename,
// only add.
#pragma once

#include "common/status.h"
#include "storage/sqlite_handle.h"

namespace tunefleet {

// The schema version this build writes.
int LatestSchemaVersion();
// The oldest version the reading queries (records, best, devices, tasks, templates) work on as it is: the reading
// commands open logs from it on read-only, without migrating them (a log on a read-only disk stays readable). A
// migration that changes what they read must raise it.
int OldestReadableSchemaVersion();

// Brings `db` up to LatestSchemaVersion(). A database from a newer tunefleet, or an SQLite file holding
// other tables and no tunefleet version, is refused with a clear error (the caller adds the path).
Status MigrateSchema(SqliteDb& db);
// InvalidArgument when `db` is no tuning log this build may open (a negative or newer schema version, or tables
// without a version: another program's database); Corruption when it is no SQLite database. Read-only: checked
// before anything switches the file's journal or migrates it, so that a file refused is left as it was.
Status CheckIsLog(SqliteDb& db);

// Refuses a log that lacks a table or column of its schema version (one dropped by hand or by another tool), naming
// the first missing, so that a command stops at opening the log rather than at its first query. OK for a version
// no build writes (MigrateSchema refuses those).
Status CheckTables(SqliteDb& db);

}  // namespace tunefleet
