#include "storage/tuning_log.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "proto/tunefleet.pb.h"
#include "storage/tuning_log_testing.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;


TEST_F(TuningLogTest, GivenARecord_WeShouldReadBackEveryField) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  int64_t session = log->BeginSession(R"({"argv":["tune"]})", "").value();
  RecordRow in = Rec(42, 0, 1e-3);
  in.session_id = session;
  int64_t id = log->AddRecord(in).value();

  auto rows = log->Records(task_, tmpl_, dev_).value();
  ASSERT_EQ(rows.size(), 1u);
  const RecordRow& out = rows[0];
  EXPECT_EQ(out.id, id);
  EXPECT_EQ(out.session_id, session);
  EXPECT_EQ(out.config_index, 42u);
  EXPECT_EQ(out.config, in.config);
  EXPECT_EQ(out.costs, in.costs);
  EXPECT_DOUBLE_EQ(out.mean_cost, in.mean_cost);
  EXPECT_DOUBLE_EQ(out.compile_time, 0.25);
  EXPECT_DOUBLE_EQ(out.wall_time, 0.5);
  EXPECT_DOUBLE_EQ(out.timestamp, 1700000000.5);
  EXPECT_TRUE(log->EndSession(session, "done").ok());
}

TEST_F(TuningLogTest, GivenTheSameDeviceTaskAndTemplateTwice_WeShouldGetTheSameIds) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  EXPECT_EQ(log->UpsertDevice(Device("gpu0")).value(), dev_);
  EXPECT_EQ(log->UpsertTask("gemm:64,64,64:float32", "gemm", "{}", 1).value(), task_);
  EXPECT_EQ(log->UpsertTemplate("gemm.buffer", 1).value(), tmpl_);
  EXPECT_NE(log->UpsertTemplate("gemm.buffer", 2).value(), tmpl_);
  EXPECT_EQ(log->Devices().value().size(), 1u);
  EXPECT_EQ(log->Templates().value().size(), 2u);
  auto devices = log->Devices().value();
  EXPECT_EQ(devices[0].name, "gpu0");
  EXPECT_NE(devices[0].info_json.find("\"max_work_group_size\""), std::string::npos);
}

TEST_F(TuningLogTest, GivenAWorkloadEdit_WeShouldStoreItOrLeaveTheRowAndRefuseAMissingTask) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  std::string seen;
  ASSERT_TRUE(log->EditTaskWorkload(task_, [&](const std::string& w) -> std::optional<std::string> {
                   seen = w;
                   return R"({"count":6})";
                 }).ok());
  EXPECT_EQ(seen, R"({"M":64})");
  EXPECT_EQ(log->Tasks().value()[0].workload, R"({"count":6})");
  ASSERT_TRUE(log->EditTaskWorkload(task_, [](const std::string&) { return std::optional<std::string>(); }).ok());
  EXPECT_EQ(log->Tasks().value()[0].workload, R"({"count":6})");
  const Status missing =
      log->EditTaskWorkload(task_ + 100, [](const std::string&) { return std::optional<std::string>("{}"); });
  EXPECT_EQ(missing.code(), Status::Code::kNotFound) << missing.ToString();
}

TEST_F(TuningLogTest, GivenAClosedLog_WeShouldFindItsRecordsAfterReopening) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    ASSERT_TRUE(log->AddRecord(Rec(1, 0, 2e-3)).ok());
    ASSERT_TRUE(log->AddRecord(Rec(2, 4, 0)).ok());
  }
  auto log = OpenOrDie();
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 2u);
  EXPECT_EQ(log->Tasks().value().at(0).spec, "gemm:64,64,64:float32");
}

TEST_F(TuningLogTest, GivenSuccessesAndFailures_BestShouldPickTheFastestSuccess) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 3e-3)).ok());
  int64_t fastest = log->AddRecord(Rec(2, 0, 1e-3)).value();
  ASSERT_TRUE(log->AddRecord(Rec(3, 4, 0)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(4, 0, 2e-3)).ok());

  auto best = log->Best().value();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].record.id, fastest);
  EXPECT_EQ(best[0].task, "gemm:64,64,64:float32");
  EXPECT_EQ(best[0].template_name, "gemm.buffer");
  EXPECT_EQ(best[0].device_fingerprint, "fp-gpu0");
  EXPECT_NEAR(best[0].gflops(), 2.0 * 64 * 64 * 64 / 1.05e-3 / 1e9, 1e-9);
}

// A config measured several times (tune --confirm, --fresh passes) stands as its lower median: config 1's one lucky
// run (0.5 ms of 0.5, 3 and 4 ms) does not beat config 2's steady 1 ms; of two results the faster counts.
TEST_F(TuningLogTest, GivenAConfigMeasuredSeveralTimes_BestShouldRankItByItsLowerMedian) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 0.5e-3)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(2, 0, 1e-3)).ok());
  const int64_t median_of_1 = log->AddRecord(Rec(1, 0, 3e-3)).value();
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 4e-3)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(1, 4, 0)).ok());  // a failure is no result of the median
  const int64_t faster_of_3 = log->AddRecord(Rec(3, 0, 2e-3)).value();
  ASSERT_TRUE(log->AddRecord(Rec(3, 0, 5e-3)).ok());

  auto ranked = log->RankedSuccesses(task_, tmpl_, dev_).value();
  std::vector<std::pair<uint64_t, int64_t>> got;
  for (const auto& r : ranked) got.emplace_back(r.record.config_index, r.record.id);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, 2u);
  EXPECT_EQ(got[1], std::make_pair(uint64_t{3}, faster_of_3));
  EXPECT_EQ(got[2], std::make_pair(uint64_t{1}, median_of_1));
  auto best = log->Best().value();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].record.config_index, 2u);
}

// An id of 0 matches any; the others are compared (each built into the query only when given).
TEST_F(TuningLogTest, GivenRecordsOfTwoTasksAndTwoDevices_RecordsShouldFilterByEveryIdGiven) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  const int64_t other_task =
      log->UpsertTask("gemm:32,32,32:float32", "gemm", R"({"M":32})", 2.0 * 32 * 32 * 32).value();
  const int64_t other_device = log->UpsertDevice(Device("gpu1")).value();
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 1e-3)).ok());
  RecordRow r = Rec(2, 0, 1e-3);
  r.task_id = other_task;
  ASSERT_TRUE(log->AddRecord(r).ok());
  r = Rec(3, 0, 1e-3);
  r.device_id = other_device;
  ASSERT_TRUE(log->AddRecord(r).ok());
  auto indices = [&](int64_t task, int64_t tmpl, int64_t device) {
    std::vector<uint64_t> out;
    const Result<std::vector<RecordRow>> rows = log->Records(task, tmpl, device);  // kept: value() refers into it
    for (const RecordRow& row : rows.value()) out.push_back(row.config_index);
    return out;
  };
  EXPECT_EQ(indices(0, 0, 0), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(indices(task_, tmpl_, 0), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(indices(task_, tmpl_, other_device), (std::vector<uint64_t>{3}));
  EXPECT_EQ(indices(other_task, 0, 0), (std::vector<uint64_t>{2}));
  EXPECT_EQ(indices(0, tmpl_, dev_), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(indices(other_task, tmpl_, other_device).empty());
  // What a warm start's refresh counts before it reads: the template's records of other tasks or devices.
  EXPECT_EQ(log->CountOthersOfTemplate(tmpl_, task_, dev_).value(), 2);
  EXPECT_EQ(log->CountOthersOfTemplate(tmpl_, other_task, dev_).value(), 2);
  EXPECT_EQ(log->CountOthersOfTemplate(tmpl_, other_task, other_device).value(), 3);
  const int64_t other_template = log->UpsertTemplate("gemm.image2d", 1).value();
  EXPECT_EQ(log->CountOthersOfTemplate(other_template, task_, dev_).value(), 0);
}

// `best --task`: the best rows of that task alone, as Best() gives them for it.
TEST_F(TuningLogTest, GivenATaskSpec_BestShouldGiveThatTasksRowsAlone) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  const int64_t other_task =
      log->UpsertTask("gemm:32,32,32:float32", "gemm", R"({"M":32})", 2.0 * 32 * 32 * 32).value();
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 2e-3)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(2, 0, 1e-3)).ok());
  RecordRow r = Rec(3, 0, 0.5e-3);
  r.task_id = other_task;
  ASSERT_TRUE(log->AddRecord(r).ok());
  auto all = log->Best().value();
  ASSERT_EQ(all.size(), 2u);
  auto one = log->Best("gemm:64,64,64:float32").value();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].record.config_index, 2u);
  EXPECT_EQ(one[0].task, "gemm:64,64,64:float32");
  auto other = log->Best("gemm:32,32,32:float32").value();
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].record.config_index, 3u);
  EXPECT_TRUE(log->Best("gemm:16,16,16:float32").value().empty());
}

// best passes over the fastest records that are not in the space one at a time, and stops at the first that is:
// the rows after it are never read.
TEST_F(TuningLogTest, GivenAVisitorThatStops_VisitRankedSuccessesShouldGiveNoFurtherRow) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(log->AddRecord(Rec(i, 0, i * 1e-3)).ok());
  std::vector<uint64_t> seen;
  Status s = log->VisitRankedSuccesses(task_, tmpl_, dev_, [&seen](BestRow&& row) {
    seen.push_back(row.record.config_index);
    return seen.size() < 2;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2}));
}

TEST_F(TuningLogTest, GivenSuccessesOfTwoDevices_RankedSuccessesShouldListOneGroupFastestFirst) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 3e-3)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(2, 4, 0)).ok());  // a failure: not a success
  ASSERT_TRUE(log->AddRecord(Rec(3, 0, 1e-3)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(6, 0, 2e-3)).ok());
  proto::DeviceInfo other;
  other.set_fingerprint("fp-other");
  RecordRow on_other = Rec(4, 0, 0.5e-3);  // faster, on another device: another group
  on_other.device_id = log->UpsertDevice(other).value();
  ASSERT_TRUE(log->AddRecord(on_other).ok());
  ASSERT_TRUE(log->AddRecord(Rec(5, 0, 2e-3)).ok());  // as fast as config 6, later

  auto ranked = log->RankedSuccesses(task_, tmpl_, dev_).value();
  std::vector<uint64_t> got;
  for (const auto& r : ranked) got.push_back(r.record.config_index);
  EXPECT_EQ(got, (std::vector<uint64_t>{3, 6, 5, 1}));
  for (const auto& r : ranked) EXPECT_EQ(r.device_fingerprint, "fp-gpu0");
  auto best = log->Best().value();
  ASSERT_EQ(best.size(), 2u);
  for (const auto& b : best) {
    if (b.record.device_id == dev_) {
      EXPECT_EQ(b.record.id, ranked[0].record.id);
    }
  }
  EXPECT_EQ(log->RankedSuccesses(task_, tmpl_, on_other.device_id).value().size(), 1u);
}

// A unit whose every record failed has no Best row; UnitsWithoutSuccess names it with its failures. A unit with one
// success among failures, and a damaged failure record, are not counted.
TEST_F(TuningLogTest, GivenAUnitWhoseEveryRecordFailed_UnitsWithoutSuccessShouldNameItAndCountItsFailures) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  ASSERT_TRUE(log->AddRecord(Rec(1, 4, 0)).ok());
  ASSERT_TRUE(log->AddRecord(Rec(2, 0, 1e-3)).ok());
  const int64_t failing_tmpl = log->UpsertTemplate("gemm.image2d", 1).value();
  for (uint64_t i = 1; i <= 3; ++i) {
    RecordRow r = Rec(i, 2, 0);
    r.template_id = failing_tmpl;
    ASSERT_TRUE(log->AddRecord(r).ok());
  }
  EXPECT_EQ(log->Best().value().size(), 1u);
  auto failed = log->UnitsWithoutSuccess().value();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].task, "gemm:64,64,64:float32");
  EXPECT_EQ(failed[0].template_name, "gemm.image2d");
  EXPECT_EQ(failed[0].device_name, "gpu0");
  EXPECT_EQ(failed[0].device_fingerprint, "fp-gpu0");
  EXPECT_EQ(failed[0].failures, 3);
  ExecRaw("UPDATE records SET status = 99 WHERE template_id = " + std::to_string(failing_tmpl) +
          " AND config_index = 1");  // damaged: no tuner writes it
  EXPECT_EQ(log->UnitsWithoutSuccess().value()[0].failures, 2);
}

TEST_F(TuningLogTest, GivenALogThatLacksATableOrColumn_OpeningShouldNameWhatIsMissing) {
  { OpenOrDie(); }
  ExecRaw("ALTER TABLE sessions DROP COLUMN run_lock");
  for (bool read_only : {true, false}) {
    auto log = read_only ? TuningLog::OpenExisting(path_) : TuningLog::Open(path_);
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().message(), path_ + ": not a whole tunefleet tuning log: it lacks the column "
                                              "'sessions.run_lock'");
  }
  ExecRaw("DROP TABLE records");
  auto log = TuningLog::OpenExisting(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), path_ + ": not a whole tunefleet tuning log: it lacks the table 'records'");
}

// What a user or another tool may add to a log without breaking a query of it: a table of its own, a virtual table of
// a module this SQLite lacks (an extension's), a column renamed in another case (SQLite's names are not
// case-sensitive).
TEST_F(TuningLogTest, GivenTablesOfOthersOrACaseChangedName_OpeningShouldStillWork) {
  { OpenOrDie(); }
  ExecRaw("CREATE TABLE notes (text TEXT); ALTER TABLE tasks RENAME COLUMN flops TO FLOPS; "
          "PRAGMA writable_schema = ON; "
          "INSERT INTO sqlite_schema VALUES ('table', 'archive', 'archive', 0, "
          "'CREATE VIRTUAL TABLE archive USING no_such_module(x)')");
  for (bool read_only : {true, false}) {
    auto log = read_only ? TuningLog::OpenExisting(path_) : TuningLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_TRUE((*log)->Best().ok());
  }
}

TEST_F(TuningLogTest, GivenASchemaOneLog_OpeningShouldNotAskForTheColumnsOfLaterVersions) {
  { OpenOrDie(); }
  ExecRaw("ALTER TABLE sessions DROP COLUMN run_lock; PRAGMA user_version = 1");
  EXPECT_TRUE(TuningLog::OpenExisting(path_).ok());
}

TEST_F(TuningLogTest, GivenARecordAlreadyPresent_AddRecordsUnlessPresentShouldAddNothing) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  RecordRow r = Rec(7, 0, 2e-3);
  r.timestamp = 1700000000.5;
  auto first = log->AddRecordsUnlessPresent({r});
  ASSERT_TRUE(first.ok() && first->size() == 1 && first->at(0).has_value()) << first.status().ToString();
  auto again = OpenOrDie()->AddRecordsUnlessPresent({r});  // another connection, as another process would be
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 1u);
  EXPECT_FALSE(again->at(0).has_value());
  // In one call: a measurement of other costs and one of another time are added, the present one and a second copy
  // of a row of the call itself are not.
  RecordRow other_costs = r;
  other_costs.costs = {2e-3, 2.5e-3};
  RecordRow other_time = r;
  other_time.timestamp += 1;
  auto batch = log->AddRecordsUnlessPresent({other_costs, r, other_time, other_time});
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 4u);
  EXPECT_TRUE(batch->at(0).has_value());
  EXPECT_FALSE(batch->at(1).has_value());
  EXPECT_TRUE(batch->at(2).has_value());
  EXPECT_FALSE(batch->at(3).has_value());
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 3u);
}

// A log edited by hand or by another tool may hold anything; readers leave out what no tuner writes and count it.
TEST_F(TuningLogTest, GivenRecordsNoTunerWrites_ReadersShouldLeaveThemOutAndCountThem) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    for (uint64_t i = 1; i <= 7; ++i) ASSERT_TRUE(log->AddRecord(Rec(i, 0, 2e-3)).ok());
    ASSERT_TRUE(log->AddRecord(Rec(8, 0, 3e-3)).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExecRaw(
      "UPDATE records SET mean_cost = 'NaN' WHERE config_index = 1;"     // text compares above any number
      "UPDATE records SET mean_cost = 1e-300 WHERE config_index = 2;"    // below the least an agent reports
      "UPDATE records SET mean_cost = 9e999 WHERE config_index = 3;"     // infinite
      "UPDATE records SET status = 4294967296 WHERE config_index = 4;"   // would wrap to 0 (OK) as an int
      "UPDATE records SET status = 'ok' WHERE config_index = 5;"
      "UPDATE records SET config_index = -1 WHERE config_index = 6;"
      "UPDATE templates SET version = 4294967297;"));                    // would wrap to 1
  {
    auto log = OpenOrDie();
    RecordRow orphan = Rec(9, 0, 1e-3);  // the fastest, of a device the log lacks
    ASSERT_TRUE(log->AddRecord(orphan).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("UPDATE records SET device_id = 77 WHERE config_index = 9"));
  auto log = TuningLog::OpenExisting(path_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->DamagedRecords().value(), 7);
  auto rows = (*log)->Records(0, 0, 0).value();
  ASSERT_EQ(rows.size(), 2u);  // the orphan is left out too, as the warning that counts it says
  EXPECT_EQ(rows[0].config_index, 7u);
  EXPECT_EQ(rows[1].config_index, 8u);
  EXPECT_EQ((*log)->MeasuredIndices(task_, tmpl_, 0).value(), (std::vector<uint64_t>{7, 8}));
  auto best = (*log)->Best().value();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].record.config_index, 7u);
  EXPECT_EQ(best[0].template_version, -1);  // no template's version, not 1
  EXPECT_EQ((*log)->Templates().value()[0].version, -1);
}

TEST_F(TuningLogTest, GivenALogInRollbackJournalMode_ReadingItShouldLeaveTheFileByteForByte) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    ASSERT_TRUE(log->AddRecord(Rec(1, 0, 2e-3)).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("PRAGMA journal_mode = DELETE"));  // as a copy made by another tool may be
  auto bytes = [&] {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  {
    auto log = TuningLog::OpenExisting(path_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_EQ((*log)->Best().value().size(), 1u);
    EXPECT_EQ((*log)->Records(0, 0, 0).value().size(), 1u);
    EXPECT_FALSE((*log)->AddRecord(Rec(2, 0, 1e-3)).ok());  // read-only
  }
  EXPECT_EQ(bytes(), before);  // Open would have switched it to WAL
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
}

TEST_F(TuningLogTest, GivenMeasuredConfigs_WeShouldListTheirIndicesForResume) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  for (uint64_t i : {7, 3, 7, 11}) ASSERT_TRUE(log->AddRecord(Rec(i, 0, 1e-3)).ok());
  EXPECT_EQ(log->MeasuredIndices(task_, tmpl_, dev_).value(), (std::vector<uint64_t>{3, 7, 11}));
  EXPECT_EQ(log->MeasuredIndices(task_, tmpl_, 0).value().size(), 3u);
}

TEST_F(TuningLogTest, GivenARecordOfAnUnknownTask_WeShouldRefuseItByForeignKey) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  RecordRow r = Rec(1, 0, 1e-3);
  r.task_id = 999;
  auto id = log->AddRecord(r);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find(path_), std::string::npos);
}

TEST_F(TuningLogTest, GivenAnOpenLog_WeShouldBeInWalModeAtTheLatestSchema) {
  auto log = OpenOrDie();
  EXPECT_EQ(QueryRaw("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryRaw("PRAGMA user_version"), "3");
  EXPECT_EQ(QueryRaw("SELECT count(*) FROM sqlite_schema WHERE name IN "
                     "('devices','tasks','templates','sessions','records')"),
            "5");
}

// Schema 3 added the time to records_by_workload, so that the check of an import for a record already present does
// not read every record of its config. A log of schema 2 (its index as it was) gets the new index when opened for
// writing, and its records stay.
TEST_F(TuningLogTest, GivenALogOfSchema2_WritingShouldIndexRecordsByTheirTime) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    ASSERT_TRUE(log->AddRecord(Rec(7, 0, 1e-3)).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("DROP INDEX records_by_workload; CREATE INDEX records_by_workload ON records "
                                  "(task_id, template_id, device_id, config_index); PRAGMA user_version = 2"));
  const std::string columns = "SELECT group_concat(name, ',') FROM (SELECT name FROM "
                              "pragma_index_info('records_by_workload') ORDER BY seqno)";
  ASSERT_EQ(QueryRaw(columns), "task_id,template_id,device_id,config_index");
  auto log = OpenOrDie();
  EXPECT_EQ(QueryRaw("PRAGMA user_version"), "3");
  EXPECT_EQ(QueryRaw(columns), "task_id,template_id,device_id,config_index,timestamp");
  EXPECT_EQ(QueryRaw("SELECT count(*) FROM records"), "1");
  RecordRow later = Rec(7, 0, 1e-3);  // the same config measured again, later
  later.timestamp += 60;
  auto added = log->AddRecordsUnlessPresent({later, later});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  ASSERT_EQ(added->size(), 2u);
  EXPECT_TRUE(added->at(0).has_value());
  EXPECT_FALSE(added->at(1).has_value());
}

// Schema 2 added sessions.run_lock. A log of schema 1 (the column dropped again here) is read as it is by the
// reading commands, so one that cannot be written stays readable, and brought up to date, its sessions kept, by the
// writing ones.
TEST_F(TuningLogTest, GivenALogOfSchema1_ReadingShouldLeaveItAndWritingShouldAddTheRunLockColumn) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
    ASSERT_TRUE(log->BeginSession(R"({"argv":["tune"]})", "").ok());
    ASSERT_TRUE(log->AddRecord(Rec(7, 0, 1e-3)).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("ALTER TABLE sessions DROP COLUMN run_lock; PRAGMA user_version = 1"));
  ASSERT_EQ(QueryRaw("SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'run_lock'"), "0");
  {
    auto read = TuningLog::OpenExisting(path_);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    auto best = (*read)->Best();
    ASSERT_TRUE(best.ok()) << best.status().ToString();
    ASSERT_EQ(best->size(), 1u);
    EXPECT_EQ((*best)[0].record.config_index, 7u);
    EXPECT_EQ(QueryRaw("PRAGMA user_version"), "1");
  }
  auto log = OpenOrDie();
  EXPECT_EQ(QueryRaw("PRAGMA user_version"), "3");
  auto running = log->RunningSessions();
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].id, 1);
  EXPECT_EQ((*running)[0].run_lock, "");
  EXPECT_EQ(log->BeginSession("{}", "abc.lock").value(), 2);
  EXPECT_EQ(QueryRaw("SELECT run_lock FROM sessions WHERE id = 2"), "abc.lock");
}

// A session whose run died is ended at its last record's time (its start without records), and only while running.
TEST_F(TuningLogTest, GivenRunningSessions_EndKilledSessionShouldEndOnlyARunningOneAtItsLastRecord) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  const int64_t killed = log->BeginSession("{}", "k.lock").value();
  const int64_t done = log->BeginSession("{}", "d.lock").value();
  const int64_t empty = log->BeginSession("{}", "e.lock").value();
  for (double t : {1700000010.25, 1700000005.0}) {
    RecordRow r = Rec(static_cast<uint64_t>(t) % 100, 0, 1e-3);
    r.session_id = killed;
    r.timestamp = t;
    ASSERT_TRUE(log->AddRecord(r).ok());
  }
  ASSERT_TRUE(log->EndSession(done, "done").ok());
  auto running = log->RunningSessions().value();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].id, killed);
  EXPECT_EQ(running[0].run_lock, "k.lock");
  EXPECT_EQ(running[1].id, empty);

  EXPECT_TRUE(log->EndKilledSession(killed).value());
  EXPECT_EQ(QueryRaw("SELECT state || ' ' || ended FROM sessions WHERE id = " + std::to_string(killed)),
            "killed 1700000010.25");
  EXPECT_TRUE(log->EndKilledSession(empty).value());
  EXPECT_EQ(QueryRaw("SELECT ended = started FROM sessions WHERE id = " + std::to_string(empty)), "1");
  EXPECT_FALSE(log->EndKilledSession(killed).value());  // no longer running
  EXPECT_FALSE(log->EndKilledSession(done).value());
  EXPECT_EQ(QueryRaw("SELECT state FROM sessions WHERE id = " + std::to_string(done)), "done");
  EXPECT_TRUE(log->RunningSessions().value().empty());
}

TEST_F(TuningLogTest, GivenTwoConnectionsWritingAtOnce_WeShouldKeepEveryRecord) {
  {
    auto log = OpenOrDie();
    MakeWorld(*log);
  }
  constexpr int kPerWriter = 100;
  auto writer = [&](uint64_t base, bool* ok) {
    auto log = TuningLog::Open(path_);
    *ok = log.ok();
    if (!log.ok()) return;
    // Each writer upserts the same rows too, as two tuners on one workload would.
    *ok = (*log)->UpsertTask("gemm:64,64,64:float32", "gemm", "{}", 1).ok();
    for (int i = 0; i < kPerWriter && *ok; ++i) *ok = (*log)->AddRecord(Rec(base + i, 0, 1e-3)).ok();
  };
  bool ok_a = false, ok_b = false;
  std::thread a(writer, 0, &ok_a), b(writer, 1000, &ok_b);
  a.join();
  b.join();
  EXPECT_TRUE(ok_a);
  EXPECT_TRUE(ok_b);
  auto log = OpenOrDie();
  EXPECT_EQ(log->Records(0, 0, 0).value().size(), 2u * kPerWriter);
}

// A reader (export, report, best) reads the tables one after another while a `tune` may write: within a held
// snapshot it must not meet a record whose task row was committed after it read the tasks.
TEST_F(TuningLogTest, GivenAReadSnapshotHeld_ReadsShouldNotSeeWhatAnotherWriterCommitsUntilItIsReleased) {
  auto writer = OpenOrDie();
  MakeWorld(*writer);
  ASSERT_TRUE(writer->AddRecord(Rec(1, 0, 1e-3)).ok());
  auto reader = TuningLog::OpenExisting(path_);  // read-only, as the reading commands open a log
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  {
    Result<ReadSnapshot> snapshot = (*reader)->HoldReadSnapshot();
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    ASSERT_EQ((*reader)->Tasks().value().size(), 1u);
    // Another process adds a task and a record of it between the reader's two reads.
    const int64_t other = writer->UpsertTask("gemm:32,32,32:float32", "gemm", "{}", 2.0 * 32 * 32 * 32).value();
    RecordRow r = Rec(2, 0, 2e-3);
    r.task_id = other;
    ASSERT_TRUE(writer->AddRecord(r).ok());
    {
      Result<ReadSnapshot> inner = (*reader)->HoldReadSnapshot();  // held again within: the same snapshot
      ASSERT_TRUE(inner.ok()) << inner.status().ToString();
      EXPECT_EQ((*reader)->Records(0, 0, 0).value().size(), 1u);
    }
    EXPECT_EQ((*reader)->Records(0, 0, 0).value().size(), 1u);  // the inner release did not end the outer
    EXPECT_EQ((*reader)->Tasks().value().size(), 1u);
  }
  EXPECT_EQ((*reader)->Records(0, 0, 0).value().size(), 2u);
  EXPECT_EQ((*reader)->Tasks().value().size(), 2u);
}

TEST_F(TuningLogTest, GivenAPathInAMissingDirectory_OpenShouldFailNamingThePath) {
  std::string bad = (dir_ / "no-such-dir" / "log.db").string();
  auto log = TuningLog::Open(bad);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find(bad), std::string::npos) << log.status().ToString();
}

TEST_F(TuningLogTest, GivenAFileThatIsNotADatabase_OpenShouldReportCorruptionNamingThePath) {
  std::ofstream(path_) << std::string(4096, 'x');
  auto log = TuningLog::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), Status::Code::kCorruption);
  EXPECT_NE(log.status().message().find(path_), std::string::npos) << log.status().ToString();
}

TEST_F(TuningLogTest, GivenAnEmptyFileOrAnEmptyDatabase_OpenExistingShouldRefuseItAndLeaveItAsItIs) {
  { std::ofstream(path_).flush(); }
  auto log = TuningLog::OpenExisting(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(log.status().message(), path_ + ": no tuning log in it (an empty file or database)");
  EXPECT_EQ(std::filesystem::file_size(path_), 0u);
  ASSERT_NO_FATAL_FAILURE(ExecRaw("PRAGMA page_size = 4096; VACUUM"));  // a database with a page but no table
  const auto size = std::filesystem::file_size(path_);
  EXPECT_FALSE(TuningLog::OpenExisting(path_).ok());
  EXPECT_EQ(std::filesystem::file_size(path_), size);
  EXPECT_TRUE(TuningLog::Open(path_).ok());  // the writing commands make a log of it
}

TEST_F(TuningLogTest, GivenANegativeSchemaVersion_OpenShouldRefuseItNotCrash) {
  { auto log = OpenOrDie(); }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("PRAGMA user_version = -1"));
  auto log = TuningLog::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("not a tunefleet tuning log (schema version -1)"), std::string::npos)
      << log.status().ToString();
}

TEST_F(TuningLogTest, GivenALogFromANewerTunefleet_OpenShouldRefuseIt) {
  { auto log = OpenOrDie(); }
  ASSERT_NO_FATAL_FAILURE(ExecRaw("PRAGMA user_version = 99"));
  auto log = TuningLog::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("newer"), std::string::npos) << log.status().ToString();
  EXPECT_NE(log.status().message().find(path_), std::string::npos);
}

TEST_F(TuningLogTest, GivenAnotherApplicationsDatabase_OpenShouldRefuseIt) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE contacts (name TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const auto bytes = [&] {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  auto log = TuningLog::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("not a tunefleet tuning log (it holds tables but no schema version)"),
            std::string::npos)
      << log.status().ToString();
  // Left as it was: it was switched to WAL (its header's bytes 18-19 from 1 to 2) before it was refused.
  auto read = TuningLog::OpenExisting(path_);
  EXPECT_FALSE(read.ok());
  EXPECT_EQ(bytes(), before);
}

TEST_F(TuningLogTest, GivenSeveralProcessesCreatingOneLogAtOnce_EachShouldOpenIt) {
  // Switching a new file to WAL while another process does the same failed at once with "database is locked"
  // (SQLite calls no busy handler there): seen in about 1 of 100 pairs of runs started together. 50 rounds of 4.
  for (int round = 0; round < 50; ++round) {
    const std::string path = (dir_ / ("new" + std::to_string(round) + ".db")).string();
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(go[1]);
        char c;
        (void)!read(go[0], &c, 1);  // all start when the pipe closes
        auto log = TuningLog::Open(path);
        if (!log.ok()) fprintf(stderr, "%s\n", log.status().ToString().c_str());
        _exit(log.ok() && (*log)->BeginSession("{}", "").ok() ? 0 : 1);
      }
      children.push_back(pid);
    }
    close(go[0]);
    close(go[1]);
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

TEST_F(TuningLogTest, GivenALogWithTwoNames_OpenShouldRefuseItNamingTheHardLinks) {
  { OpenOrDie(); }
  const std::string other = (dir_ / "other.db").string();
  fs::create_hard_link(path_, other);
  for (const std::string& p : {path_, other}) {
    auto log = TuningLog::Open(p);
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(log.status().message().find(p + ": the file has 2 names (hard links)"), std::string::npos)
        << log.status().ToString();
  }
  // A symbolic link is one more path to the same name: it is opened.
  fs::remove(other);
  fs::create_symlink(path_, other);
  EXPECT_TRUE(TuningLog::Open(other).ok());
}

TEST_F(TuningLogTest, GivenTheLogRemovedOrReplacedWhileOpen_TheNextWriteShouldFailAndSaySo) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  ASSERT_TRUE(log->AddRecord(Rec(1, 0, 1e-3)).ok());
  fs::rename(path_, (dir_ / "moved.db").string());
  Result<int64_t> after_move = log->AddRecord(Rec(2, 0, 1e-3));
  ASSERT_FALSE(after_move.ok());
  EXPECT_NE(after_move.status().message().find(path_ + ": the log was removed or renamed while this process wrote"),
            std::string::npos)
      << after_move.status().ToString();
  // What it wrote was in the -wal, which keeps the old name: the moved file lacked it (it held no table even, the
  // log being new); it is folded in.
  EXPECT_NE(after_move.status().message().find("; if it was moved, the moved file holds all it wrote"),
            std::string::npos)
      << after_move.status().ToString();
  {
    auto moved = TuningLog::OpenExisting((dir_ / "moved.db").string());
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    EXPECT_EQ((*moved)->Records(task_, tmpl_, dev_).value().size(), 1u);
  }
  EXPECT_FALSE(log->BeginSession("{}", "").ok());
  // Another file put at its path is not the log it writes either.
  std::ofstream(path_) << "x";
  Result<int64_t> after_replace = log->AddRecord(Rec(3, 0, 1e-3));
  ASSERT_FALSE(after_replace.ok());
  EXPECT_NE(after_replace.status().message().find("the log was replaced by another file"), std::string::npos)
      << after_replace.status().ToString();
  // Reading goes on: what it holds is still readable through the open connection.
  EXPECT_EQ(log->Records(task_, tmpl_, dev_).value().size(), 1u);
}

// A copy of the log's file taken while a run writes it (or after the run was killed) lacks what only its -wal holds:
// SQLite folded the -wal in at 1000 pages (4 MB), so the copy of a small run held no record. It is folded in every
// few pages now, and the copy lacks only the last of them.
TEST_F(TuningLogTest, GivenALogBeingWritten_ACopyOfItsFileAloneShouldHoldAllButTheLastRecords) {
  auto log = OpenOrDie();
  MakeWorld(*log);
  constexpr int kRecords = 100;
  for (int i = 0; i < kRecords; ++i) ASSERT_TRUE(log->AddRecord(Rec(i, 0, 1e-3)).ok());
  const std::string copy = (dir_ / "copy.db").string();
  fs::copy_file(path_, copy);
  auto read = TuningLog::OpenExisting(copy);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_GE((*read)->Records(task_, tmpl_, dev_).value().size(), kRecords * 9 / 10);
}

TEST_F(TuningLogTest, GivenALogOpenedThroughASymlinkThatIsThenRemoved_WritesShouldGoOnToTheFile) {
  { OpenOrDie(); }
  const std::string link = (dir_ / "latest.db").string();
  fs::create_symlink(path_, link);
  auto log = TuningLog::Open(link);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  MakeWorld(**log);
  fs::remove(link);  // the link, not the file SQLite opened: nothing is lost
  ASSERT_TRUE((*log)->AddRecord(Rec(1, 0, 1e-3)).ok());
  log->reset();
  EXPECT_EQ(OpenOrDie()->Records(task_, tmpl_, dev_).value().size(), 1u);
}


}  // namespace
}  // namespace tunefleet
