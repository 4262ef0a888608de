// Example application: runs the pack's kernel for a GEMM workload on the first OpenCL device with random
// operands and checks it against a CPU product.
//   tunefleet_runtime_example PACK.json gemm:M,N,K:float32
// Exit code 0 when the numbers agree, 1 otherwise.
#include <CL/cl.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "deploy/runtime/pack_runner.h"

using tunefleet::runtime::ClMem;
using tunefleet::runtime::KernelPack;
using tunefleet::runtime::PackRunner;

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "tunefleet_runtime_example: error: %s\n", what.c_str());
  return 1;
}

// Reads M, N, K from "gemm:M,N,K[...]".
bool GemmSizes(const std::string& spec, int* m, int* n, int* k) {
  return std::sscanf(spec.c_str(), "gemm:%d,%d,%d", m, n, k) == 3 && *m > 0 && *n > 0 && *k > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: tunefleet_runtime_example PACK.json gemm:M,N,K:float32");
  int M = 0, N = 0, K = 0;
  if (!GemmSizes(argv[2], &M, &N, &K)) return Fail(std::string(argv[2]) + ": not a gemm:M,N,K spec");
  auto pack = KernelPack::Load(argv[1]);
  if (!pack.ok()) return Fail(pack.status().message());
  auto match = pack->Find(argv[2]);
  if (!match.ok()) return Fail(match.status().message());
  std::printf("%s: %s kernel of %s (template %s v%d, %.4f ms when tuned)\n", argv[2],
              tunefleet::runtime::MatchKindName(match->kind), match->kernel->task.c_str(),
              match->kernel->template_name.c_str(), match->kernel->template_version, match->kernel->latency_ms);
  if (match->kernel->task != argv[2]) return Fail("the pack has no kernel built for exactly this workload");

  // The application's own OpenCL objects.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    return Fail("no OpenCL device");
  }
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return Fail("clCreateContext failed");
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return Fail("clCreateCommandQueue failed");

  int rc = 0;
  {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(size_t(M) * K), b(size_t(K) * N), c(size_t(M) * N, 0);
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
    auto buffer = [&](std::vector<float>& host) {
      return ClMem(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float),
                                  host.data(), &err));
    };
    ClMem da = buffer(a), db = buffer(b), dc = buffer(c);
    auto runner = PackRunner::Build(context, device, *match->kernel, {"A", "B", "C"});
    if (!runner.ok()) {
      rc = Fail(runner.status().message());
    } else if (auto s = runner->Run(queue, {{"A", da.get()}, {"B", db.get()}, {"C", dc.get()}}); !s.ok()) {
      rc = Fail(s.message());
    } else {
      clEnqueueReadBuffer(queue, dc.get(), CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr, nullptr);
      double max_err = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double want = 0;
          for (int k = 0; k < K; ++k) want += double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
          max_err = std::max(max_err, std::fabs(want - c[size_t(i) * N + j]));
        }
      std::printf("max abs error vs CPU: %.3g\n", max_err);
      rc = max_err < 1e-3 * K ? 0 : 1;
    }
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return rc;
}
