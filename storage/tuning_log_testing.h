// For tests: TuningLogTest, a fixture with a tuning log in a folder of its own (path_), a raw SQLite connection
// beside it (ExecRaw, QueryRaw, as another program would), and one (device, task, template) world with its records
// (MakeWorld, Rec).
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "proto/tunefleet.pb.h"
#include "storage/tuning_log.h"

namespace tunefleet {

class TuningLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tf_storage_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "log.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<TuningLog> OpenOrDie() {
    auto log = TuningLog::Open(path_);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return std::move(log).value();
  }

  // Runs `sql` on the log's file through a connection of its own, as another program would.
  void ExecRaw(const std::string& sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << sql;
  }

  // The first column of the first row of `sql`, as text ("" for NULL or no row), read as another program would.
  std::string QueryRaw(const std::string& sql) {
    sqlite3* raw = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::string v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr)
      v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return v;
  }

  static proto::DeviceInfo Device(const std::string& name) {
    proto::DeviceInfo d;
    d.set_vendor("ACME");
    d.set_name(name);
    d.set_driver_version("1.0");
    d.set_device_version("OpenCL 3.0");
    d.set_max_work_group_size(256);
    d.set_fingerprint("fp-" + name);
    return d;
  }

  // One (device, task, template) world; ids in dev_, task_, tmpl_.
  void MakeWorld(TuningLog& log) {
    dev_ = log.UpsertDevice(Device("gpu0")).value();
    task_ = log.UpsertTask("gemm:64,64,64:float32", "gemm", R"({"M":64})", 2.0 * 64 * 64 * 64).value();
    tmpl_ = log.UpsertTemplate("gemm.buffer", 1).value();
  }

  RecordRow Rec(uint64_t index, int status, double cost) const {
    RecordRow r;
    r.task_id = task_;
    r.template_id = tmpl_;
    r.device_id = dev_;
    r.config_index = index;
    r.config = R"({"tile":[4,)" + std::to_string(index) + "]}";  // one config per index, as a tuner writes them
    r.status = status;
    if (status == 0) r.costs = {cost, cost * 1.1};
    r.mean_cost = status == 0 ? cost * 1.05 : 0;
    r.compile_time = 0.25;
    r.wall_time = 0.5;
    r.message = status == 0 ? "" : "CL_INVALID_WORK_GROUP_SIZE";
    r.timestamp = 1700000000.5;
    return r;
  }

  std::filesystem::path dir_;
  std::string path_;
  int64_t dev_ = 0, task_ = 0, tmpl_ = 0;
};

}  // namespace tunefleet
