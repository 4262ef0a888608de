// conv2d_winograd on the real OpenCL device (PoCL here): F(2,3) and F(4,3) configs match the reference.
#include "search-spaces/winograd.h"

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class Conv2dWinogradRun : public testing::DeviceTest {
 protected:
  void ExpectConfigMatches(const std::string& spec, const nlohmann::json& j) {
    const Task task = testing::ParseTask(spec);
    Conv2dWinogradTemplate tmpl;
    Result<Space> space = tmpl.MakeSpace(task, Limits());
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    Result<Config> c = space->FromJson(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
    ASSERT_TRUE(prog.ok()) << prog.status().ToString();
    const proto::MeasureResult r = RunOnce(*prog);
    EXPECT_EQ(r.status(), proto::OK) << spec << " " << j.dump() << ": " << r.message() << " (max error "
                                     << r.max_abs_error() << ")";
  }
};

TEST_F(Conv2dWinogradRun, GivenF23OnOddSizesWithTailsTheOutputShouldMatchTheReference) {
  ExpectConfigMatches("conv2d:1,5,7,9,6,3,3,1,1",
                      {{"tile_size", 2}, {"k_thread", 2}, {"k_inner", 2}, {"p_thread", 4}, {"p_inner", 2},
                       {"c_step", 4}, {"auto_unroll_max_step", 512}});
}

TEST_F(Conv2dWinogradRun, GivenF43WithoutPaddingBiasAndReluTheOutputShouldMatchTheReference) {
  ExpectConfigMatches("conv2d:2,4,10,11,8,3,3,1,0,bias=1,relu=1",
                      {{"tile_size", 4}, {"k_thread", 4}, {"k_inner", 1}, {"p_thread", 8}, {"p_inner", 1},
                       {"c_step", 2}, {"auto_unroll_max_step", 0}});
}

TEST_F(Conv2dWinogradRun, GivenHalfStorageF43WithTailsBiasAndReluTheOutputShouldMatchTheReference) {
  // U, V and M stay half buffers between the four kernels (vload_half / vstore_half_rte); F(4,3) rounds most.
  ExpectConfigMatches("conv2d:2,5,7,9,6,3,3,1,1,bias=1,relu=1:float16-acc32",
                      {{"tile_size", 4}, {"k_thread", 2}, {"k_inner", 2}, {"p_thread", 4}, {"p_inner", 2},
                       {"c_step", 4}, {"auto_unroll_max_step", 512}});
}

TEST_F(Conv2dWinogradRun, GivenSampledConfigsTheOutputShouldMatchTheReference) {
  ExpectSampleMatches(Conv2dWinogradTemplate(), "conv2d:1,8,8,8,8,3,3,1,1", 2, 41);
}

TEST_F(Conv2dWinogradRun, GivenFp16AndTheExtensionF23AndF43WithTailsTheOutputShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectConfigMatches("conv2d:1,5,7,9,6,3,3,1,1,bias=1,relu=1:float16",
                      {{"tile_size", 2}, {"k_thread", 2}, {"k_inner", 2}, {"p_thread", 4}, {"p_inner", 2},
                       {"c_step", 4}, {"auto_unroll_max_step", 512}});
  ExpectConfigMatches("conv2d:2,4,10,11,8,3,3,1,0:float16",
                      {{"tile_size", 4}, {"k_thread", 4}, {"k_inner", 1}, {"p_thread", 8}, {"p_inner", 1},
                       {"c_step", 2}, {"auto_unroll_max_step", 0}});
}

}  // namespace
}  // namespace tunefleet
