// Generation-side tests of pool.worksize: no device needed.
#include "search-spaces/pool_worksize.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;

TEST(PoolWorksize, GivenADeviceLimitOf256TheSpaceShouldHoldTheDriverDefaultAndFivePowersOfTwo) {
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 256;
  Result<Space> space = PoolWorksizeTemplate().MakeSpace(ParseTask("pool:1,8,16,16,3,3,2,1"), lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  // 0 (driver), 16, 32, 64, 128, 256: by hand.
  EXPECT_EQ(space->CountValid(), 6u);
}

TEST(PoolWorksize, GivenTheDriverDefaultTheLaunchShouldHaveNoLocalSize) {
  const Task task = ParseTask("pool:1,8,16,16,3,3,2,1,mode=avg");
  PoolWorksizeTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
  ASSERT_TRUE(prog.ok());
  EXPECT_EQ(prog->launches(0).local_size_size(), 0);
  EXPECT_EQ(prog->launches(0).global_size(0), 8u * 8 * 8);
}

TEST(PoolWorksize, GivenALocalSizeOverTheDeviceLimitWeShouldRejectIt) {
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 64;
  const Task task = ParseTask("pool:1,8,16,16,2,2,2,0");
  PoolWorksizeTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok());
  Result<Config> c = space->FromJson(nlohmann::json{{"local_size", 128}});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(space->Valid(*c));
  EXPECT_FALSE(tmpl.Generate(task, *space, *c).ok());
}

TEST(PoolWorksize, GivenAWindowLargerThanThePaddedInputWeShouldRefuseTheTask) {
  PoolWorksizeTemplate tmpl;
  // 9x9 over 8x8 at stride 2: no output (the output count by truncating division was 1).
  for (const char* spec : {"pool:1,1,8,8,9,9,2,0", "pool:1,1,8,8,9,3,2,0"}) {
    Result<Space> space = tmpl.MakeSpace(ParseTask(spec), GpuLikeLimits());
    ASSERT_FALSE(space.ok()) << spec;
    EXPECT_NE(space.status().message().find("does not fit"), std::string::npos) << space.status().ToString();
  }
  // A pad as large as the window fits, but makes windows of padding alone: said as such (it said "does not fit").
  for (const char* spec : {"pool:1,1,8,8,2,2,1,2", "pool:1,3,7,7,3,3,1,3"}) {
    Result<Space> space = tmpl.MakeSpace(ParseTask(spec), GpuLikeLimits());
    ASSERT_FALSE(space.ok()) << spec;
    EXPECT_NE(space.status().message().find("must be smaller than the window"), std::string::npos)
        << space.status().ToString();
  }
  EXPECT_TRUE(tmpl.MakeSpace(ParseTask("pool:1,1,8,8,8,8,2,0"), GpuLikeLimits()).ok());
  EXPECT_TRUE(tmpl.MakeSpace(ParseTask("pool:1,1,7,7,9,9,1,1"), GpuLikeLimits()).ok());
}

TEST(PoolWorksize, GivenGlobalAveragePoolingTheFlopsShouldCountEveryInput) {
  EXPECT_DOUBLE_EQ(PoolWorksizeTemplate().Flops(ParseTask("pool:2,8,7,7,1,1,1,0,mode=avg,global=1")),
                   2.0 * 8 * 49);
}

}  // namespace
}  // namespace tunefleet
