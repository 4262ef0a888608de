// Test-only: a kernel pack with a GEMM program (C[MxN] = A[MxK] * B[KxN], row-major) whose setup launch
// transposes B into a scratch buffer, as a real tuned program packs its operands, so the runtime's
// setup/timed ordering, scratch memory and scalar arguments are all exercised.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tunefleet::runtime {

inline nlohmann::json GemmPackEntry(int64_t m, int64_t n, int64_t k, const std::string& tmpl = "gemm.buffer") {
  const char* transpose = R"(
__kernel void transpose(__global const float* B, __global float* Bt, int K, int N) {
  int j = get_global_id(0), kk = get_global_id(1);
  if (j < N && kk < K) Bt[j * K + kk] = B[kk * N + j];
})";
  const char* gemm = R"(
__kernel void gemm(__global const float* A, __global const float* Bt, __global float* C, int M, int N, int K) {
  int j = get_global_id(0), i = get_global_id(1);
  if (i >= M || j >= N) return;
  ACC acc = 0;
  for (int kk = 0; kk < K; ++kk) acc += A[i * K + kk] * Bt[j * K + kk];
  C[i * N + j] = acc;
})";
  auto round8 = [](int64_t v) { return (v + 7) / 8 * 8; };
  nlohmann::json program = {
      {"buffers",
       {{{"name", "A"}, {"type", "float32"}, {"count", m * k}, {"init", "random"}},
        {{"name", "B"}, {"type", "float32"}, {"count", k * n}, {"init", "random"}},
        {{"name", "Bt"}, {"type", "float32"}, {"count", k * n}, {"init", "zeros"}},
        {{"name", "C"}, {"type", "float32"}, {"count", m * n}, {"init", "zeros"}}}},
      {"images", nlohmann::json::array()},
      {"launches",
       {{{"phase", "setup"},
         {"entry", "transpose"},
         {"source", transpose},
         {"build_options", ""},
         {"args", {{{"buffer", "B"}}, {{"buffer", "Bt"}}, {{"i32", k}}, {{"i32", n}}}},
         {"global_size", {n, k}},
         {"local_size", nlohmann::json::array()}},
        {{"phase", "timed"},
         {"entry", "gemm"},
         {"source", gemm},
         {"build_options", "-DACC=float"},
         {"args", {{{"buffer", "A"}}, {{"buffer", "Bt"}}, {{"buffer", "C"}}, {{"i32", m}}, {{"i32", n}}, {{"i32", k}}}},
         {"global_size", {round8(n), round8(m)}},
         {"local_size", {8, 8}}}}},
      {"output_buffer", "C"}};
  std::string spec = "gemm:" + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + ":float32";
  return {{"task", spec},          {"op", "gemm"},        {"precision", "float32"},
          {"template", tmpl},      {"template_version", 1}, {"config", {{"tile", 8}}},
          {"record_id", 7},        {"latency_ms", 0.5},   {"gflops", 1.0},
          {"program", program}};
}

inline nlohmann::json GemmPack(nlohmann::json kernels, nlohmann::json fallbacks = nlohmann::json::array()) {
  return {{"format", "tunefleet-kernel-pack"},
          {"version", 1},
          {"device", {{"name", "cpu"}, {"vendor", "pocl"}, {"driver", "x"}, {"opencl_version", "OpenCL 3.0"},
                      {"fingerprint", "fp"}}},
          {"kernels", kernels},
          {"fallbacks", fallbacks}};
}

}  // namespace tunefleet::runtime
