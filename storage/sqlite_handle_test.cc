#include "storage/sqlite_handle.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(SqliteHandleTest, GivenAnInMemoryDb_WeShouldBindStepAndReadColumns) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(db->Exec("CREATE TABLE t (a INTEGER, b REAL, c TEXT)").ok());
  auto ins = db->Prepare("INSERT INTO t VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(ins.ok());
  ins->Bind(1, int64_t{7}).Bind(2, 0.5).Bind(3, std::string_view("x\0y", 3));
  ASSERT_TRUE(ins->Run().ok());
  auto sel = db->Prepare("SELECT a, b, c FROM t");
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(sel->Step().value());
  EXPECT_EQ(sel->Int64(0), 7);
  EXPECT_DOUBLE_EQ(sel->Double(1), 0.5);
  EXPECT_EQ(sel->Text(2), std::string("x\0y", 3));
  EXPECT_FALSE(sel->Step().value());
}

TEST(SqliteHandleTest, GivenAFailingBody_TransactionShouldRollBack) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("CREATE TABLE t (a INTEGER)").ok());
  Status s = InTransaction(*db, [&]() -> Status {
    TF_RETURN_IF_ERROR(db->Exec("INSERT INTO t VALUES (1)"));
    return Status::Internal("boom");
  });
  EXPECT_FALSE(s.ok());
  auto sel = db->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(sel->Step().value());
  EXPECT_EQ(sel->Int64(0), 0);
}

TEST(SqliteHandleTest, GivenBadSql_PrepareShouldReturnAnError) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok());
  auto st = db->Prepare("SELEKT 1");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("syntax"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
