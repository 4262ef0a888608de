// Run-time loading of the OpenCL ICD loader: the agent never links libOpenCL, it dlopens it and resolves every
// entry point it uses into a ClApi function table (OpenCL 1.2 entry points only, so old phone drivers work).
//
// Ownership: a ClApi owns the dlopen handle and closes it when destroyed; every OpenCL object created through it
// must be released before it (hold the ClApi in a unique_ptr that outlives them).
// Thread safety: the table is immutable after Load(); calling through it is as thread-safe as the driver.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/cl_include.h"
#include "common/status.h"

namespace tunefleet::agent {

// The entry points the agent uses: X(name) for each.
#define TF_CL_ENTRY_POINTS(X)  \
  X(clGetPlatformIDs)          \
  X(clGetPlatformInfo)         \
  X(clGetDeviceIDs)            \
  X(clGetDeviceInfo)           \
  X(clCreateContext)           \
  X(clReleaseContext)          \
  X(clCreateCommandQueue)      \
  X(clReleaseCommandQueue)     \
  X(clCreateBuffer)            \
  X(clCreateImage)             \
  X(clReleaseMemObject)        \
  X(clCreateProgramWithSource) \
  X(clBuildProgram)            \
  X(clGetProgramBuildInfo)     \
  X(clReleaseProgram)          \
  X(clCreateKernel)            \
  X(clReleaseKernel)           \
  X(clSetKernelArg)            \
  X(clGetKernelWorkGroupInfo)  \
  X(clEnqueueNDRangeKernel)    \
  X(clEnqueueWriteBuffer)      \
  X(clEnqueueReadBuffer)       \
  X(clEnqueueWriteImage)       \
  X(clFinish)                  \
  X(clGetEventProfilingInfo)   \
  X(clReleaseEvent)

class ClApi {
 public:
  // Where the loader is looked for, in order, when no explicit path is given.
  static std::vector<std::string> DefaultLibraryPaths();

  // Loads the ICD loader from `path` or, when empty, from $TUNEFLEET_OPENCL_LIB or else the first of
  // DefaultLibraryPaths() that opens. Fails with one line naming every path tried and why, or the missing symbol:
  // InvalidArgument for a path given (`path` or the variable: bad input), NotFound when no default path opens.
  static Result<std::unique_ptr<ClApi>> Load(const std::string& path = "");

  ~ClApi();
  ClApi(const ClApi&) = delete;
  ClApi& operator=(const ClApi&) = delete;

  // The path the loader was opened from.
  const std::string& library_path() const { return library_path_; }

#define TF_CL_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  TF_CL_ENTRY_POINTS(TF_CL_DECLARE_MEMBER)
#undef TF_CL_DECLARE_MEMBER

 private:
  ClApi() = default;
  void* handle_ = nullptr;
  std::string library_path_;
};

}  // namespace tunefleet::agent
