// Generation-side tests of conv2d_nchw.buffer: no device needed.
#include "search-spaces/conv2d_nchw_buffer.h"

#include <gtest/gtest.h>

#include <array>

#include <nlohmann/json.hpp>

#include "search-spaces/conv_common.h"
#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::GpuLikeLimits;
using testing::Divisors;
using testing::ParseTask;

// (v, t, i) triples of a 4-way split of `n` kept by the template's filter (outer part implied).
std::vector<std::array<int64_t, 3>> Inner3(int64_t n, int64_t max_t) {
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t v : Divisors(n))
    for (int64_t t : Divisors(n / v))
      for (int64_t i : Divisors(n / v / t))
        if (v <= 8 && t <= max_t && i <= 8) out.push_back({v, t, i});
  return out;
}

TEST(Conv2dNchwBuffer, GivenASmallTaskTheValidCountShouldMatchAnIndependentCount) {
  const Task task = ParseTask("conv2d:1,2,4,4,4,3,3,1,1");
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 8;
  lim.local_mem_bytes = 300;
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok()) << space.status().ToString();

  // By hand: OH = OW = 4, C = 2, KH = KW = 3, float32 (4 bytes).
  uint64_t expected = 0;
  for (auto f : Inner3(4, 1024))
    for (auto y : Inner3(4, 1024))
      for (auto x : Inner3(4, 1024))
        for (int64_t rci : Divisors(2))
          for (int64_t ryi : Divisors(3))
            for (int64_t rxi : Divisors(3)) {
              const int64_t wg = f[1] * y[1] * x[1];
              const int64_t acc = f[0] * f[2] * y[0] * y[2] * x[0] * x[2];
              const int64_t ty = y[0] * y[1] * y[2], tx = x[0] * x[1] * x[2], tf = f[0] * f[1] * f[2];
              const int64_t in_rows = (ty - 1) + (ryi - 1) + 1, in_cols = (tx - 1) + (rxi - 1) + 1;
              const int64_t bytes = 4 * (rci * in_rows * in_cols + tf * rci * ryi * rxi);
              uint64_t splits = 0;  // split_rc values dividing the outer channel steps
              for (int64_t split : {1, 2, 4, 8, 16}) splits += (2 / rci) % split == 0 ? 1 : 0;
              if (wg <= 8 && acc <= 128 && bytes <= 300) expected += 3 * 2 * splits;  // unroll x explicit x split
            }
  EXPECT_EQ(space->CountValid(), expected);
  EXPECT_GT(expected, 0u);
}

TEST(Conv2dNchwBuffer, GivenAConfigOverTheWorkGroupLimitWeShouldRejectItBeforeCompiling) {
  const Task task = ParseTask("conv2d:1,4,8,8,8,3,3,1,1");
  DeviceLimits lim = GpuLikeLimits();
  lim.max_work_group_size = 16;
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok());
  // Threads 8 x 8 x 8 = 512 items > 16.
  nlohmann::json j = {{"tile_f", {1, 1, 8, 1}}, {"tile_y", {1, 1, 8, 1}},  {"tile_x", {1, 1, 8, 1}},
                      {"tile_rc", {4, 1}},      {"tile_ry", {3, 1}},       {"tile_rx", {3, 1}},
                      {"auto_unroll_max_step", 0}, {"unroll_explicit", 0}, {"split_rc", 1}};
  Result<Config> c = space->FromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(space->Check(*c).find("work-group"), std::string::npos) << space->Check(*c);
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, *c);
  EXPECT_FALSE(prog.ok());
}

TEST(Conv2dNchwBuffer, GivenGroupsWeShouldKeepAChannelTileInsideOneGroup) {
  const Task task = ParseTask("conv2d:1,4,6,6,8,3,3,1,1,groups=2");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  space->ForEachValid([&](uint64_t i) {
    const Config c = space->FromIndex(i);
    const auto& f = ConfigView(*space, c).Factors("tile_f");
    EXPECT_EQ(4 % (f[1] * f[2] * f[3]), 0);
    return true;
  });
}

TEST(Conv2dNchwBuffer, GivenAFloat16TaskOnADeviceWithoutFp16WeShouldSaySo) {
  const Task task = ParseTask("conv2d:1,4,8,8,8,3,3,1,1:float16");
  DeviceLimits lim = GpuLikeLimits();
  lim.fp16 = false;
  std::string why;
  EXPECT_FALSE(Conv2dNchwBufferTemplate().Supports(task, lim, &why));
  EXPECT_EQ(why, "device has no cl_khr_fp16");
  // Half storage with float arithmetic is core OpenCL.
  EXPECT_TRUE(Conv2dNchwBufferTemplate().Supports(ParseTask("conv2d:1,4,8,8,8,3,3,1,1:float16-acc32"), lim, &why));
}

TEST(Conv2dNchwBuffer, GivenHalfStorageTheLocalTilesShouldHoldFloats) {
  // float16-acc32 stages float values (4 bytes), float16 half values (2 bytes): feature 2 is the local bytes.
  const nlohmann::json j = {{"tile_f", {1, 1, 4, 2}},    {"tile_y", {1, 1, 8, 1}}, {"tile_x", {1, 1, 8, 1}},
                            {"tile_rc", {2, 2}},         {"tile_ry", {1, 3}},      {"tile_rx", {1, 3}},
                            {"auto_unroll_max_step", 0}, {"unroll_explicit", 0},   {"split_rc", 1}};
  std::vector<float> bytes;
  for (const char* p : {"float32", "float16-acc32", "float16"}) {
    const Task task = ParseTask(std::string("conv2d:1,4,8,8,8,3,3,1,1:") + p);
    Conv2dNchwBufferTemplate tmpl;
    Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
    ASSERT_TRUE(space.ok());
    Result<Config> c = space->FromJson(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    bytes.push_back(tmpl.DerivedFeatures(task, *space, *c, GpuLikeLimits())[2]);
  }
  EXPECT_EQ(bytes[0], (2 * 10 * 10 + 8 * 2 * 3 * 3) * 4.0f);
  EXPECT_EQ(bytes[1], bytes[0]);
  EXPECT_EQ(bytes[2], bytes[0] / 2);
}

TEST(Conv2dNchwBuffer, GivenTheFallbackWeShouldGenerateAProgramWithAReference) {
  const Task task = ParseTask("conv2d:1,64,56,56,64,3,3,1,1,bias=1,relu=1:float16-acc32");
  Conv2dNchwBufferTemplate tmpl;
  Result<Space> space = tmpl.MakeSpace(task, GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  const Config c = tmpl.Fallback(task, *space);
  ASSERT_TRUE(space->Valid(c)) << space->Check(c);
  Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, c);
  ASSERT_TRUE(prog.ok()) << prog.status().ToString();
  EXPECT_EQ(prog->output_buffer(), "out");
  EXPECT_TRUE(prog->has_reference());
  ASSERT_GE(prog->launches_size(), 1);  // with split_rc > 1 the reduction kernel shares the source
  // Half buffers through vload_half / vstore_half_rte, float tiles, no extension.
  const std::string& src = prog->launches(0).source();
  EXPECT_EQ(src.find("cl_khr_fp16"), std::string::npos);
  EXPECT_NE(src.find("#define LD(p, i) vload_half((i), (p))"), std::string::npos);
  EXPECT_NE(src.find("__local LT dsh"), std::string::npos);
  EXPECT_NE(src.find("LD(bias, "), std::string::npos);
  EXPECT_NE(src.find("ST(out, "), std::string::npos);
  EXPECT_EQ(prog->reference().launches(0).source().find("cl_khr_fp16"), std::string::npos);
  EXPECT_DOUBLE_EQ(tmpl.Flops(task), 2.0 * 64 * 56 * 56 * 64 * 9);
  EXPECT_EQ(tmpl.DerivedFeatures(task, *space, c, GpuLikeLimits()).size(), 8u);
}

}  // namespace
}  // namespace tunefleet
