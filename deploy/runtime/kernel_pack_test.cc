#include "deploy/runtime/kernel_pack.h"

#include <gtest/gtest.h>

#include "deploy/runtime/gemm_pack_testing.h"

namespace tunefleet::runtime {
namespace {

KernelPack PackOf(const nlohmann::json& j) {
  auto pack = KernelPack::Parse(j.dump());
  EXPECT_TRUE(pack.ok()) << pack.status().ToString();
  return std::move(pack).value();
}

TEST(KernelPackTest, GivenAPack_WeShouldReadItsEntriesAndPrograms) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(32, 32, 32)}));
  ASSERT_EQ(pack.kernels().size(), 1u);
  const PackedKernel& k = pack.kernels()[0];
  EXPECT_EQ(k.template_name, "gemm.buffer");
  EXPECT_EQ(k.program.launches.size(), 2u);
  EXPECT_TRUE(k.program.launches[0].setup);
  EXPECT_EQ(k.program.launches[1].local_size, (std::vector<uint64_t>{8, 8}));
  EXPECT_TRUE(k.program.FindBuffer("A")->random_init);
  EXPECT_EQ(pack.device().fingerprint, "fp");
}

TEST(KernelPackTest, GivenTheExactWorkload_FindShouldReturnItsTunedKernel) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(64, 64, 64), GemmPackEntry(32, 32, 32)}));
  auto m = pack.Find("gemm:32,32,32:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kExact);
  EXPECT_EQ(m->kernel->task, "gemm:32,32,32:float32");
}

TEST(KernelPackTest, GivenAnUnpackedWorkload_FindShouldReturnTheNearestOfTheSameOp) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(256, 256, 256), GemmPackEntry(32, 32, 32)}));
  auto m = pack.Find("gemm:40,32,32:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kNearest);
  EXPECT_EQ(m->kernel->task, "gemm:32,32,32:float32");
}

TEST(KernelPackTest, GivenOnlyAFallback_FindShouldReturnIt) {
  KernelPack pack = PackOf(GemmPack(nlohmann::json::array(), {GemmPackEntry(16, 16, 16)}));
  auto m = pack.Find("gemm:64,64,64:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kFallback);
}

TEST(KernelPackTest, GivenAnotherOpOrPrecision_FindShouldSayNotFound) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(32, 32, 32)}));
  EXPECT_EQ(pack.Find("gemm:32,32,32:float16").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(pack.Find("conv2d:1,3,8,8,4,3,3,1,1:float32").status().code(), Status::Code::kNotFound);
}

TEST(KernelPackTest, GivenSomethingElse_ParseShouldRefuseIt) {
  EXPECT_EQ(KernelPack::Parse("[1,2]").status().code(), Status::Code::kCorruption);
  EXPECT_FALSE(KernelPack::Parse(R"({"format":"other"})").ok());
  auto missing = KernelPack::Load("/nonexistent/pack.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/pack.json"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet::runtime
