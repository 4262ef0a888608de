// Test support (header only, used by the tuner's *_test.cc): a real tuning log (SQLite) in a fresh temporary
// directory, with one CPU-like device and a session, written through the storage API as `tune` writes it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/tunefleet.pb.h"
#include "search-spaces/space.h"
#include "storage/tuning_log.h"

namespace tunefleet::testing {

// The first `n` valid config indices of `s` in index order (fewer when it has fewer).
inline std::vector<uint64_t> FirstValid(const Space& s, size_t n) {
  std::vector<uint64_t> valid;
  if (n == 0) return valid;
  s.ForEachValid([&](uint64_t i) {
    valid.push_back(i);
    return valid.size() < n;
  });
  return valid;
}

class TuningLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tf_log_" + std::to_string(getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Result<std::unique_ptr<TuningLog>> log = TuningLog::Open((dir_ / "log.db").string());
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
    device_info_.set_name("pocl-cpu");
    device_info_.set_fingerprint("fp-pocl");
    device_info_.set_compute_units(2);
    device_info_.set_max_work_group_size(256);
    for (int i = 0; i < 3; ++i) device_info_.add_max_work_item_sizes(256);
    device_info_.set_local_mem_bytes(32 * 1024);
    device_ = log_->UpsertDevice(device_info_).value();
    session_ = log_->BeginSession("{}", "").value();
  }
  void TearDown() override {
    log_.reset();
    std::filesystem::remove_all(dir_);
  }

  // One record of config `index` of `s` on the device, in the session.
  void AddRecord(const Space& s, int64_t task, int64_t tmpl, uint64_t index, int status, double cost) {
    RecordRow r;
    r.session_id = session_;
    r.task_id = task;
    r.template_id = tmpl;
    r.device_id = device_;
    r.config_index = index;
    r.config = s.ToJson(s.FromIndex(index)).dump();
    r.status = status;
    r.mean_cost = cost;
    if (status == 0) r.costs = {cost};
    ASSERT_TRUE(log_->AddRecord(r).ok());
  }

  std::filesystem::path dir_;
  proto::DeviceInfo device_info_;
  std::unique_ptr<TuningLog> log_;
  int64_t device_ = 0, session_ = 0;
};

}  // namespace tunefleet::testing
