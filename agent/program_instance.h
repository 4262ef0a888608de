// One kernel program made real on a device: its buffers (with canary tails), images, built kernels with their
// arguments set, and the launch geometry checked against the device and kernel limits.
//
// Failures are reported by filling the job's MeasureResult (status + message) and returning false/nullptr, so the
// executor can pass them on unchanged: malformed program → HOST_GENERATION_FAILED, limits → INVALID_CONFIG,
// build → DEVICE_COMPILE_FAILED, any other OpenCL call → RUNTIME_ERROR, clobbered canary → WRONG_ANSWER.
//
// Ownership: borrows the ClApi, queue, compile cache and contents cache, which must outlive it; owns its memory objects
// and kernels. Thread safety: none.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/cl_handles.h"
#include "agent/compile_cache.h"
#include "agent/host_contents_cache.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

// What a ProgramInstance needs from the executor.
struct DeviceContext {
  const ClApi* api = nullptr;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue queue = nullptr;
  const proto::DeviceInfo* info = nullptr;
  CompileCache* cache = nullptr;
  HostContentsCache* contents = nullptr;  // initial buffer bytes; null: filled for each instance
};

class ProgramInstance {
 public:
  // Checks the program against the device limits and builds its kernels (nothing touches the device's memory
  // yet); adds build seconds (cache misses only) to result->compile_time.
  static std::unique_ptr<ProgramInstance> Build(const DeviceContext& device, const proto::KernelProgram& program,
                                                proto::MeasureResult* result);
  // Build, then Allocate.
  static std::unique_ptr<ProgramInstance> Prepare(const DeviceContext& device, const proto::KernelProgram& program,
                                                  proto::MeasureResult* result);
  // Creates and fills the buffers and images and sets the kernel arguments (uploads to the device). `filled`, when
  // given: the buffers' initial contents in the order of program.buffers(), got before (the executor gets them
  // before it takes the device lock; looked up again here, a job whose inputs pass the contents cache's limit would
  // find the first ones evicted by the last and fill them again, holding the device).
  bool Allocate(const proto::KernelProgram& program, proto::MeasureResult* result,
                const std::vector<HostContentsCache::Bytes>* filled = nullptr);

  // Enqueues the launches of `phase` in order. When `device_ns` is given, waits for them and adds their summed
  // device time (profiling events) in nanoseconds; otherwise returns without waiting.
  bool Enqueue(proto::KernelLaunch::Phase phase, uint64_t* device_ns, proto::MeasureResult* result);
  // clFinish on the queue.
  bool Finish(proto::MeasureResult* result);
  // The named buffer's elements widened to float.
  bool ReadBuffer(const std::string& name, std::vector<float>* values, proto::MeasureResult* result);
  // The named buffer's bytes as the device holds them (no canary).
  bool ReadBytes(const std::string& name, std::vector<uint8_t>* bytes, proto::MeasureResult* result);
  // Every buffer's canary tail is intact; else WRONG_ANSWER "out-of-bounds write into buffer X".
  bool CheckCanaries(proto::MeasureResult* result);
  // The element type of a buffer (FLOAT32 when unknown).
  proto::ElemType BufferType(const std::string& name) const;

 private:
  struct Buffer {
    proto::BufferSpec spec;
    size_t bytes = 0;  // payload, without the canary
    Mem mem;
  };
  struct Image {
    proto::ImageSpec spec;
    Mem mem;
  };
  struct Launch {
    std::string entry;
    proto::KernelLaunch::Phase phase = proto::KernelLaunch::TIMED;
    cl_uint dims = 1;
    std::array<size_t, 3> global{1, 1, 1};
    std::array<size_t, 3> local{1, 1, 1};
    bool has_local = false;
    // CL_KERNEL_WORK_GROUP_SIZE when the local size is over it, else 0: said if the launch is refused.
    size_t over_kernel_max = 0;
    Kernel kernel;
  };

  explicit ProgramInstance(const DeviceContext& device) : device_(device) {}
  bool CheckProgram(const proto::KernelProgram& program, proto::MeasureResult* result);
  bool CheckMemory(const proto::KernelProgram& program, proto::MeasureResult* result);
  bool CheckLaunch(const proto::KernelLaunch& launch, proto::MeasureResult* result);
  bool BuildKernels(const proto::KernelProgram& program, proto::MeasureResult* result);
  bool CreateMemory(const proto::KernelProgram& program, proto::MeasureResult* result,
                    const std::vector<HostContentsCache::Bytes>* filled);
  bool SetArgs(const proto::KernelProgram& program, proto::MeasureResult* result);
  const Buffer* FindBuffer(const std::string& name) const;
  const Image* FindImage(const std::string& name) const;

  DeviceContext device_;
  std::vector<Buffer> buffers_;
  std::vector<Image> images_;
  std::vector<Launch> launches_;
};

// Sets result->status and ->message; returns false (so `return Fail(...)` reads naturally).
bool Fail(proto::MeasureResult* result, proto::MeasureStatus status, std::string message);

}  // namespace tunefleet::agent
