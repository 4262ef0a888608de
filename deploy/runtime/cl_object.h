// RAII ownership of one OpenCL object (cl_mem, cl_program, cl_kernel): released exactly once, move-only.
// Release errors are ignored by design (nothing can be done about them in a destructor).
// Thread safety: as the underlying OpenCL object (OpenCL objects are thread-safe except cl_kernel
// argument setting).
#pragma once

#include <CL/cl.h>

#include <utility>

namespace tunefleet::runtime {

template <typename T, cl_int (*Release)(T)>
class ClObject {
 public:
  ClObject() = default;
  explicit ClObject(T handle) : handle_(handle) {}  // takes ownership of one reference
  ~ClObject() {
    if (handle_) Release(handle_);
  }
  ClObject(ClObject&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  ClObject& operator=(ClObject&& o) noexcept {
    if (this != &o) {
      if (handle_) Release(handle_);
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  ClObject(const ClObject&) = delete;
  ClObject& operator=(const ClObject&) = delete;

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  T handle_ = nullptr;
};

using ClMem = ClObject<cl_mem, clReleaseMemObject>;
using ClProgram = ClObject<cl_program, clReleaseProgram>;
using ClKernel = ClObject<cl_kernel, clReleaseKernel>;

}  // namespace tunefleet::runtime
