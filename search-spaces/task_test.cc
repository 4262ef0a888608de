#include "search-spaces/task.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

std::string ParseError(const std::string& spec) {
  auto t = Task::Parse(spec);
  return t.ok() ? "parsed" : t.status().message();
}

TEST(TaskTest, GivenAGemmSpecWeShouldReadSizesExtrasAndPrecision) {
  auto t = Task::Parse("gemm:256,128,64,batch=4,transb=1,bias=1,act=relu:float16-acc32");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->op, "gemm");
  EXPECT_EQ(t->Get("M"), 256);
  EXPECT_EQ(t->Get("N"), 128);
  EXPECT_EQ(t->Get("K"), 64);
  EXPECT_EQ(t->Get("batch"), 4);
  EXPECT_EQ(t->Get("transb"), 1);
  EXPECT_EQ(static_cast<Activation>(t->Get("act")), Activation::kRelu);
  EXPECT_EQ(t->precision, Precision::kFloat16Acc32);
  EXPECT_EQ(t->ToSpec(), "gemm:256,128,64,batch=4,transb=1,bias=1,act=relu:float16-acc32");
}

TEST(TaskTest, GivenNoExtrasWeShouldFillDefaultsAndPrintACanonicalSpec) {
  auto t = Task::Parse(" gemm:32,16,8 ");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Get("batch"), 1);
  EXPECT_EQ(t->Get("bias"), 0);
  EXPECT_EQ(t->ToSpec(), "gemm:32,16,8:float32");
  EXPECT_EQ(*t, *Task::Parse("gemm:32,16,8,batch=1:float32"));
}

TEST(TaskTest, GivenMalformedSpecsWeShouldNameTheSpecAndTheProblem) {
  EXPECT_EQ(ParseError("gemm:256,x,256"), "gemm:256,x,256: 'x' is not an integer");
  EXPECT_EQ(ParseError("gemm:256,256"), "gemm:256,256: gemm needs 3 sizes M,N,K, got 2");
  EXPECT_EQ(ParseError("gemm:0,4,4"), "gemm:0,4,4: M=0 is out of range (1..16777216)");
  // A size of 2^31 made the split enumeration run for ever; sizes near 2^63 wrapped the element counts.
  EXPECT_EQ(ParseError("conv2d:1,3,2147483648,32,16,3,3,1,1"),
            "conv2d:1,3,2147483648,32,16,3,3,1,1: H=2147483648 is out of range (1..16777216)");
  EXPECT_EQ(ParseError("gemm:16777216,16777216,16777216,batch=16777216"),
            "gemm:16777216,16777216,16777216,batch=16777216: its sizes multiply to more than 2^62");
  EXPECT_NE(ParseError("gemm:4,4,4:float64").find("unknown precision 'float64'"), std::string::npos);
  EXPECT_NE(ParseError("matmul:4,4,4").find("unknown op 'matmul'"), std::string::npos);
  EXPECT_NE(ParseError("gemm:4,4,4,foo=1").find("unknown parameter 'foo'"), std::string::npos);
  EXPECT_NE(ParseError("gemm:4,4,4,act=swish").find("'swish' is not a valid act"), std::string::npos);
  EXPECT_NE(ParseError("gemm:4,4,4,bias=1,bias=0").find("given twice"), std::string::npos);
  EXPECT_NE(ParseError("gemm:4,4,4,5").find("at most 3"), std::string::npos);
  EXPECT_NE(ParseError("gemm").find("expected op:params"), std::string::npos);
  EXPECT_EQ(ParseError("gemm:064,64,64"), "gemm:064,64,64: '064' has a leading zero");
  EXPECT_EQ(ParseError("gemm:64,64,64,bias=01"), "gemm:64,64,64,bias=01: '01' has a leading zero");
  EXPECT_EQ(ParseError("conv2d:1,3,8,8,4,3,3,1,-00"), "conv2d:1,3,8,8,4,3,3,1,-00: '-00' has a leading zero");
  EXPECT_TRUE(Task::Parse("gemm:64,64,64,bias=0").ok());
}

// A spec of 100 KB (a generated command line gone wrong) was echoed whole in its error line, twice: the spec and
// the value are quoted up to 200 bytes, with their length.
TEST(TaskTest, GivenAVeryLongSpecItsErrorShouldQuoteItCut) {
  const std::string size(100000, '1');
  const std::string error = ParseError("gemm:" + size + "x,8,8");
  EXPECT_LT(error.size(), 600u) << error.substr(0, 1000);
  EXPECT_EQ(error.rfind("gemm:" + size.substr(0, 195) + "... (100010 bytes): '" + size.substr(0, 200) +
                            "... (100001 bytes)' is not an integer",
                        0),
            0u)
      << error.substr(0, 1000);
}

TEST(TaskTest, GivenConvolutionSpecsWeShouldUseTheirPositionalNames) {
  auto c = Task::Parse("conv2d:1,64,56,56,128,3,3,2,1,groups=2,relu=1:float16");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Get("K"), 128);
  EXPECT_EQ(c->Get("stride"), 2);
  EXPECT_EQ(c->Get("pad"), 1);
  EXPECT_EQ(c->Get("groups"), 2);
  EXPECT_EQ(c->Get("dilation"), 1);
  EXPECT_EQ(c->ToSpec(), "conv2d:1,64,56,56,128,3,3,2,1,groups=2,relu=1:float16");
  auto d = Task::Parse("dwconv2d:1,32,112,112,3,3,1,0");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Get("pad"), 0);
  auto p = Task::Parse("pool:1,64,112,112,3,3,2,1,mode=avg");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Get("mode"), 1);
}

TEST(TaskTest, GivenActivationsWeShouldRenderOpenClExpressions) {
  EXPECT_EQ(ActivationExpr(Activation::kNone, "v"), "v");
  EXPECT_EQ(ActivationExpr(Activation::kRelu, "v"), "fmax(v, 0.0f)");
  EXPECT_STREQ(ActivationName(Activation::kRelu6), "relu6");
}

}  // namespace
}  // namespace tunefleet
