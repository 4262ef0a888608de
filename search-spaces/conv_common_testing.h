// Test helpers for the convolution-family templates (header-only, test binaries only).
// RunSample executes a template's candidates on the first OpenCL device (PoCL here) through the agent's real
// executor; it is used only by *_run_test.cc files, which link tf_agent.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "search-spaces/task.h"
#include "search-spaces/template.h"

namespace tunefleet::testing {

inline Task ParseTask(const std::string& spec) {
  Result<Task> t = Task::Parse(spec);
  EXPECT_TRUE(t.ok()) << spec << ": " << t.status().ToString();
  return t.ok() ? *t : Task{};
}

// Limits of a small GPU-like device with images and fp16, for generation-only tests.
inline DeviceLimits GpuLikeLimits() {
  DeviceLimits l;
  l.max_work_group_size = 1024;
  l.max_work_item_sizes[0] = l.max_work_item_sizes[1] = l.max_work_item_sizes[2] = 1024;
  l.local_mem_bytes = 32 * 1024;
  l.image_support = true;
  l.image2d_max_width = 16384;
  l.image2d_max_height = 16384;
  l.fp16 = true;
  l.is_gpu = true;
  return l;
}

// Every divisor of n, ascending (for independent counts of split knobs).
inline std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// (b, v, t) splits of n: every (block, vthread, thread) triple whose product is n, for independent counts of
// 3-way split knobs.
inline std::vector<std::array<int64_t, 3>> Splits3(int64_t n) {
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t v = 1; v <= n; ++v)
    for (int64_t t = 1; t <= n; ++t)
      if (n % (v * t) == 0) out.push_back({n / (v * t), v, t});
  return out;
}

// `count` distinct valid configs drawn with a fixed seed (fewer when the space holds fewer).
inline std::vector<Config> SampleConfigs(const Space& space, int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> seen;
  std::vector<Config> out;
  for (int tries = 0; tries < count * 20 && static_cast<int>(out.size()) < count; ++tries) {
    std::optional<uint64_t> i = space.SampleValid(rng);
    if (!i) break;
    bool dup = false;
    for (uint64_t s : seen) dup = dup || s == *i;
    if (dup) continue;
    seen.push_back(*i);
    out.push_back(space.FromIndex(*i));
  }
  return out;
}

}  // namespace tunefleet::testing
