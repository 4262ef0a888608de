#include "deploy/runtime/pack_runner.h"

#include <algorithm>
#include <vector>

#include "common/cl_error_name.h"

namespace tunefleet::runtime {
namespace {

Status ClError(const char* call, cl_int err, const std::string& what = "") {
  return Status::Internal(std::string(call) + " failed: " + ClErrorName(err) + (what.empty() ? "" : " (" + what + ")"));
}

// Build logs can be long; keep the head, which names the first error.
constexpr size_t kMaxBuildLog = 4096;

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (log.size() > kMaxBuildLog) {
    log.resize(kMaxBuildLog);
    log += "...";
  }
  return log;
}

Result<ClMem> MakeImage(cl_context context, const PackImage& im) {
  cl_image_format format{CL_RGBA, im.type == ElemType::kFloat16 ? static_cast<cl_channel_type>(CL_HALF_FLOAT)
                                                                 : static_cast<cl_channel_type>(CL_FLOAT)};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = im.width;
  desc.image_height = im.height;
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  if (err != CL_SUCCESS) return ClError("clCreateImage", err, im.name);
  return ClMem(mem);
}

using ClQueue = ClObject<cl_command_queue, clReleaseCommandQueue>;

// Refuses a scratch buffer larger than the device can allocate at once, before asking the driver for it.
Status CheckAllocSize(cl_device_id device, const PackBuffer& b, const std::string& task) {
  cl_ulong max_alloc = 0;
  cl_int err = clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc, nullptr);
  if (err != CL_SUCCESS) return ClError("clGetDeviceInfo", err, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  if (b.bytes > max_alloc) {
    return Status::InvalidArgument(task + ": buffer '" + b.name + "' needs " + std::to_string(b.bytes) +
                                   " bytes, the device allocates at most " + std::to_string(max_alloc));
  }
  return Status::OK();
}

// A device buffer of the pack buffer's size, zero-filled on the device through `queue` (no host copy).
Result<ClMem> MakeZeroBuffer(cl_context context, cl_command_queue queue, const PackBuffer& b) {
  const size_t size = std::max<uint64_t>(1, b.bytes);
  cl_int err = CL_SUCCESS;
  ClMem mem(clCreateBuffer(context, CL_MEM_READ_WRITE, size, nullptr, &err));
  if (err != CL_SUCCESS) return ClError("clCreateBuffer", err, b.name);
  const cl_uchar zero = 0;
  err = clEnqueueFillBuffer(queue, mem.get(), &zero, sizeof(zero), 0, size, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return ClError("clEnqueueFillBuffer", err, b.name);
  return mem;
}

// Allocates and zero-fills the program's buffers the application does not provide, on a queue of its own.
Status MakeScratchBuffers(cl_context context, cl_device_id device, const PackedKernel& kernel,
                          const std::vector<std::string>& app_buffers, std::map<std::string, ClMem>* scratch) {
  ClQueue queue;
  for (const PackBuffer& b : kernel.program.buffers) {
    bool provided = std::find(app_buffers.begin(), app_buffers.end(), b.name) != app_buffers.end();
    if (provided) continue;
    if (b.random_init) {
      return Status::InvalidArgument(kernel.task + ": input buffer '" + b.name + "' must be provided");
    }
    TF_RETURN_IF_ERROR(CheckAllocSize(device, b, kernel.task));
    if (!queue) {
      cl_int err = CL_SUCCESS;
      queue = ClQueue(clCreateCommandQueue(context, device, 0, &err));
      if (err != CL_SUCCESS) return ClError("clCreateCommandQueue", err);
    }
    TF_ASSIGN_OR_RETURN((*scratch)[b.name], MakeZeroBuffer(context, queue.get(), b));
  }
  if (!queue) return Status::OK();
  cl_int err = clFinish(queue.get());
  if (err != CL_SUCCESS) return ClError("clFinish", err, "zero-filling scratch buffers");
  return Status::OK();
}

// The launch's work sizes as OpenCL takes them; a local size must match the global one's rank.
Status LaunchGeometry(const PackLaunch& l, std::vector<size_t>* global, std::vector<size_t>* local) {
  if (l.global_size.empty() || (!l.local_size.empty() && l.local_size.size() != l.global_size.size())) {
    return Status::InvalidArgument(l.entry + ": local_size has " + std::to_string(l.local_size.size()) +
                                   " dimensions, global_size " + std::to_string(l.global_size.size()));
  }
  global->assign(l.global_size.begin(), l.global_size.end());
  local->assign(l.local_size.begin(), l.local_size.end());
  return Status::OK();
}

std::string Geometry(const std::vector<uint64_t>& sizes) {
  std::string out;
  for (uint64_t v : sizes) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

// What a launch asks of the built kernel that this device cannot give, checked before the first Run so that the
// application reads why instead of CL_INVALID_WORK_GROUP_SIZE or CL_OUT_OF_RESOURCES: its work-group (against the
// items per dimension the device allows and the items this compiled kernel allows, which register pressure lowers),
// and its local memory (the kernel's own __local arrays and its __local arguments). A pack tuned on another device
// is the usual cause.
Status CheckLaunchFits(cl_device_id device, cl_kernel kernel, const PackLaunch& l) {
  const std::string where = "kernel '" + l.entry + "': ";
  const std::string other_device = " on this device (a pack tuned on another device?)";
  if (!l.local_size.empty()) {
    cl_uint dims = 0;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof(dims), &dims, nullptr);
    if (err != CL_SUCCESS) return ClError("clGetDeviceInfo", err, "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS");
    std::vector<size_t> max_items(std::max<cl_uint>(dims, 1), 0);
    err = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, max_items.size() * sizeof(size_t), max_items.data(),
                          nullptr);
    if (err != CL_SUCCESS) return ClError("clGetDeviceInfo", err, "CL_DEVICE_MAX_WORK_ITEM_SIZES");
    for (size_t d = 0; d < l.local_size.size(); ++d) {
      if (d >= max_items.size() || l.local_size[d] > max_items[d]) {
        return Status::InvalidArgument(where + "local size " + Geometry(l.local_size) + ": dimension " +
                                       std::to_string(d) + " exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES " +
                                       (d < max_items.size() ? std::to_string(max_items[d]) : "(none)") +
                                       other_device);
      }
    }
    size_t kernel_max = 0;
    err = clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kernel_max), &kernel_max, nullptr);
    if (err != CL_SUCCESS) return ClError("clGetKernelWorkGroupInfo", err, "CL_KERNEL_WORK_GROUP_SIZE");
    uint64_t items = 1;
    bool overflow = false;
    for (uint64_t v : l.local_size) overflow = overflow || __builtin_mul_overflow(items, v, &items);
    if (overflow || items > kernel_max) {
      return Status::InvalidArgument(where + "local size " + Geometry(l.local_size) +
                                     (overflow ? "" : " = " + std::to_string(items) + " work-items") +
                                     " > CL_KERNEL_WORK_GROUP_SIZE " + std::to_string(kernel_max) +
                                     " on this device (register pressure, or a pack tuned on another device)");
    }
  }
  cl_ulong static_local = 0, device_local = 0;
  cl_int err = clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(static_local), &static_local,
                                        nullptr);
  if (err != CL_SUCCESS) return ClError("clGetKernelWorkGroupInfo", err, "CL_KERNEL_LOCAL_MEM_SIZE");
  err = clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(device_local), &device_local, nullptr);
  if (err != CL_SUCCESS) return ClError("clGetDeviceInfo", err, "CL_DEVICE_LOCAL_MEM_SIZE");
  uint64_t local = static_local;
  for (const PackArg& a : l.args) {
    if (a.kind == PackArg::Kind::kLocalBytes) local += a.local_bytes;  // each at most 2^31 (Parse)
  }
  if (local > device_local) {
    return Status::InvalidArgument(where + "local memory " + std::to_string(local) + " B > CL_DEVICE_LOCAL_MEM_SIZE " +
                                   std::to_string(device_local) + other_device);
  }
  return Status::OK();
}

}  // namespace

Result<PackRunner> PackRunner::Build(cl_context context, cl_device_id device, const PackedKernel& kernel,
                                     const std::vector<std::string>& app_buffers) {
  PackRunner r;
  r.kernel_ = &kernel;
  const PackProgram& prog = kernel.program;
  for (const std::string& name : app_buffers) {
    if (!prog.FindBuffer(name)) {
      return Status::InvalidArgument(kernel.task + ": the program has no buffer '" + name + "' (app_buffers)");
    }
  }
  TF_RETURN_IF_ERROR(MakeScratchBuffers(context, device, kernel, app_buffers, &r.scratch_));
  for (const PackImage& im : prog.images) {
    TF_ASSIGN_OR_RETURN(r.scratch_[im.name], MakeImage(context, im));
  }
  for (const PackLaunch& l : prog.launches) {
    const char* src = l.source.c_str();
    size_t len = l.source.size();
    cl_int err = CL_SUCCESS;
    ClProgram program(clCreateProgramWithSource(context, 1, &src, &len, &err));
    if (err != CL_SUCCESS) return ClError("clCreateProgramWithSource", err, l.entry);
    err = clBuildProgram(program.get(), 1, &device, l.build_options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) return ClError("clBuildProgram", err, l.entry + ": " + BuildLog(program.get(), device));
    ClKernel k(clCreateKernel(program.get(), l.entry.c_str(), &err));
    if (err != CL_SUCCESS) return ClError("clCreateKernel", err, l.entry);
    TF_RETURN_IF_ERROR(CheckLaunchFits(device, k.get(), l).WithContext(kernel.task));
    r.programs_.push_back(std::move(program));
    r.kernels_.push_back(std::move(k));
  }
  return r;
}

Status PackRunner::Run(cl_command_queue queue, const std::map<std::string, cl_mem>& buffers) {
  // A runner moved from holds no kernels (its pointer to the pack's entry was copied, not cleared).
  if (kernel_ == nullptr || kernels_.size() != kernel_->program.launches.size()) {
    return Status::FailedPrecondition("PackRunner::Run on a runner that was moved from or never built");
  }
  const PackProgram& prog = kernel_->program;
  // Checks sizes once: a program built for a larger workload must never write past the app's buffers.
  for (const auto& [name, mem] : buffers) {
    const PackBuffer* b = prog.FindBuffer(name);
    if (!b) return Status::InvalidArgument(kernel_->task + ": the program has no buffer '" + name + "'");
    cl_mem_object_type type = 0;
    cl_int err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof(type), &type, nullptr);
    if (err != CL_SUCCESS) return ClError("clGetMemObjectInfo", err, name);
    if (type != CL_MEM_OBJECT_BUFFER) {
      return Status::InvalidArgument(kernel_->task + ": '" + name + "' is a buffer of the program, given an image "
                                     "or another memory object that is not a buffer");
    }
    size_t size = 0;
    err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
    if (err != CL_SUCCESS) return ClError("clGetMemObjectInfo", err, name);
    if (size < b->bytes) {
      return Status::InvalidArgument(kernel_->task + ": buffer '" + name + "' holds " + std::to_string(size) +
                                     " bytes, the program needs " + std::to_string(b->bytes));
    }
  }
  auto memory = [&](const std::string& name) -> cl_mem {
    if (auto it = buffers.find(name); it != buffers.end()) return it->second;
    if (auto it = scratch_.find(name); it != scratch_.end()) return it->second.get();
    return nullptr;
  };
  // Setup launches first, then the timed ones, each group in pack order.
  for (bool setup_pass : {true, false}) {
    for (size_t i = 0; i < prog.launches.size(); ++i) {
      const PackLaunch& l = prog.launches[i];
      if (l.setup != setup_pass) continue;
      cl_kernel k = kernels_[i].get();
      for (cl_uint a = 0; a < l.args.size(); ++a) {
        const PackArg& arg = l.args[a];
        cl_int err = CL_SUCCESS;
        switch (arg.kind) {
          case PackArg::Kind::kBuffer:
          case PackArg::Kind::kImage: {
            cl_mem mem = memory(arg.name);
            if (!mem) return Status::InvalidArgument(kernel_->task + ": no memory named '" + arg.name + "'");
            err = clSetKernelArg(k, a, sizeof(cl_mem), &mem);
            break;
          }
          case PackArg::Kind::kI32: err = clSetKernelArg(k, a, sizeof(cl_int), &arg.i32); break;
          case PackArg::Kind::kF32: err = clSetKernelArg(k, a, sizeof(cl_float), &arg.f32); break;
          case PackArg::Kind::kLocalBytes: err = clSetKernelArg(k, a, arg.local_bytes, nullptr); break;
        }
        if (err != CL_SUCCESS) return ClError("clSetKernelArg", err, l.entry + " arg " + std::to_string(a));
      }
      std::vector<size_t> global, local;
      TF_RETURN_IF_ERROR(LaunchGeometry(l, &global, &local).WithContext(kernel_->task));
      cl_int err = clEnqueueNDRangeKernel(queue, k, static_cast<cl_uint>(global.size()), nullptr, global.data(),
                                          local.empty() ? nullptr : local.data(), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return ClError("clEnqueueNDRangeKernel", err, l.entry);
    }
  }
  cl_int err = clFinish(queue);
  if (err != CL_SUCCESS) return ClError("clFinish", err);
  return Status::OK();
}

}  // namespace tunefleet::runtime
