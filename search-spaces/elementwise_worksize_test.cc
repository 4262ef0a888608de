// Generation-side tests of eltwise.worksize: no device needed.
#include "search-spaces/elementwise_worksize.h"

#include <gtest/gtest.h>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::ParseTask;

TEST(ElementwiseWorksize, GivenTheDeviceLimitTheValidCountShouldBeTheLocalSizesThatFit) {
  for (uint64_t max_wg : {16u, 100u, 1024u}) {
    DeviceLimits lim = GpuLikeLimits();
    lim.max_work_group_size = max_wg;
    Result<Space> space = ElementwiseWorksizeTemplate().MakeSpace(ParseTask("elementwise:1,4,8,8,kind=add"), lim);
    ASSERT_TRUE(space.ok());
    uint64_t expected = 1;  // the driver's choice
    for (uint64_t l = 16; l <= 1024; l *= 2) expected += l <= max_wg ? 1 : 0;
    EXPECT_EQ(space->CountValid(), expected) << max_wg;
  }
}

TEST(ElementwiseWorksize, GivenAUnaryKindTheProgramShouldDeclareOneInput) {
  const Task task = ParseTask("elementwise:1,4,8,8,kind=sigmoid");
  ElementwiseWorksizeTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
  ASSERT_TRUE(prog.ok());
  EXPECT_EQ(prog->buffers_size(), 2);  // a, out
  EXPECT_NE(prog->launches(0).source().find("exp(-a)"), std::string::npos);
}

TEST(ElementwiseWorksize, GivenFloat16WithoutFp16WeShouldSaySo) {
  DeviceLimits lim = GpuLikeLimits();
  lim.fp16 = false;
  std::string why;
  EXPECT_FALSE(ElementwiseWorksizeTemplate().Supports(ParseTask("elementwise:1,4,8,8:float16"), lim, &why));
  EXPECT_EQ(why, "device has no cl_khr_fp16");
  EXPECT_TRUE(ElementwiseWorksizeTemplate().Supports(ParseTask("elementwise:1,4,8,8:float16-acc32"), lim, &why));
}

}  // namespace
}  // namespace tunefleet
