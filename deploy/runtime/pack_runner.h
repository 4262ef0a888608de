// Runs one packed kernel program on the application's own OpenCL context and buffers.
// Build() compiles every launch's source with its build options for the given device and allocates the
// program's scratch memory (images, and buffers the application does not provide). Run() enqueues the
// setup launches then the timed ones, in pack order, on the application's queue and waits for them.
// Ownership: the runner retains nothing of the application's handles beyond the call that receives them;
// the context, the device and the KernelPack holding `kernel` must outlive the runner.
// Thread safety: one thread at a time per runner.
#pragma once

#include <CL/cl.h>

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "deploy/runtime/cl_object.h"
#include "deploy/runtime/kernel_pack.h"

namespace tunefleet::runtime {

class PackRunner {
 public:
  // `app_buffers` names the buffers the application will pass to Run() (a name the program lacks is refused,
  // InvalidArgument); every other buffer of the program
  // is allocated here and zero-filled on the device (through a queue of the runner's own, released before
  // returning). An input buffer ("random" in the pack) must be provided; a scratch buffer larger than the
  // device's CL_DEVICE_MAX_MEM_ALLOC_SIZE is refused (InvalidArgument).
  // A launch this device cannot run is refused here, naming the limit (InvalidArgument): a work-group beyond
  // CL_DEVICE_MAX_WORK_ITEM_SIZES or the built kernel's CL_KERNEL_WORK_GROUP_SIZE (register pressure lowers it), or
  // more local memory (the kernel's own and its __local arguments) than CL_DEVICE_LOCAL_MEM_SIZE; the usual cause is
  // a pack tuned on another device (pack_device.h).
  // Other errors carry the OpenCL call, the error's name and, for a failed build, the build log.
  static Result<PackRunner> Build(cl_context context, cl_device_id device, const PackedKernel& kernel,
                                  const std::vector<std::string>& app_buffers);

  // Runs the program once. `buffers` maps names to the application's cl_mem; each must be a buffer (not an image)
  // at least as large as the pack's buffer of that name (InvalidArgument). Blocks until the queue has finished the
  // launches. On a runner that was moved from: FailedPrecondition.
  Status Run(cl_command_queue queue, const std::map<std::string, cl_mem>& buffers);

  PackRunner(PackRunner&&) = default;
  PackRunner& operator=(PackRunner&&) = default;

 private:
  PackRunner() = default;
  const PackedKernel* kernel_ = nullptr;  // not owned: lives in the KernelPack
  std::vector<ClProgram> programs_;       // one per launch
  std::vector<ClKernel> kernels_;         // one per launch
  std::map<std::string, ClMem> scratch_;  // buffers and images owned by the runner
};

}  // namespace tunefleet::runtime
