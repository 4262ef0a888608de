// Example application: runs the pack's kernel for a GEMM workload on an OpenCL device with random operands
// and checks it against a CPU product. Before it relies on the pack, it says when the pack was tuned on
// another device or driver (the kernels still run; their configs were chosen for that device).
//   tunefleet_runtime_example PACK.json gemm:M,N,K:float32 [PLATFORM]
// PLATFORM: the index of the OpenCL platform whose first device runs the kernel (default 0).
// Exit code 0 when the numbers agree; 2 for a bad command line (a PLATFORM this machine lacks included), a pack that
// cannot be read, a pack without a kernel for the workload, or one whose kernel's launch geometry is not what its
// config gives for the workload (gemm_launch_check.h: checked before anything runs); 1 when the device fails it (a
// platform without a device, a build or a run that fails, numbers that disagree).
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "common/cl_error_name.h"
#include "common/printable.h"
#include "deploy/runtime/gemm_launch_check.h"
#include "deploy/runtime/pack_device.h"
#include "deploy/runtime/pack_runner.h"
#include "deploy/runtime/pack_spec.h"

using tunefleet::runtime::ClMem;
using tunefleet::runtime::ClObject;
using tunefleet::runtime::KernelPack;
using tunefleet::runtime::PackRunner;

namespace {

constexpr char kUsage[] =
    "usage: tunefleet_runtime_example PACK.json gemm:M,N,K:float32 [PLATFORM]\n"
    "Runs the kernel pack's GEMM kernel for the workload on the first device of OpenCL platform PLATFORM\n"
    "(default 0) and checks the product against the CPU's. Exit code 0 when they agree.\n";

using ClContext = ClObject<cl_context, clReleaseContext>;
using ClQueue = ClObject<cl_command_queue, clReleaseCommandQueue>;

// One line: a compiler's build log comes in several, which are joined with " | "; other control characters (a pack
// path's escape sequence) are escaped, not sent to the terminal.
int Fail(const std::string& what, int code = 1) {
  std::string line;
  for (char c : what) {
    if (c == '\r') continue;
    if (c != '\n') {
      line += c;
    } else if (!line.empty() && line.compare(line.size() - std::min<size_t>(line.size(), 3), 3, " | ") != 0) {
      line += " | ";
    }
  }
  while (line.size() >= 3 && line.compare(line.size() - 3, 3, " | ") == 0) line.resize(line.size() - 3);
  std::fprintf(stderr, "tunefleet_runtime_example: error: %s\n", tunefleet::Printable(line, std::string::npos).c_str());
  return code;
}

// M, N, K of "gemm:M,N,K[:precision]" as the tuner writes it (pack_spec.h), with each operand below 2^31 elements as
// the tuner's gemm tasks are; the reason when the spec is something else.
std::string GemmSizes(const std::string& spec, int* m, int* n, int* k) {
  tunefleet::Result<tunefleet::runtime::SpecParts> parts = tunefleet::runtime::ParseWorkload(spec);
  if (!parts.ok()) return parts.status().message();
  if (parts->op != "gemm" || parts->sizes.size() != 3 || !parts->extras.empty()) {
    return "the example runs gemm:M,N,K workloads (three sizes, no named parameters)";
  }
  constexpr uint64_t kMaxElements = uint64_t{1} << 31;
  const std::vector<uint64_t>& s = parts->sizes;
  for (uint64_t v : s)
    if (v < 1 || v >= kMaxElements) return "a size is not from 1 to 2^31 - 1";
  if (s[0] * s[2] >= kMaxElements || s[2] * s[1] >= kMaxElements || s[0] * s[1] >= kMaxElements) {
    return "an operand has 2^31 elements or more";
  }
  *m = static_cast<int>(s[0]);
  *n = static_cast<int>(s[1]);
  *k = static_cast<int>(s[2]);
  return {};
}

// How many OpenCL platforms this machine has (0 when the call fails).
cl_uint PlatformCount() {
  cl_uint count = 0;
  return clGetPlatformIDs(0, nullptr, &count) == CL_SUCCESS ? count : 0;
}

// The first device of platform `index`, or nullptr.
cl_device_id FirstDevice(cl_uint index) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || index >= count) return nullptr;
  std::vector<cl_platform_id> platforms(count);
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platforms[index], CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    return nullptr;
  }
  return device;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("tunefleet_runtime_example %s\n", TUNEFLEET_VERSION);
    return 0;
  }
  if (argc != 3 && argc != 4) return Fail("expected PACK.json and a gemm:M,N,K:float32 workload (--help)", 2);
  unsigned platform_index = 0;
  if (argc == 4 && (std::sscanf(argv[3], "%u", &platform_index) != 1 || std::to_string(platform_index) != argv[3])) {
    return Fail(std::string("PLATFORM '") + argv[3] + "' is not a platform index (0, 1, ...)", 2);
  }
  int M = 0, N = 0, K = 0;
  if (std::string why = GemmSizes(argv[2], &M, &N, &K); !why.empty()) {
    return Fail(tunefleet::Printable(argv[2]) + ": not a gemm:M,N,K:float32 workload (" + why + ")", 2);
  }
  auto pack = KernelPack::Load(argv[1]);
  if (!pack.ok()) return Fail(pack.status().message(), 2);
  auto match = pack->Find(argv[2]);
  if (!match.ok()) return Fail(match.status().message(), 2);
  // The example runs the workload's own kernel only (a nearest one was built for other sizes).
  if (match->kind != tunefleet::runtime::MatchKind::kExact) {
    const bool nearest = match->kind == tunefleet::runtime::MatchKind::kNearest;
    return Fail(std::string("the pack has no tuned kernel for exactly this workload (") +
                    (nearest ? "the nearest tuned one is for " : "only its template's untuned fallback, for ") +
                    match->kernel->task + ")",
                2);
  }
  // The example fills and checks float32 data: a kernel of another precision would be judged wrong by the device.
  if (const std::string& task = match->kernel->task; !task.ends_with(":float32")) {
    return Fail("the example runs float32 kernels only, and the pack's kernel for this workload is " + task, 2);
  }
  // A launch larger than the program's own (a global_size raised by hand), or operands' counts edited down, would
  // let the kernel read and write past the buffers below.
  if (auto s = tunefleet::runtime::CheckGemmBufferLaunch(*match->kernel, M, N, K); !s.ok()) return Fail(s.message(), 2);
  // The application's own OpenCL objects; the device is found before anything is said of the kernel.
  if (const cl_uint platforms = PlatformCount(); platform_index >= platforms) {
    return Fail("PLATFORM " + std::to_string(platform_index) + " is out of range: this machine has " +
                    std::to_string(platforms) + " OpenCL platform(s)",
                2);
  }
  cl_device_id device = FirstDevice(platform_index);
  if (device == nullptr) return Fail("no OpenCL device on platform " + std::to_string(platform_index));
  std::printf("%s: %s kernel of %s (template %s v%d, %.4f ms when tuned)\n", argv[2],
              tunefleet::runtime::MatchKindName(match->kind), match->kernel->task.c_str(),
              match->kernel->template_name.c_str(), match->kernel->template_version, match->kernel->latency_ms);
  auto comparison = tunefleet::runtime::CompareDevice(pack->device(), device);
  if (!comparison.ok()) return Fail(comparison.status().message());
  if (!comparison->differences.empty()) {
    std::fprintf(stderr, "tunefleet_runtime_example: warning: the pack was %s; its kernels may be slow or fail here\n",
                 comparison->Describe().c_str());
  }
  cl_int err = CL_SUCCESS;
  ClContext context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) return Fail("clCreateContext failed: " + tunefleet::ClErrorName(err));
  ClQueue queue(clCreateCommandQueue(context.get(), device, 0, &err));
  if (err != CL_SUCCESS) return Fail("clCreateCommandQueue failed: " + tunefleet::ClErrorName(err));

  int rc = 0;
  {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a, b, c;
    try {
      a.resize(size_t(M) * K);
      b.resize(size_t(K) * N);
      // NaN: an element the kernel leaves unwritten reads as a wrong answer, not as a 0 that may be right.
      c.assign(size_t(M) * N, std::numeric_limits<float>::quiet_NaN());
    } catch (const std::bad_alloc&) {
      return Fail("not enough host memory for the operands of " + std::string(argv[2]));
    }
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
    auto buffer = [&](std::vector<float>& host) {
      return ClMem(clCreateBuffer(context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float),
                                  host.data(), &err));
    };
    ClMem da = buffer(a), db = buffer(b), dc = buffer(c);
    auto runner = PackRunner::Build(context.get(), device, *match->kernel, {"A", "B", "C"});
    if (!runner.ok()) {
      rc = Fail(runner.status().message());
    } else if (auto s = runner->Run(queue.get(), {{"A", da.get()}, {"B", db.get()}, {"C", dc.get()}}); !s.ok()) {
      rc = Fail(s.message());
    } else {
      err = clEnqueueReadBuffer(queue.get(), dc.get(), CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr,
                                nullptr);
      if (err != CL_SUCCESS) return Fail("clEnqueueReadBuffer of C failed: " + tunefleet::ClErrorName(err));
      // A NaN or an infinity is a wrong answer: std::max(err, NaN) kept the old error, and a kernel writing NaN
      // everywhere passed with an error of 0. An element is right within the tuner's own float32 tolerance (its
      // check of a GEMM): |got - want| <= atol + rtol * |want|, rtol 1e-3, atol 1e-4 * max(1, K / 256). An
      // absolute 1e-3 * K grew with K where the sums grow with its square root: a kernel that skipped its last tile
      // of K = 4000 passed with an error of 3.5.
      const double rtol = 1e-3, atol = 1e-4 * std::max(1.0, K / 256.0);
      double max_err = 0;
      size_t not_finite = 0, wrong = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double want = 0;
          for (int k = 0; k < K; ++k) want += double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
          const float got = c[size_t(i) * N + j];
          if (!std::isfinite(got)) {
            ++not_finite;
            continue;
          }
          max_err = std::max(max_err, std::fabs(want - got));
          if (std::fabs(want - got) > atol + rtol * std::fabs(want)) ++wrong;
        }
      std::printf("max abs error vs CPU: %.3g", max_err);
      if (not_finite > 0) std::printf("; %zu of %zu elements are NaN or infinite", not_finite, c.size());
      if (wrong > 0) std::printf("; %zu of %zu elements outside the tolerance", wrong, c.size());
      std::printf("\n");
      rc = not_finite == 0 && wrong == 0 ? 0 : 1;
    }
  }
  return rc;
}
