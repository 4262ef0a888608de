// Runs sampled gemm.buffer configs on the first OpenCL device (PoCL here) through the agent's executor and
// expects each to match the reference. Small sizes: PoCL compiles are slow.
#include <gtest/gtest.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common_run_testing.h"
#include "search-spaces/gemm_template.h"

namespace tunefleet {
namespace {

using testing::DeviceTest;

class GemmRunTest : public DeviceTest {
 protected:
  GemmBufferTemplate tmpl_;
};

TEST_F(GemmRunTest, GivenOddSizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:33,17,29", 3, 11);
}

TEST_F(GemmRunTest, GivenTransposedBSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:40,24,36,transb=1", 3, 12);
}

TEST_F(GemmRunTest, GivenBatchBiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:32,64,48,batch=3,bias=1,act=relu", 4, 13);
}

TEST_F(GemmRunTest, GivenVectorFriendlySizesSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:64,64,64,act=sigmoid", 3, 14);
}

// float16-acc32 needs no cl_khr_fp16 (half only in global memory): these run on every device, PoCL included.
TEST_F(GemmRunTest, GivenHalfStorageOddSizesTransposedBBiasAndReluSampledConfigsShouldMatchTheReference) {
  ExpectSampleMatches(tmpl_, "gemm:33,17,29,transb=1,bias=1,act=relu:float16-acc32", 1, 18);
}

TEST_F(GemmRunTest, GivenHalfStorageEveryLoadPathShouldMatchTheReference) {
  // Wide vload_halfN global loads into double-buffered local tiles (VWK, VWN = 4), then scalar vload_half reads
  // straight from global memory (no tiles), with and without transb.
  const nlohmann::json staged = {{"MWG", 16}, {"NWG", 32}, {"MDIMC", 4}, {"NDIMC", 8}, {"KWG", 16}, {"KWI", 2},
                                 {"VWM", 2},  {"VWN", 4},  {"VWK", 4},   {"SA", 1},    {"SB", 1},   {"DB", 1}};
  const nlohmann::json direct = {{"MWG", 16}, {"NWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}, {"KWG", 8}, {"KWI", 1},
                                 {"VWM", 1},  {"VWN", 1},  {"VWK", 1},   {"SA", 0},    {"SB", 0},  {"DB", 0}};
  for (const auto& [spec, j] : {std::pair{"gemm:32,64,48,batch=2,bias=1:float16-acc32", staged},
                                std::pair{"gemm:40,64,48,transb=1,act=sigmoid:float16-acc32", staged},
                                std::pair{"gemm:21,19,13,transb=1,bias=1:float16-acc32", direct}}) {
    const Task task = testing::ParseTask(spec);
    Result<Space> space = tmpl_.MakeSpace(task, Limits());
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    Result<Config> c = space->FromJson(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_EQ(space->Check(*c), "") << spec;
    Result<proto::KernelProgram> prog = tmpl_.Generate(task, *space, *c);
    ASSERT_TRUE(prog.ok()) << prog.status().ToString();
    const proto::MeasureResult r = RunOnce(*prog);
    EXPECT_EQ(r.status(), proto::OK) << spec << " " << j.dump() << ": " << r.message() << " (max error "
                                     << r.max_abs_error() << ")";
  }
}

TEST_F(GemmRunTest, GivenHalfStorageTheReferenceShouldMatchTheFloat32ReferenceUpToRounding) {
  proto::KernelProgram half = tmpl_.Reference(testing::ParseTask("gemm:24,40,64,bias=1:float16-acc32"));
  ASSERT_EQ(half.buffers(0).type(), proto::FLOAT16);
  *half.mutable_reference() = tmpl_.Reference(testing::ParseTask("gemm:24,40,64,bias=1"));
  half.set_rtol(0);
  half.set_atol(1.0f);  // the error itself is checked below
  const proto::MeasureResult r = RunOnce(half);
  ASSERT_EQ(r.status(), proto::OK) << r.message();
  // Inputs and output are rounded to half, so the outputs differ, but only by rounding.
  EXPECT_GT(r.max_abs_error(), 0.0);
  EXPECT_LT(r.max_abs_error(), 1e-2);
}

TEST_F(GemmRunTest, GivenFp16AndTheExtensionSampledConfigsShouldMatchTheReference) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSampleMatches(tmpl_, "gemm:48,32,40:float16", 2, 16);
  ExpectSampleMatches(tmpl_, "gemm:33,17,29,batch=2,transb=1,bias=1,act=relu:float16", 2, 17);
}


}  // namespace
}  // namespace tunefleet
