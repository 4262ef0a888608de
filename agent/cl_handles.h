// RAII owners of OpenCL handles. Each is move-only and releases its handle exactly once through the ClApi it was
// made with; release never throws and ignores errors. The raw handle is borrowed with operator()().
//
// Ownership: the ClApi must outlive every handle made through it.
// Thread safety: a handle object is not thread-safe; the OpenCL objects follow the driver's rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "agent/cl_api.h"
#include "common/status.h"

namespace tunefleet::agent {

template <typename H, auto kRelease>
class ClHandle {
 public:
  ClHandle() = default;
  // Takes ownership of `handle` (one reference).
  ClHandle(const ClApi* api, H handle) : api_(api), handle_(handle) {}
  ~ClHandle() { Reset(); }

  ClHandle(ClHandle&& other) noexcept : api_(other.api_), handle_(std::exchange(other.handle_, nullptr)) {}
  ClHandle& operator=(ClHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      api_ = other.api_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ClHandle(const ClHandle&) = delete;
  ClHandle& operator=(const ClHandle&) = delete;

  H operator()() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  // The address of the raw handle, for APIs that take an array of handles (clSetKernelArg, wait lists).
  const H* ptr() const { return &handle_; }

  void Reset() {
    if (handle_ != nullptr) (api_->*kRelease)(handle_);
    handle_ = nullptr;
  }

 private:
  const ClApi* api_ = nullptr;
  H handle_ = nullptr;
};

using Context = ClHandle<cl_context, &ClApi::clReleaseContext>;
using Queue = ClHandle<cl_command_queue, &ClApi::clReleaseCommandQueue>;
using Program = ClHandle<cl_program, &ClApi::clReleaseProgram>;
using Kernel = ClHandle<cl_kernel, &ClApi::clReleaseKernel>;
using Mem = ClHandle<cl_mem, &ClApi::clReleaseMemObject>;
using Event = ClHandle<cl_event, &ClApi::clReleaseEvent>;

Result<Context> CreateContext(const ClApi& api, cl_device_id device);
// An in-order queue with CL_QUEUE_PROFILING_ENABLE.
Result<Queue> CreateProfilingQueue(const ClApi& api, cl_context context, cl_device_id device);
Result<Mem> CreateBuffer(const ClApi& api, cl_context context, size_t bytes);
// image2d_t, RGBA, CL_FLOAT or CL_HALF_FLOAT channels; width and height in pixels.
Result<Mem> CreateImage2D(const ClApi& api, cl_context context, bool half, size_t width, size_t height);
Result<Kernel> CreateKernel(const ClApi& api, cl_program program, const std::string& entry);

// A program built for one device. On a build failure the Status message is
// "clBuildProgram: CL_BUILD_PROGRAM_FAILURE" followed by the build log cut to `max_log_bytes`.
Result<Program> BuildProgram(const ClApi& api, cl_context context, cl_device_id device, const std::string& source,
                             const std::string& options, size_t max_log_bytes = 4096);

// Device time of a finished event, from CL_PROFILING_COMMAND_START to _END, in nanoseconds.
Result<uint64_t> EventDurationNs(const ClApi& api, cl_event event);

}  // namespace tunefleet::agent
