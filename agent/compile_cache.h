// A cache of built cl_programs keyed by hash(source, build options, device fingerprint, driver version).
// A tuner sends the same kernel source many times (reference programs, setup kernels, repeated candidates);
// building it once per worker saves most of the compile time on phones. Configs that differ only in knobs the
// source does not use (a work-group split) share a program, and the model proposes such neighbours in one plan of 64.
// On PoCL a program held costs about 0.75 MB (a worker's RSS grew 280 → 465 MB over a 320-trial GEMM tune). A
// segmented cache (16 built once, 48 asked for again) cut that to 355 MB but halved the hits of an xgb conv tune
// (jobs whose programs were all cached: 47, 32, 30 of 160 in three runs → 11, 24 in two): not kept, since phones'
// programs are small and slow to build.
//
// Ownership: owns the cached Programs; Get() returns a borrowed cl_program valid until the cache is destroyed or
// the entry is evicted (least recently inserted first, beyond `capacity`), i.e. use it before the next Get().
// Thread safety: none; one worker thread uses it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "agent/cl_handles.h"
#include "common/status.h"

namespace tunefleet::agent {

class CompileCache {
 public:
  // `device_identity`: the device fingerprint and driver version, part of every key.
  CompileCache(const ClApi* api, cl_context context, cl_device_id device, std::string device_identity,
               size_t capacity = 256);
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  struct Hit {
    cl_program program = nullptr;  // borrowed, see above
    double compile_seconds = 0;    // 0 on a cache hit
  };
  // Builds (or finds) the program. Build failures are not cached; their Status carries the bounded build log.
  Result<Hit> Get(const std::string& source, const std::string& options);

 private:
  struct Entry {
    std::string source;
    std::string options;
    Program program;
  };
  uint64_t Key(const std::string& source, const std::string& options) const;

  const ClApi* api_;
  cl_context context_;
  cl_device_id device_;
  std::string device_identity_;
  size_t capacity_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::deque<uint64_t> order_;  // insertion order, for eviction
};

}  // namespace tunefleet::agent
