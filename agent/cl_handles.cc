#include "agent/cl_handles.h"

#include <vector>

#include "agent/cl_error.h"

namespace tunefleet::agent {

Result<Context> CreateContext(const ClApi& api, cl_device_id device) {
  cl_int err = CL_SUCCESS;
  cl_context context = api.clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  TF_RETURN_IF_ERROR(ClStatus("clCreateContext", err));
  return Context(&api, context);
}

Result<Queue> CreateProfilingQueue(const ClApi& api, cl_context context, cl_device_id device) {
  cl_int err = CL_SUCCESS;
  cl_command_queue queue = api.clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  TF_RETURN_IF_ERROR(ClStatus("clCreateCommandQueue", err));
  return Queue(&api, queue);
}

Result<Mem> CreateBuffer(const ClApi& api, cl_context context, size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem mem = api.clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  TF_RETURN_IF_ERROR(ClStatus("clCreateBuffer", err));
  return Mem(&api, mem);
}

Result<Mem> CreateImage2D(const ClApi& api, cl_context context, bool half, size_t width, size_t height) {
  cl_image_format format{};
  format.image_channel_order = CL_RGBA;
  format.image_channel_data_type = half ? CL_HALF_FLOAT : CL_FLOAT;
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width;
  desc.image_height = height;
  cl_int err = CL_SUCCESS;
  cl_mem mem = api.clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  TF_RETURN_IF_ERROR(ClStatus("clCreateImage", err));
  return Mem(&api, mem);
}

Result<Kernel> CreateKernel(const ClApi& api, cl_program program, const std::string& entry) {
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = api.clCreateKernel(program, entry.c_str(), &err);
  if (err != CL_SUCCESS) return ClStatus("clCreateKernel", err).WithContext("kernel '" + entry + "'");
  return Kernel(&api, kernel);
}

namespace {

std::string BuildLog(const ClApi& api, cl_program program, cl_device_id device, size_t max_bytes) {
  size_t size = 0;
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::vector<char> log(size + 1, '\0');
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return "";
  }
  std::string text(log.data());
  if (text.size() > max_bytes) {
    text.resize(max_bytes);
    text += "\n... (build log cut)";
  }
  return text;
}

}  // namespace

Result<Program> BuildProgram(const ClApi& api, cl_context context, cl_device_id device, const std::string& source,
                             const std::string& options, size_t max_log_bytes) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  Program program(&api, api.clCreateProgramWithSource(context, 1, &text, &length, &err));
  TF_RETURN_IF_ERROR(ClStatus("clCreateProgramWithSource", err));
  err = api.clBuildProgram(program(), 1, &device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = BuildLog(api, program(), device, max_log_bytes);
    return Status::Internal("clBuildProgram: " + ClErrorName(err) + (log.empty() ? "" : "\n" + log));
  }
  return program;
}

Result<uint64_t> EventDurationNs(const ClApi& api, cl_event event) {
  cl_ulong start = 0;
  cl_ulong end = 0;
  TF_RETURN_IF_ERROR(ClStatus("clGetEventProfilingInfo",
                              api.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                                          nullptr)));
  TF_RETURN_IF_ERROR(ClStatus("clGetEventProfilingInfo",
                              api.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end,
                                                          nullptr)));
  return end > start ? static_cast<uint64_t>(end - start) : uint64_t{0};
}

}  // namespace tunefleet::agent
