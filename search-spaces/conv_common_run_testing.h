// Device-side test helpers (header-only, *_run_test.cc binaries only, which link tf_agent): a fixture that
// opens the first OpenCL device once per suite through the agent's real executor, and a verb that runs a
// template's candidates there and expects each to match the template's reference.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/executor.h"
#include "search-spaces/conv_common_testing.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/template.h"

namespace tunefleet::testing {

class DeviceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (executor_) return;
    Result<std::unique_ptr<agent::Executor>> e = agent::Executor::Open();
    ASSERT_TRUE(e.ok()) << "no OpenCL device: " << e.status().ToString();
    executor_ = std::move(e).value().release();  // lives for the process: one device per test binary
  }

  static DeviceLimits Limits() { return DeviceLimits::From(executor_->device_info()); }

  // float16 (half arithmetic) needs cl_khr_fp16, which PoCL lacks: such tests skip there with this reason.
  // bench/fp16_cpu.sh runs them on a CPU OpenCL runtime that has the extension.
  static constexpr const char* kNoFp16 = "device has no cl_khr_fp16 (bench/fp16_cpu.sh runs this on one that has it)";

  // Runs the program once (no warm-up beyond one run, one repeat) and returns the result.
  static proto::MeasureResult RunOnce(proto::KernelProgram program) {
    program.mutable_timing()->set_warmup(1);
    program.mutable_timing()->set_number(1);
    program.mutable_timing()->set_repeat(1);
    program.mutable_timing()->set_min_repeat_ms(0);
    return executor_->Execute(program);
  }

  // Given `count` valid configs of `tmpl` for `spec` (drawn with `seed`, plus the fallback), each should
  // compile, run and match the reference on the device.
  static void ExpectSampleMatches(const Template& tmpl, const std::string& spec, int count, uint64_t seed) {
    const Task task = ParseTask(spec);
    const DeviceLimits lim = Limits();
    std::string why;
    ASSERT_TRUE(tmpl.Supports(task, lim, &why)) << spec << ": " << why;
    Result<Space> space = tmpl.MakeSpace(task, lim);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    std::vector<Config> configs = SampleConfigs(*space, count, seed);
    configs.push_back(tmpl.Fallback(task, *space));
    for (const Config& c : configs) {
      const std::string desc = spec + " " + space->ToJson(c).dump();
      Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, c);
      ASSERT_TRUE(prog.ok()) << desc << ": " << prog.status().ToString();
      const proto::MeasureResult r = RunOnce(*prog);
      EXPECT_EQ(r.status(), proto::OK) << desc << ": " << proto::MeasureStatus_Name(r.status()) << " "
                                       << r.message() << " (max error " << r.max_abs_error() << ")";
    }
  }

  static inline agent::Executor* executor_ = nullptr;
};

}  // namespace tunefleet::testing
