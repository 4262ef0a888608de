#pragma once

// For tests: a SQLite database whose -wal file holds a transaction that the file itself lacks, with no -shm file
// beside it: what a writer killed before it closed leaves behind (a connection that closes last folds its -wal into
// the file, so the test's connection is told not to).

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace tunefleet {

// Runs `sql` on the database at `path` so that its changes stay in the -wal file only, removes the -shm file, and
// sets *changed to the rows it changed. Fails the test if any step does.
inline void WriteIntoLeftoverWal(const std::string& path, const std::string& sql, int* changed) {
  {
    sqlite3* raw = nullptr;
    const int opened = sqlite3_open(path.c_str(), &raw);
    // Owned from here, also when the open failed (SQLite allocates a handle anyway) or an assertion returns early;
    // closed at the end of this block, before the -shm is removed (not a checkpoint: NO_CKPT_ON_CLOSE).
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
    ASSERT_EQ(opened, SQLITE_OK);
    ASSERT_EQ(sqlite3_db_config(db.get(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db.get(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    *changed = sqlite3_changes(db.get());
  }
  std::filesystem::remove(path + "-shm");
  ASSERT_GT(std::filesystem::file_size(path + "-wal"), 0u);
}

}  // namespace tunefleet
