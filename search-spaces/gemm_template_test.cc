#include "search-spaces/gemm_template.h"

#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "search-spaces/gemm_kernel.h"

namespace tunefleet {
namespace {

Task ParseOrDie(const std::string& spec) {
  auto t = Task::Parse(spec);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Task{};
}

DeviceLimits BigGpu() {  // an H200-like device
  DeviceLimits l;
  l.max_work_group_size = 1024;
  l.max_work_item_sizes[0] = l.max_work_item_sizes[1] = 1024;
  l.max_work_item_sizes[2] = 64;
  l.local_mem_bytes = 48 * 1024;
  l.compute_units = 132;
  l.is_gpu = true;
  l.max_registers_per_item = 255;
  l.registers_per_compute_unit = 65536;
  return l;
}

DeviceLimits SmallDevice() {  // the weakest device the fallback promises to fit
  DeviceLimits l;
  l.max_work_group_size = 64;
  l.max_work_item_sizes[0] = l.max_work_item_sizes[1] = l.max_work_item_sizes[2] = 64;
  l.local_mem_bytes = 16 * 1024;
  return l;
}

Config ConfigFrom(const Space& s, const nlohmann::json& j) {
  auto c = s.FromJson(j);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Config{};
}

const nlohmann::json kBigConfig = {{"MWG", 128}, {"NWG", 128}, {"MDIMC", 16}, {"NDIMC", 16},
                                   {"KWG", 16},  {"KWI", 4},   {"VWM", 4},    {"VWN", 4},
                                   {"VWK", 4},   {"SA", 1},    {"SB", 1},     {"DB", 1}};

TEST(GemmTemplateTest, GivenTheRegistryWeShouldFindGemmBufferForGemmTasks) {
  ASSERT_NE(FindTemplate("gemm.buffer"), nullptr);
  auto ts = TemplatesFor(ParseOrDie("gemm:64,64,64"), SmallDevice());
  bool found = false;
  for (const Template* t : ts) found |= t->name() == "gemm.buffer";
  EXPECT_TRUE(found);
}

TEST(GemmTemplateTest, GivenFp16WithoutTheExtensionWeShouldNotSupportTheTask) {
  GemmBufferTemplate t;
  std::string why;
  EXPECT_FALSE(t.Supports(ParseOrDie("gemm:64,64,64:float16"), SmallDevice(), &why));
  EXPECT_EQ(why, "device has no cl_khr_fp16");
  // Half storage with float arithmetic is core OpenCL.
  EXPECT_TRUE(t.Supports(ParseOrDie("gemm:64,64,64:float16-acc32"), SmallDevice(), &why)) << why;
  EXPECT_FALSE(t.Supports(ParseOrDie("conv2d:1,8,8,8,8,3,3,1,1"), SmallDevice(), &why));
}

TEST(GemmTemplateTest, GivenABigGpuTheSpaceShouldHoldTheFastBigTileConfig) {
  GemmBufferTemplate t;
  Task task = ParseOrDie("gemm:4096,4096,4096");
  auto space = t.MakeSpace(task, BigGpu());
  ASSERT_TRUE(space.ok());
  EXPECT_GE(space->RawSize(), 100000u);
  Config c = ConfigFrom(*space, kBigConfig);
  EXPECT_EQ(space->Check(c), "");
  // The same config on a 256-item, 16 KiB device is rejected with the reason the tuner records.
  DeviceLimits lim;
  lim.local_mem_bytes = 16 * 1024;
  auto small = t.MakeSpace(task, lim);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->Check(ConfigFrom(*small, kBigConfig)),
            "device_local_memory: needs 32768 bytes of local memory, the device has 16384");
}

TEST(GemmTemplateTest, GivenDeviceLimitsNoValidConfigShouldExceedThem) {
  GemmBufferTemplate t;
  Task task = ParseOrDie("gemm:256,256,256");
  const DeviceLimits lim = SmallDevice();
  auto space = t.MakeSpace(task, lim);
  ASSERT_TRUE(space.ok());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    auto idx = space->SampleValid(rng);
    ASSERT_TRUE(idx.has_value());
    GemmConfig g = GemmConfig::FromView(ConfigView(*space, space->FromIndex(*idx)));
    EXPECT_LE(static_cast<uint64_t>(g.threads()), lim.max_work_group_size);
    EXPECT_LE(g.LocalBytes(GemmShape{}), lim.local_mem_bytes);
    EXPECT_EQ(g.mwg % (g.mdimc * g.vwm), 0);
  }
}

TEST(GemmTemplateTest, GivenOddSizesOnlyScalarGlobalVectorsShouldBeValid) {
  GemmBufferTemplate t;
  auto space = t.MakeSpace(ParseOrDie("gemm:33,17,29"), SmallDevice());
  ASSERT_TRUE(space.ok());
  EXPECT_GT(space->CountValid(), 0u);
  space->ForEachValid([&](uint64_t i) {
    GemmConfig g = GemmConfig::FromView(ConfigView(*space, space->FromIndex(i)));
    EXPECT_EQ(g.vwn, 1);
    EXPECT_EQ(g.vwk, 1);
    EXPECT_LE(g.mwg, 64);
    return true;
  });
}

TEST(GemmTemplateTest, GivenTheWeakestDeviceTheFallbackShouldBeValid) {
  GemmBufferTemplate t;
  for (const char* spec : {"gemm:1024,1024,1024", "gemm:33,17,29,transb=1", "gemm:1,1,1", "gemm:7,300,5:float32"}) {
    Task task = ParseOrDie(spec);
    auto space = t.MakeSpace(task, SmallDevice());
    ASSERT_TRUE(space.ok()) << spec;
    Config c = t.Fallback(task, *space);
    EXPECT_EQ(space->Check(c), "") << spec;
  }
}

TEST(GemmTemplateTest, GivenAConfigWeShouldGenerateAProgramWithBuffersLaunchAndReference) {
  GemmBufferTemplate t;
  Task task = ParseOrDie("gemm:100,64,48,batch=2,bias=1,act=relu");
  auto space = t.MakeSpace(task, BigGpu());
  ASSERT_TRUE(space.ok());
  Config c = ConfigFrom(*space, {{"MWG", 32}, {"NWG", 64}, {"MDIMC", 8}, {"NDIMC", 16}, {"KWG", 16}, {"KWI", 2},
                                 {"VWM", 2}, {"VWN", 4}, {"VWK", 4}, {"SA", 1}, {"SB", 0}, {"DB", 1}});
  ASSERT_EQ(space->Check(c), "");
  auto p = t.Generate(task, *space, c);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->buffers_size(), 4);
  EXPECT_EQ(p->buffers(0).count(), 2u * 100 * 48);
  EXPECT_EQ(p->buffers(2).name(), "bias");
  EXPECT_EQ(p->output_buffer(), "C");
  ASSERT_EQ(p->launches_size(), 1);
  const auto& l = p->launches(0);
  EXPECT_EQ(l.args_size(), 4);
  EXPECT_EQ(std::vector<uint64_t>(l.global_size().begin(), l.global_size().end()),
            (std::vector<uint64_t>{16, 4 * 8, 2}));
  EXPECT_EQ(std::vector<uint64_t>(l.local_size().begin(), l.local_size().end()), (std::vector<uint64_t>{16, 8, 1}));
  // 100 is not a multiple of MWG=32: M is guarded; N and K divide their tiles: no guards there.
  EXPECT_NE(l.source().find("if (gm >= M) continue;"), std::string::npos);
  EXPECT_EQ(l.source().find("gn < N"), std::string::npos);
  EXPECT_EQ(l.source().find("gk < K"), std::string::npos);
  EXPECT_NE(l.source().find("fmax("), std::string::npos);
  EXPECT_EQ(p->reference().launches(0).entry(), kGemmReferenceEntry);
  EXPECT_EQ(p->reference().buffers_size(), 4);
  EXPECT_GT(p->atol(), 0.0f);
  EXPECT_DOUBLE_EQ(t.Flops(task), 2.0 * 2 * 100 * 64 * 48 + 2.0 * 2 * 100 * 64);
}

TEST(GemmTemplateTest, GivenFp16TasksTheKernelShouldEnableTheExtensionAndPickTheAccumulator) {
  GemmShape s;
  s.m = s.n = s.k = 64;
  s.precision = Precision::kFloat16;
  GemmConfig c;
  std::string src = GemmKernelSource(s, c);
  EXPECT_NE(src.find("#pragma OPENCL EXTENSION cl_khr_fp16 : enable"), std::string::npos);
  EXPECT_NE(src.find("typedef half real;"), std::string::npos);
  EXPECT_NE(src.find("typedef half acc_t;"), std::string::npos);
  EXPECT_NE(GemmReferenceSource(s).find("vload_half"), std::string::npos);
}

TEST(GemmTemplateTest, GivenHalfStorageTheKernelShouldLoadHalfIntoFloatsWithoutTheExtension) {
  GemmShape s;
  s.m = s.n = s.k = 64;
  s.bias = true;
  s.precision = Precision::kFloat16Acc32;
  GemmConfig c;
  c.vwn = c.vwk = 4;
  std::string src = GemmKernelSource(s, c);
  EXPECT_EQ(src.find("cl_khr_fp16"), std::string::npos);
  EXPECT_NE(src.find("typedef float real;"), std::string::npos);  // local tiles and registers
  EXPECT_NE(src.find("typedef float acc_t;"), std::string::npos);
  EXPECT_NE(src.find("(const __global half* restrict A, const __global half* restrict B,"), std::string::npos);
  EXPECT_NE(src.find("#define LDG_K(p, off) vload_half4(0, (p) + (off))"), std::string::npos);
  EXPECT_NE(src.find("#define LDG_N(p, off) vload_half4(0, (p) + (off))"), std::string::npos);
  EXPECT_NE(src.find("vstore_half4"), std::string::npos);
  // Scalar reads straight from global memory (no local tiles) go through vload_half too.
  c = GemmConfig{};
  c.sa = c.sb = false;
  s.transb = true;
  src = GemmKernelSource(s, c);
  EXPECT_NE(src.find("(acc_t)vload_half(gm * K + gk, A)"), std::string::npos);
  EXPECT_NE(src.find("(acc_t)vload_half(gn * K + gk, B)"), std::string::npos);
  EXPECT_EQ(GemmReferenceSource(s).find("cl_khr_fp16"), std::string::npos);
}

TEST(GemmTemplateTest, GivenHalfStorageLocalTilesAndRegistersShouldBeCountedAsFloats) {
  GemmConfig c;  // 32x32 tiles, KWG 16, SA and SB
  c.db = true;
  GemmShape f32, acc32, f16;
  acc32.precision = Precision::kFloat16Acc32;
  f16.precision = Precision::kFloat16;
  EXPECT_EQ(c.LocalBytes(f32), 2u * (32 * 16 + 32 * 16) * 4);
  EXPECT_EQ(c.LocalBytes(acc32), c.LocalBytes(f32));
  EXPECT_EQ(c.LocalBytes(f16), c.LocalBytes(f32) / 2);
  EXPECT_EQ(c.Registers(acc32), c.Registers(f32));
  EXPECT_LT(c.Registers(f16), c.Registers(f32));
}

TEST(GemmTemplateTest, GivenAnInvalidConfigGenerateShouldSayWhy) {
  GemmBufferTemplate t;
  Task task = ParseOrDie("gemm:512,512,512");
  auto space = t.MakeSpace(task, SmallDevice());
  ASSERT_TRUE(space.ok());
  auto p = t.Generate(task, *space, ConfigFrom(*space, kBigConfig));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("device_work_group"), std::string::npos);
}

TEST(GemmTemplateTest, GivenAConfigDerivedFeaturesShouldDescribeIt) {
  GemmBufferTemplate t;
  Task task = ParseOrDie("gemm:4096,4096,4096");
  auto space = t.MakeSpace(task, BigGpu());
  ASSERT_TRUE(space.ok());
  auto f = t.DerivedFeatures(task, *space, ConfigFrom(*space, kBigConfig), BigGpu());
  ASSERT_EQ(f.size(), 10u);
  EXPECT_EQ(f[0], 256.0f);            // work-group size
  EXPECT_EQ(f[1], 64.0f);             // 8x8 outputs per item
  EXPECT_EQ(f[3], 2.0f * 2 * 128 * 16 * 4);  // double-buffered A and B tiles
  EXPECT_FLOAT_EQ(f[9], 2.0f * 128 * 128 / (256 * 4));
}

}  // namespace
}  // namespace tunefleet
