// Template::WorkItems is what the tuner's device prior weighs (tuner/device_prior.h): for every template it must be
// the global size of the launch the template tunes, as Generate() writes it into the kernel program.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <random>
#include <string>

#include "search-spaces/conv_common_testing.h"
#include "search-spaces/template.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;

struct Case {
  const char* tmpl;
  const char* task;
  const char* entry;  // the tuned kernel's entry point
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.tmpl << " on " << c.task; }

class WorkItemsTest : public ::testing::TestWithParam<Case> {};

TEST_P(WorkItemsTest, GivenValidConfigsWorkItemsShouldBeTheTunedLaunchsGlobalSize) {
  const Case& k = GetParam();
  const Template* tmpl = FindTemplate(k.tmpl);
  ASSERT_NE(tmpl, nullptr) << k.tmpl;
  const Task task = ParseTask(k.task);
  DeviceLimits limits = GpuLikeLimits();
  limits.compute_units = 8;
  Result<Space> space = tmpl->MakeSpace(task, limits);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  std::mt19937_64 rng(7);
  double smallest = 0, largest = 0;
  for (int i = 0; i < 24; ++i) {
    std::optional<uint64_t> idx = space->SampleValid(rng);
    ASSERT_TRUE(idx.has_value());
    const Config c = space->FromIndex(*idx);
    Result<proto::KernelProgram> prog = tmpl->Generate(task, *space, c);
    ASSERT_TRUE(prog.ok()) << prog.status().ToString();
    double global = 0;
    for (const proto::KernelLaunch& l : prog->launches()) {
      if (l.entry() != k.entry) continue;
      global = 1;
      for (uint64_t g : l.global_size()) global *= static_cast<double>(g);
    }
    ASSERT_GT(global, 0) << "no launch of " << k.entry;
    const double items = tmpl->WorkItems(task, *space, c);
    EXPECT_EQ(items, global) << k.tmpl << " config " << *idx;
    smallest = i == 0 ? items : std::min(smallest, items);
    largest = std::max(largest, items);
  }
  EXPECT_LT(smallest, largest) << "the sampled configs should launch different numbers of work-items";
}

INSTANTIATE_TEST_SUITE_P(
    EveryTemplate, WorkItemsTest,
    ::testing::Values(Case{"gemm.buffer", "gemm:64,64,64", "gemm_tuned"},
                      Case{"conv2d_nchw.buffer", "conv2d:1,8,12,12,16,3,3,1,1", "conv2d_nchw"},
                      Case{"conv2d_1x1.buffer", "conv2d:1,16,12,12,32,1,1,1,0", "conv2d_1x1"},
                      Case{"conv2d_nchwc.image2d", "conv2d:1,8,12,12,16,3,3,1,1", "conv2d_nchwc"},
                      Case{"depthwise_conv2d_nchwc.image2d", "dwconv2d:1,16,12,12,3,3,1,1", "dwconv2d_nchwc"},
                      Case{"conv2d_winograd", "conv2d:1,8,12,12,16,3,3,1,1", "wino_gemm"},
                      Case{"eltwise.worksize", "elementwise:1,8,12,12,kind=add", "eltwise"},
                      Case{"pool.worksize", "pool:1,8,16,16,3,3,2,1", "pool"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string n = info.param.tmpl;
      for (char& ch : n) {
        if (ch == '.') ch = '_';
      }
      return n;
    });

TEST(WorkItems, GivenAnInvalidTaskShapeWorkItemsShouldBeZero) {
  const Template* tmpl = FindTemplate("conv2d_nchwc.image2d");
  ASSERT_NE(tmpl, nullptr);
  const Task good = ParseTask("conv2d:1,8,12,12,16,3,3,1,1");
  Result<Space> space = tmpl->MakeSpace(good, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  const Task gemm = ParseTask("gemm:64,64,64");
  EXPECT_EQ(tmpl->WorkItems(gemm, *space, space->FromIndex(0)), 0);
}

}  // namespace
}  // namespace tunefleet
