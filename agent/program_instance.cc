#include "agent/program_instance.h"

#include <chrono>
#include <limits>
#include <sstream>
#include <utility>

#include "agent/cl_error.h"
#include "agent/host_buffer.h"
#include "proto/program_checks.h"

namespace tunefleet::agent {

bool Fail(proto::MeasureResult* result, proto::MeasureStatus status, std::string message) {
  result->set_status(status);
  result->set_message(std::move(message));
  return false;
}

namespace {

bool FailCl(proto::MeasureResult* result, const Status& status) {
  return Fail(result, proto::RUNTIME_ERROR, status.message());
}

// Sizes from the peer's program (element counts, pixels, work-items, local bytes) are multiplied and summed with
// these: false when the result does not fit in 64 bits, so a size that wrapped around can never pass a limit check.
bool CheckedMul(uint64_t a, uint64_t b, uint64_t* product) { return !__builtin_mul_overflow(a, b, product); }
bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* sum) { return !__builtin_add_overflow(a, b, sum); }

// The product of the first `dims` sizes; false when it does not fit in a size_t.
bool Product(const std::array<size_t, 3>& size, cl_uint dims, size_t* product) {
  *product = 1;
  for (cl_uint d = 0; d < dims; ++d) {
    if (__builtin_mul_overflow(*product, size[d], product)) return false;
  }
  return true;
}

// "32x32=1024" for a local size.
std::string Geometry(const std::array<size_t, 3>& size, cl_uint dims) {
  std::ostringstream text;
  for (cl_uint d = 0; d < dims; ++d) text << (d ? "x" : "") << size[d];
  size_t product = 0;
  if (dims > 1) text << "=" << (Product(size, dims, &product) ? std::to_string(product) : "more than 2^64");
  return text.str();
}

// The payload bytes of a buffer (count elements, no canary); false when they do not fit in 64 bits.
bool BufferBytes(const proto::BufferSpec& spec, uint64_t* bytes) {
  return CheckedMul(spec.count(), ElementBytes(spec.type()), bytes);
}

// The bytes of an RGBA image (4 elements a pixel); false when they do not fit in 64 bits.
bool ImageBytes(const proto::ImageSpec& spec, uint64_t* bytes) {
  return CheckedMul(spec.width(), spec.height(), bytes) && CheckedMul(*bytes, 4 * ElementBytes(spec.type()), bytes);
}

}  // namespace

std::unique_ptr<ProgramInstance> ProgramInstance::Build(const DeviceContext& device,
                                                        const proto::KernelProgram& program,
                                                        proto::MeasureResult* result) {
  std::unique_ptr<ProgramInstance> instance(new ProgramInstance(device));
  if (!instance->CheckProgram(program, result) || !instance->BuildKernels(program, result)) return nullptr;
  return instance;
}

std::unique_ptr<ProgramInstance> ProgramInstance::Prepare(const DeviceContext& device,
                                                          const proto::KernelProgram& program,
                                                          proto::MeasureResult* result) {
  std::unique_ptr<ProgramInstance> instance = Build(device, program, result);
  if (!instance || !instance->Allocate(program, result)) return nullptr;
  return instance;
}

bool ProgramInstance::Allocate(const proto::KernelProgram& program, proto::MeasureResult* result,
                               const std::vector<HostContentsCache::Bytes>* filled) {
  return CreateMemory(program, result, filled) && SetArgs(program, result);
}

// Structure (proto/program_checks.h), then the device's limits: everything that can be rejected before compiling.
bool ProgramInstance::CheckProgram(const proto::KernelProgram& program, proto::MeasureResult* result) {
  if (std::string problem = StructureProblem(program); !problem.empty()) {
    return Fail(result, proto::HOST_GENERATION_FAILED, problem);
  }
  if (!CheckMemory(program, result)) return false;
  for (const auto& launch : program.launches()) {
    if (!CheckLaunch(launch, result)) return false;
  }
  return true;
}

// The buffers and images: within the device's limits and the agent's memory budget.
bool ProgramInstance::CheckMemory(const proto::KernelProgram& program, proto::MeasureResult* result) {
  for (const auto& buffer : program.buffers()) {
    // The canary tail comes on top of the payload in one allocation: both must fit in a size_t too.
    uint64_t bytes = 0;
    const bool counted = BufferBytes(buffer, &bytes);
    // The allocation holds the canary too, so the payload may use the device's largest allocation less it.
    const uint64_t max_alloc = device_.info->max_alloc_bytes();
    if (!counted || max_alloc < kCanaryBytes || bytes > max_alloc - kCanaryBytes ||
        bytes > std::numeric_limits<size_t>::max() - kCanaryBytes) {
      return Fail(result, proto::INVALID_CONFIG,
                  "buffer '" + buffer.name() + "' of " + std::to_string(buffer.count()) + " elements (" +
                      (counted ? std::to_string(bytes) : "more than 2^64") + " bytes, with the agent's " +
                      std::to_string(kCanaryBytes) + "-byte canary after it) exceeds " +
                      "CL_DEVICE_MAX_MEM_ALLOC_SIZE " + std::to_string(max_alloc));
    }
  }
  for (const auto& image : program.images()) {
    if (!device_.info->image_support()) return Fail(result, proto::INVALID_CONFIG, "the device has no image support");
    if (image.width() == 0 || image.height() == 0 || image.width() > device_.info->image2d_max_width() ||
        image.height() > device_.info->image2d_max_height()) {
      return Fail(result, proto::INVALID_CONFIG,
                  "image '" + image.name() + "' is " + std::to_string(image.width()) + "x" +
                      std::to_string(image.height()) + ", the device allows up to " +
                      std::to_string(device_.info->image2d_max_width()) + "x" +
                      std::to_string(device_.info->image2d_max_height()));
    }
    uint64_t bytes = 0;
    if (!ImageBytes(image, &bytes)) {
      return Fail(result, proto::INVALID_CONFIG,
                  "image '" + image.name() + "' of " + std::to_string(image.width()) + "x" +
                      std::to_string(image.height()) + " pixels has more bytes than the host can count");
    }
  }
  // Memory budget: the program's buffers and images together may take at most 3/4 of the device's global
  // memory (the agent keeps host copies of the same size, and the driver needs room of its own), so a peer
  // cannot make the agent exhaust the device or the host. The total is summed without overflow.
  uint64_t total = 0;
  bool counted = true;
  for (const auto& buffer : program.buffers()) {
    uint64_t bytes = 0;
    counted = counted && BufferBytes(buffer, &bytes) && CheckedAdd(total, bytes, &total);
  }
  for (const auto& image : program.images()) {
    uint64_t bytes = 0;
    counted = counted && ImageBytes(image, &bytes) && CheckedAdd(total, bytes, &total);
  }
  const uint64_t budget = device_.info->global_mem_bytes() / 4 * 3;
  if (!counted || total > budget) {
    return Fail(result, proto::INVALID_CONFIG,
                "the program needs " + (counted ? std::to_string(total) : std::string("more than 2^64")) +
                    " bytes of buffers and images, over the agent's memory budget of " + std::to_string(budget) +
                    " bytes (3/4 of CL_DEVICE_GLOBAL_MEM_SIZE)");
  }
  return true;
}

// One launch of a program whose structure is checked: its local memory, sizes and work-group fit the device. Adds it
// to launches_.
bool ProgramInstance::CheckLaunch(const proto::KernelLaunch& launch, proto::MeasureResult* result) {
  const std::string where = "kernel '" + launch.entry() + "'";
  const int dims = launch.global_size_size();
  uint64_t local_bytes = 0;
  bool local_counted = true;
  for (const auto& arg : launch.args()) {
    if (arg.has_local_bytes()) {
      local_counted = local_counted && CheckedAdd(local_bytes, arg.local_bytes(), &local_bytes);
    }
  }
  if (!local_counted || local_bytes > device_.info->local_mem_bytes()) {
    return Fail(result, proto::INVALID_CONFIG,
                where + ": local memory " + (local_counted ? std::to_string(local_bytes) : "more than 2^64") +
                    " B > CL_DEVICE_LOCAL_MEM_SIZE " + std::to_string(device_.info->local_mem_bytes()));
  }

  Launch out;
  out.entry = launch.entry();
  out.phase = launch.phase();
  out.dims = static_cast<cl_uint>(dims);
  out.has_local = launch.local_size_size() != 0;
  for (int d = 0; d < dims; ++d) {
    out.global[d] = launch.global_size(d);
    if (!out.has_local) continue;
    out.local[d] = launch.local_size(d);
    if (out.local[d] == 0) return Fail(result, proto::INVALID_CONFIG, where + ": local size 0");
    if (d < device_.info->max_work_item_sizes_size() && out.local[d] > device_.info->max_work_item_sizes(d)) {
      return Fail(result, proto::INVALID_CONFIG,
                  where + ": local size[" + std::to_string(d) + "] " + std::to_string(out.local[d]) +
                      " > CL_DEVICE_MAX_WORK_ITEM_SIZES[" + std::to_string(d) + "] " +
                      std::to_string(device_.info->max_work_item_sizes(d)));
    }
    if (out.global[d] % out.local[d] != 0) {
      return Fail(result, proto::INVALID_CONFIG,
                  where + ": global size " + Geometry(out.global, out.dims) + " is not a multiple of local size " +
                      Geometry(out.local, out.dims) + " in dimension " + std::to_string(d));
    }
  }
  size_t items = 0;
  if (out.has_local && (!Product(out.local, out.dims, &items) || items > device_.info->max_work_group_size())) {
    return Fail(result, proto::INVALID_CONFIG,
                where + ": local size " + Geometry(out.local, out.dims) + " > CL_DEVICE_MAX_WORK_GROUP_SIZE " +
                    std::to_string(device_.info->max_work_group_size()));
  }
  // More work-items than a size_t holds could never finish, and drivers multiply the sizes themselves.
  if (!Product(out.global, out.dims, &items)) {
    return Fail(result, proto::INVALID_CONFIG,
                where + ": global size " + Geometry(out.global, out.dims) + " is more work-items than size_t holds");
  }
  launches_.push_back(std::move(out));
  return true;
}

bool ProgramInstance::BuildKernels(const proto::KernelProgram& program, proto::MeasureResult* result) {
  for (int i = 0; i < program.launches_size(); ++i) {
    const proto::KernelLaunch& launch = program.launches(i);
    Launch& out = launches_[i];
    const auto compile_start = std::chrono::steady_clock::now();
    Result<CompileCache::Hit> built = device_.cache->Get(launch.source(), launch.build_options());
    if (!built.ok()) {
      // The time the failed build took is the job's too (it was reported as 0 s).
      result->set_compile_time(result->compile_time() +
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count());
      return Fail(result, proto::DEVICE_COMPILE_FAILED, "kernel '" + launch.entry() + "': " + built.status().message());
    }
    result->set_compile_time(result->compile_time() + built->compile_seconds);
    Result<Kernel> kernel = CreateKernel(*device_.api, built->program, launch.entry());
    if (!kernel.ok()) return Fail(result, proto::DEVICE_COMPILE_FAILED, kernel.status().message());
    out.kernel = std::move(kernel).value();

    // Register pressure shows up here: the compiled kernel may allow fewer work-items than the device. A local size
    // over it is still launched: NVIDIA's driver (580, H200) says 256 for a kernel of 10 registers and runs it with
    // 1024 work-items, while a driver that holds to it refuses the launch, which Enqueue then says in these terms.
    size_t kernel_max = 0;
    Status query = ClStatus("clGetKernelWorkGroupInfo", device_.api->clGetKernelWorkGroupInfo(
                                                            out.kernel(), device_.device, CL_KERNEL_WORK_GROUP_SIZE,
                                                            sizeof(kernel_max), &kernel_max, nullptr));
    if (!query.ok()) return FailCl(result, query);
    size_t items = 0;  // fits: CheckLaunch held it to CL_DEVICE_MAX_WORK_GROUP_SIZE
    if (out.has_local && Product(out.local, out.dims, &items) && items > kernel_max) out.over_kernel_max = kernel_max;
    cl_ulong static_local = 0;
    query = ClStatus("clGetKernelWorkGroupInfo",
                     device_.api->clGetKernelWorkGroupInfo(out.kernel(), device_.device, CL_KERNEL_LOCAL_MEM_SIZE,
                                                           sizeof(static_local), &static_local, nullptr));
    if (query.ok() && static_local > device_.info->local_mem_bytes()) {
      return Fail(result, proto::INVALID_CONFIG,
                  "kernel '" + out.entry + "': local memory " + std::to_string(static_local) +
                      " B > CL_DEVICE_LOCAL_MEM_SIZE " + std::to_string(device_.info->local_mem_bytes()));
    }
  }
  return true;
}

bool ProgramInstance::CreateMemory(const proto::KernelProgram& program, proto::MeasureResult* result,
                                   const std::vector<HostContentsCache::Bytes>* filled) {
  const std::vector<uint8_t>& canary = CanaryPattern();
  for (int i = 0; i < program.buffers_size(); ++i) {
    const proto::BufferSpec& spec = program.buffers(i);
    const HostContentsCache::Bytes contents =
        filled != nullptr && static_cast<size_t>(i) < filled->size() ? (*filled)[static_cast<size_t>(i)]
        : device_.contents ? device_.contents->Get(spec)
                           : std::make_shared<const std::vector<uint8_t>>(InitialContents(spec));
    const size_t payload = contents->size();
    Result<Mem> mem = CreateBuffer(*device_.api, device_.context, payload + canary.size());
    if (!mem.ok()) return FailCl(result, mem.status().WithContext("buffer '" + spec.name() + "'"));
    // The payload, then the canary tail right after it (two writes: the payload is not copied to append it).
    Status write = ClStatus("clEnqueueWriteBuffer",
                            device_.api->clEnqueueWriteBuffer(device_.queue, (*mem)(), CL_TRUE, 0, payload,
                                                              contents->data(), 0, nullptr, nullptr));
    if (write.ok()) {
      write = ClStatus("clEnqueueWriteBuffer",
                       device_.api->clEnqueueWriteBuffer(device_.queue, (*mem)(), CL_TRUE, payload, canary.size(),
                                                         canary.data(), 0, nullptr, nullptr));
    }
    if (!write.ok()) return FailCl(result, write);
    buffers_.push_back(Buffer{spec, payload, std::move(mem).value()});
  }
  for (const auto& spec : program.images()) {
    const bool half = spec.type() == proto::FLOAT16;
    Result<Mem> mem = CreateImage2D(*device_.api, device_.context, half, spec.width(), spec.height());
    if (!mem.ok()) return FailCl(result, mem.status().WithContext("image '" + spec.name() + "'"));
    // Images start as zeros; setup launches fill them.
    uint64_t bytes = 0;  // counted without overflow by CheckProgram
    if (!ImageBytes(spec, &bytes)) {
      return Fail(result, proto::INVALID_CONFIG, "image '" + spec.name() + "' has more bytes than the host can count");
    }
    std::vector<uint8_t> zeros(bytes, 0);
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {spec.width(), spec.height(), 1};
    Status write = ClStatus("clEnqueueWriteImage",
                            device_.api->clEnqueueWriteImage(device_.queue, (*mem)(), CL_TRUE, origin, region, 0, 0,
                                                             zeros.data(), 0, nullptr, nullptr));
    if (!write.ok()) return FailCl(result, write);
    images_.push_back(Image{spec, std::move(mem).value()});
  }
  return true;
}

bool ProgramInstance::SetArgs(const proto::KernelProgram& program, proto::MeasureResult* result) {
  for (int i = 0; i < program.launches_size(); ++i) {
    const proto::KernelLaunch& launch = program.launches(i);
    cl_kernel kernel = launches_[i].kernel();
    for (int a = 0; a < launch.args_size(); ++a) {
      const proto::KernelArg& arg = launch.args(a);
      cl_int err = CL_SUCCESS;
      if (arg.has_buffer()) {
        err = device_.api->clSetKernelArg(kernel, a, sizeof(cl_mem), FindBuffer(arg.buffer())->mem.ptr());
      } else if (arg.has_image()) {
        err = device_.api->clSetKernelArg(kernel, a, sizeof(cl_mem), FindImage(arg.image())->mem.ptr());
      } else if (arg.has_i32()) {
        const cl_int value = arg.i32();
        err = device_.api->clSetKernelArg(kernel, a, sizeof(value), &value);
      } else if (arg.has_f32()) {
        const cl_float value = arg.f32();
        err = device_.api->clSetKernelArg(kernel, a, sizeof(value), &value);
      } else {
        err = device_.api->clSetKernelArg(kernel, a, arg.local_bytes(), nullptr);
      }
      if (err != CL_SUCCESS) {
        return Fail(
            result, proto::RUNTIME_ERROR,
            "clSetKernelArg(kernel '" + launch.entry() + "', arg " + std::to_string(a) + "): " + ClErrorName(err));
      }
    }
  }
  return true;
}

bool ProgramInstance::Enqueue(proto::KernelLaunch::Phase phase, uint64_t* device_ns, proto::MeasureResult* result) {
  std::vector<Event> events;
  for (const Launch& launch : launches_) {
    if (launch.phase != phase) continue;
    cl_event raw = nullptr;
    const cl_int err = device_.api->clEnqueueNDRangeKernel(device_.queue, launch.kernel(), launch.dims, nullptr,
                                                           launch.global.data(),
                                                           launch.has_local ? launch.local.data() : nullptr, 0,
                                                           nullptr, device_ns ? &raw : nullptr);
    if (err != CL_SUCCESS && launch.over_kernel_max > 0 &&
        (err == CL_INVALID_WORK_GROUP_SIZE || err == CL_OUT_OF_RESOURCES)) {
      return Fail(result, proto::INVALID_CONFIG,
                  "kernel '" + launch.entry + "': local size " + Geometry(launch.local, launch.dims) +
                      " > CL_KERNEL_WORK_GROUP_SIZE " + std::to_string(launch.over_kernel_max) +
                      " (register pressure?): clEnqueueNDRangeKernel: " + ClErrorName(err));
    }
    if (err != CL_SUCCESS) {
      return Fail(result, proto::RUNTIME_ERROR,
                  "clEnqueueNDRangeKernel: " + ClErrorName(err) + " (kernel '" + launch.entry + "')");
    }
    if (raw != nullptr) events.emplace_back(device_.api, raw);
  }
  if (device_ns == nullptr) return true;
  if (!Finish(result)) return false;
  for (const Event& event : events) {
    Result<uint64_t> ns = EventDurationNs(*device_.api, event());
    if (!ns.ok()) return FailCl(result, ns.status());
    *device_ns += *ns;
  }
  return true;
}

bool ProgramInstance::Finish(proto::MeasureResult* result) {
  Status status = ClStatus("clFinish", device_.api->clFinish(device_.queue));
  return status.ok() || FailCl(result, status);
}

bool ProgramInstance::ReadBuffer(const std::string& name, std::vector<float>* values, proto::MeasureResult* result) {
  std::vector<uint8_t> bytes;
  if (!ReadBytes(name, &bytes, result)) return false;
  *values = ToFloats(BufferType(name), bytes.data(), FindBuffer(name)->spec.count());
  return true;
}

bool ProgramInstance::ReadBytes(const std::string& name, std::vector<uint8_t>* bytes, proto::MeasureResult* result) {
  const Buffer* buffer = FindBuffer(name);
  if (buffer == nullptr) return Fail(result, proto::HOST_GENERATION_FAILED, "unknown buffer '" + name + "'");
  bytes->resize(buffer->bytes);
  Status read = ClStatus("clEnqueueReadBuffer",
                         device_.api->clEnqueueReadBuffer(device_.queue, buffer->mem(), CL_TRUE, 0, bytes->size(),
                                                          bytes->data(), 0, nullptr, nullptr));
  if (!read.ok()) return FailCl(result, read);
  return true;
}

bool ProgramInstance::CheckCanaries(proto::MeasureResult* result) {
  const std::vector<uint8_t>& canary = CanaryPattern();
  std::vector<uint8_t> tail(canary.size());
  for (const Buffer& buffer : buffers_) {
    Status read = ClStatus("clEnqueueReadBuffer",
                           device_.api->clEnqueueReadBuffer(device_.queue, buffer.mem(), CL_TRUE, buffer.bytes,
                                                            tail.size(), tail.data(), 0, nullptr, nullptr));
    if (!read.ok()) return FailCl(result, read);
    if (tail != canary) {
      return Fail(result, proto::WRONG_ANSWER, kOutOfBoundsMessage + ("'" + buffer.spec.name() + "'"));
    }
  }
  return true;
}

proto::ElemType ProgramInstance::BufferType(const std::string& name) const {
  const Buffer* buffer = FindBuffer(name);
  return buffer ? buffer->spec.type() : proto::FLOAT32;
}

const ProgramInstance::Buffer* ProgramInstance::FindBuffer(const std::string& name) const {
  for (const Buffer& buffer : buffers_) {
    if (buffer.spec.name() == name) return &buffer;
  }
  return nullptr;
}

const ProgramInstance::Image* ProgramInstance::FindImage(const std::string& name) const {
  for (const Image& image : images_) {
    if (image.spec.name() == name) return &image;
  }
  return nullptr;
}

}  // namespace tunefleet::agent
