#pragma once

// For tests: a SQLite database whose -wal file holds a transaction that the file itself lacks, with no -shm file
// beside it: what a writer killed before it closed leaves behind (a connection that closes last folds its -wal into
// the file, so the test's connection is told not to).

#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace tunefleet {

// Runs `sql` on the database at `path` so that its changes stay in the -wal file only, removes the -shm file, and
// sets *changed to the rows it changed. Fails the test if any step does.
inline void WriteIntoLeftoverWal(const std::string& path, const std::string& sql, int* changed) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr), SQLITE_OK);
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  *changed = sqlite3_changes(db);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK);
  std::filesystem::remove(path + "-shm");
  ASSERT_GT(std::filesystem::file_size(path + "-wal"), 0u);
}

}  // namespace tunefleet
