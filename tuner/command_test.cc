#include "tuner/command.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

// Every command that opens a tuning log (the readers best, export, report and simulate as well as tune and import)
// exits by this: 1 where the system is at fault and running again may succeed, 2 where the log given is at fault.
TEST(LogOpenExitCode, TheSystemsFaultsAre1AndTheInputs2) {
  EXPECT_EQ(LogOpenExitCode(Status::IOError("t.db: disk I/O error: Input/output error")), 1);
  EXPECT_EQ(LogOpenExitCode(Status::Unavailable("t.db: database is locked")), 1);
  EXPECT_EQ(LogOpenExitCode(Status::Unavailable("a run began to write the log ...; run the command again")), 1);
  EXPECT_EQ(LogOpenExitCode(Status::NotFound("t.db: no such tuning log")), 2);
  EXPECT_EQ(LogOpenExitCode(Status::InvalidArgument("not a tunefleet tuning log (schema version 9)")), 2);
  EXPECT_EQ(LogOpenExitCode(Status::Corruption("t.db: file is not a database")), 2);
  EXPECT_EQ(LogOpenExitCode(Status::PermissionDenied("t.db: a -wal of another user's")), 2);
}

TEST(AboutLog, NamesTheLogOnce) {
  EXPECT_EQ(AboutLog("t.db", "no records"), "t.db: no records");
  EXPECT_EQ(AboutLog("t.db", "t.db: disk I/O error"), "t.db: disk I/O error");
}

}  // namespace
}  // namespace tunefleet
