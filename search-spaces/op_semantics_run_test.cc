// The pool and elementwise references share their window and expression code with the candidates, so the check of
// each config finds work-size errors there, not a wrong operation (found by the kernel-correctness review). Here the
// references are held to kernels written in this test from ONNX's definitions (MaxPool and AveragePool with
// count_include_pad = 0, Add, Mul, Sub, Relu, Clip(0, 6), Sigmoid), on inputs in [-8, 8) so that relu6's clip at 6 is
// reached; and a kernel that gets the operation wrong must fail the check. On the real OpenCL device (PoCL here).
#include <string>

#include "search-spaces/conv_common_run_testing.h"
#include "search-spaces/elementwise_worksize.h"
#include "search-spaces/pool_worksize.h"

namespace tunefleet {
namespace {

class OpSemanticsRun : public testing::DeviceTest {
 protected:
  // The template's program for `spec` (its fallback config) with the candidate's source replaced by `source` (same
  // entry and arguments) and every random input drawn from [-8, 8).
  static proto::MeasureResult RunWritten(const Template& tmpl, const std::string& spec, const std::string& source) {
    const Task task = testing::ParseTask(spec);
    Result<Space> space = tmpl.MakeSpace(task, Limits());
    EXPECT_TRUE(space.ok()) << space.status().ToString();
    if (!space.ok()) return {};
    Result<proto::KernelProgram> prog = tmpl.Generate(task, *space, tmpl.Fallback(task, *space));
    EXPECT_TRUE(prog.ok()) << prog.status().ToString();
    if (!prog.ok()) return {};
    prog->mutable_launches(0)->set_source(source);
    for (proto::KernelProgram* p : {&*prog, prog->mutable_reference()}) {
      for (proto::BufferSpec& b : *p->mutable_buffers()) {
        if (b.init() != proto::BufferSpec::RANDOM) continue;
        b.set_lo(-8.0f);
        b.set_hi(8.0f);
      }
    }
    return RunOnce(*prog);
  }
};

// One work-item per element; `expr` of a and b.
std::string Eltwise(int64_t count, const std::string& expr) {
  return "__kernel void eltwise(__global const float* A, __global const float* B, __global float* out) {\n"
         "  const long i = get_global_id(0);\n  if (i >= " +
         std::to_string(count) + ") return;\n  const float a = A[i], b = B[i];\n  out[i] = " + expr + ";\n}\n";
}

TEST_F(OpSemanticsRun, GivenKernelsWrittenFromOnnxEveryElementwiseKindShouldMatchItsReference) {
  const ElementwiseWorksizeTemplate eltwise;
  const int64_t n = 2 * 3 * 5 * 7;
  const std::pair<const char*, const char*> kinds[] = {
      {"add", "a + b"},
      {"mul", "a * b"},
      {"sub", "a - b"},
      {"relu", "a > 0.0f ? a : 0.0f"},
      {"relu6", "a < 0.0f ? 0.0f : (a > 6.0f ? 6.0f : a)"},
      {"sigmoid", "1.0f / (1.0f + exp(-a))"}};
  for (const auto& [kind, expr] : kinds) {
    const proto::MeasureResult r =
        RunWritten(eltwise, std::string("elementwise:2,3,5,7,kind=") + kind, Eltwise(n, expr));
    EXPECT_EQ(r.status(), proto::OK) << kind << ": " << r.message();
  }
}

TEST_F(OpSemanticsRun, GivenAWrongOperationTheElementwiseCheckShouldFail) {
  const ElementwiseWorksizeTemplate eltwise;
  const int64_t n = 2 * 3 * 5 * 7;
  EXPECT_EQ(RunWritten(eltwise, "elementwise:2,3,5,7,kind=sub", Eltwise(n, "b - a")).status(), proto::WRONG_ANSWER);
  // relu for relu6: equal below 6, so inputs in [-1, 1) could not tell them apart.
  EXPECT_EQ(RunWritten(eltwise, "elementwise:2,3,5,7,kind=relu6", Eltwise(n, "a > 0.0f ? a : 0.0f")).status(),
            proto::WRONG_ANSWER);
}

// NCHW pooling, one work-item per output; padding is outside the input: skipped by max, not counted by the average
// (ONNX count_include_pad = 0). `divisor`: the average's divisor as an expression of `valid` (the window's elements
// inside the input).
std::string Pool(int64_t nc, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad, bool avg,
                 const std::string& divisor = "valid") {
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  auto s = [](int64_t v) { return std::to_string(v); };
  return "__kernel void pool(__global const float* data, __global float* out) {\n"
         "  const long i = get_global_id(0);\n  if (i >= " + s(nc * oh * ow) + ") return;\n"
         "  const long plane = i / " + s(oh * ow) + ";\n"
         "  const int oy = (i / " + s(ow) + ") % " + s(oh) + ", ox = i % " + s(ow) + ";\n"
         "  float best = -INFINITY, sum = 0.0f;\n  int valid = 0;\n"
         "  for (int ky = 0; ky < " + s(k) + "; ++ky)\n    for (int kx = 0; kx < " + s(k) + "; ++kx) {\n"
         "      const int y = oy * " + s(stride) + " - " + s(pad) + " + ky, x = ox * " + s(stride) + " - " + s(pad) +
         " + kx;\n"
         "      if (y < 0 || y >= " + s(h) + " || x < 0 || x >= " + s(w) + ") continue;\n"
         "      const float v = data[plane * " + s(h * w) + " + y * " + s(w) + " + x];\n"
         "      best = v > best ? v : best;\n      sum += v;\n      ++valid;\n    }\n"
         "  out[i] = " + (avg ? "sum / (float)(" + divisor + ")" : std::string("best")) + ";\n}\n";
}

TEST_F(OpSemanticsRun, GivenKernelsWrittenFromOnnxMaxAverageAndGlobalPoolingShouldMatchTheirReferences) {
  const PoolWorksizeTemplate pool;
  const proto::MeasureResult max = RunWritten(pool, "pool:2,3,9,11,3,3,2,1,mode=max", Pool(6, 9, 11, 3, 2, 1, false));
  EXPECT_EQ(max.status(), proto::OK) << max.message();
  const proto::MeasureResult avg = RunWritten(pool, "pool:2,3,9,11,3,3,2,1,mode=avg", Pool(6, 9, 11, 3, 2, 1, true));
  EXPECT_EQ(avg.status(), proto::OK) << avg.message();
  // Global average: one window of the whole plane.
  const proto::MeasureResult global =
      RunWritten(pool, "pool:2,3,5,7,1,1,1,0,mode=avg,global=1",
                 "__kernel void pool(__global const float* data, __global float* out) {\n"
                 "  const long i = get_global_id(0);\n  if (i >= 6) return;\n  float sum = 0.0f;\n"
                 "  for (int j = 0; j < 35; ++j) sum += data[i * 35 + j];\n  out[i] = sum / 35.0f;\n}\n");
  EXPECT_EQ(global.status(), proto::OK) << global.message();
}

TEST_F(OpSemanticsRun, GivenAnAverageThatCountsThePaddingThePoolCheckShouldFail) {
  const PoolWorksizeTemplate pool;
  EXPECT_EQ(RunWritten(pool, "pool:2,3,9,11,3,3,2,1,mode=avg", Pool(6, 9, 11, 3, 2, 1, true, "9")).status(),
            proto::WRONG_ANSWER);
}

}  // namespace
}  // namespace tunefleet
