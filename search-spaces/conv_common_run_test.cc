// The trusted convolution (ReferenceConv) on the real OpenCL device (PoCL here, which has no cl_khr_fp16): the
// float16-acc32 reference reads and writes half buffers through vload_half / vstore_half and agrees with the
// float32 reference up to half rounding, and the float16-acc32 tolerance still rejects a wrong convolution. The
// same for float16 (half arithmetic) on a device with cl_khr_fp16.
#include "search-spaces/conv_common.h"

#include <string>

#include "search-spaces/conv_common_run_testing.h"

namespace tunefleet {
namespace {

class ConvCommonRun : public testing::DeviceTest {
 protected:
  // Stride 2, padding, bias and relu, 5 channels (not a multiple of 4), odd sizes.
  const ConvShape shape_ = *ConvShapeFromTask(testing::ParseTask("conv2d:2,5,7,9,6,3,3,2,1,bias=1,relu=1"));

  // The half reference of `p` against the float32 one: inputs and output were rounded to half (so the outputs
  // differ), but only by rounding: 45 products of values in [-1, 1) rounded to 11 bits, and the output rounded once.
  void ExpectHalfReferenceMatchesFloat32UpToRounding(Precision p) {
    proto::KernelProgram half = ReferenceConv(shape_, p);
    ASSERT_EQ(half.buffers(0).type(), proto::FLOAT16);
    *half.mutable_reference() = ReferenceConv(shape_, Precision::kFloat32);
    const proto::MeasureResult r = RunOnce(half);
    ASSERT_EQ(r.status(), proto::OK) << r.message();
    EXPECT_GT(r.max_abs_error(), 0.0);
    EXPECT_LT(r.max_abs_error(), 8e-3);
  }

  // A candidate that skips an input channel, checked against the reference of the same precision.
  void ExpectSkippingAnInputChannelIsAWrongAnswer(Precision p) {
    proto::KernelProgram wrong = ReferenceConv(shape_, p);
    std::string* src = wrong.mutable_launches(0)->mutable_source();
    const std::string loop = "for (int c = 0; c < CG; ++c)";
    ASSERT_NE(src->find(loop), std::string::npos);
    src->replace(src->find(loop), loop.size(), "for (int c = 0; c < CG - 1; ++c)");
    *wrong.mutable_reference() = ReferenceConv(shape_, p);
    const proto::MeasureResult r = RunOnce(wrong);
    EXPECT_EQ(r.status(), proto::WRONG_ANSWER) << r.message();
  }
};

TEST_F(ConvCommonRun, GivenHalfStorageTheReferenceShouldMatchTheFloat32ReferenceUpToRounding) {
  ExpectHalfReferenceMatchesFloat32UpToRounding(Precision::kFloat16Acc32);
}

TEST_F(ConvCommonRun, GivenHalfStorageACandidateThatSkipsAnInputChannelShouldBeAWrongAnswer) {
  ExpectSkippingAnInputChannelIsAWrongAnswer(Precision::kFloat16Acc32);
}

TEST_F(ConvCommonRun, GivenFp16AndTheExtensionTheReferenceShouldMatchTheFloat32ReferenceUpToRounding) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectHalfReferenceMatchesFloat32UpToRounding(Precision::kFloat16);
}

TEST_F(ConvCommonRun, GivenFp16AndTheExtensionACandidateThatSkipsAnInputChannelShouldBeAWrongAnswer) {
  if (!Limits().fp16) GTEST_SKIP() << kNoFp16;
  ExpectSkippingAnInputChannelIsAWrongAnswer(Precision::kFloat16);
}

}  // namespace
}  // namespace tunefleet
