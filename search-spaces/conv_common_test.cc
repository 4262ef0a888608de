// The shared convolution pieces: shapes read from task specs, split choices, local-size knobs, references.
#include "search-spaces/conv_common.h"

#include <gtest/gtest.h>

#include "search-spaces/conv_common_testing.h"

namespace tunefleet {
namespace {

using testing::ParseTask;

TEST(ConvCommon, GivenAConv2dSpecWeShouldReadEveryParameter) {
  Result<ConvShape> s = ConvShapeFromTask(ParseTask("conv2d:2,8,15,17,16,3,3,2,1,dilation=2,groups=4,bias=1,relu=1"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->n, 2);
  EXPECT_EQ(s->c_per_group(), 2);
  EXPECT_EQ(s->k_per_group(), 4);
  EXPECT_EQ(s->oh(), (15 + 2 - 4 - 1) / 2 + 1);
  EXPECT_EQ(s->ow(), (17 + 2 - 4 - 1) / 2 + 1);
  EXPECT_TRUE(s->bias);
  EXPECT_EQ(s->act, Activation::kRelu);
  EXPECT_DOUBLE_EQ(s->Flops(), 2.0 * 2 * 16 * s->oh() * s->ow() * 2 * 9);
}

TEST(ConvCommon, GivenADepthwiseSpecWeShouldSetGroupsToChannels) {
  Result<ConvShape> s = ConvShapeFromTask(ParseTask("dwconv2d:1,32,14,14,3,3,1,1,multiplier=2"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->groups, 32);
  EXPECT_EQ(s->k, 64);
  EXPECT_TRUE(s->depthwise());
}

TEST(ConvCommon, GivenAKernelLargerThanThePaddedInputWeShouldNameTheSpec) {
  Result<ConvShape> s = ConvShapeFromTask(ParseTask("conv2d:1,4,2,2,4,5,5,1,0"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("conv2d:1,4,2,2,4,5,5,1,0"), std::string::npos) << s.status().ToString();
  // With a stride above 1 the output size's division truncated toward zero: a 4x4 kernel over 3x3 gave 1x1.
  EXPECT_FALSE(ConvShapeFromTask(ParseTask("conv2d:1,4,3,3,4,4,4,2,0")).ok());
  EXPECT_TRUE(ConvShapeFromTask(ParseTask("conv2d:1,4,4,4,4,4,4,2,0")).ok());  // exactly fits: 1x1
}

// relu=1 is the older spelling of act=relu: with another act it won without a word (the kernel applied relu where
// the spec also said sigmoid).
TEST(ConvCommon, GivenReluOneWithAnotherActivationWeShouldRefuseTheContradiction) {
  Result<ConvShape> s = ConvShapeFromTask(ParseTask("conv2d:1,3,7,7,5,3,3,1,1,relu=1,act=sigmoid"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("relu=1 contradicts act=sigmoid: give one of them"), std::string::npos)
      << s.status().ToString();
  EXPECT_FALSE(ConvShapeFromTask(ParseTask("dwconv2d:1,8,7,7,3,3,1,1,relu=1,act=relu6")).ok());
  Result<ConvShape> same = ConvShapeFromTask(ParseTask("conv2d:1,3,7,7,5,3,3,1,1,relu=1,act=relu"));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->act, Activation::kRelu);
  EXPECT_EQ(ConvShapeFromTask(ParseTask("conv2d:1,3,7,7,5,3,3,1,1,relu=1"))->act, Activation::kRelu);
}

// A task made from a model's attributes is not bounded by Task::Parse: a pad of 2^62 overflowed h + 2 * pad (and
// was then called "larger than the padded input").
TEST(ConvCommon, GivenASizeOrPadPastTheTaskBoundWeShouldSaySoWithoutOverflowing) {
  Task task = ParseTask("conv2d:1,4,8,8,4,3,3,1,1");
  for (auto& [name, value] : task.params)
    if (name == "pad") value = int64_t{1} << 62;
  Result<ConvShape> s = ConvShapeFromTask(task);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("larger than 16777216"), std::string::npos) << s.status().ToString();
}

TEST(ConvCommon, GivenAnExtentFactorSplitsShouldListEveryOrderedFactorizationOnce) {
  // 12 = 2^2 * 3: ordered 3-factorizations = C(4,2) * C(3,2) = 18.
  const auto all = FactorSplits(12, 3);
  EXPECT_EQ(all.size(), 18u);
  for (const auto& f : all) EXPECT_EQ(f[0] * f[1] * f[2], 12);
  const auto kept = FactorSplits(12, 3, [](const std::vector<int64_t>& f) { return f[2] <= 2; });
  // Inner 1: ordered pairs of 12 (6 divisors); inner 2: ordered pairs of 6 (4 divisors).
  EXPECT_EQ(kept.size(), 6u + 4u);
}

TEST(ConvCommon, GivenTheReferenceWeShouldDeclareTheSameInputsAsCandidates) {
  const ConvShape s = *ConvShapeFromTask(ParseTask("conv2d:1,3,5,5,4,3,3,1,1,bias=1"));
  const proto::KernelProgram ref = ReferenceConv(s, Precision::kFloat32);
  proto::KernelProgram cand;
  AddConvBuffers(s, Precision::kFloat32, &cand);
  ASSERT_EQ(ref.buffers_size(), cand.buffers_size());
  for (int i = 0; i < ref.buffers_size(); ++i)
    EXPECT_EQ(ref.buffers(i).SerializeAsString(), cand.buffers(i).SerializeAsString());
  EXPECT_EQ(ref.output_buffer(), "out");
}

}  // namespace
}  // namespace tunefleet
