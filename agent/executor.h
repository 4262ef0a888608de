// The executor: runs kernel programs on one OpenCL device and measures them (see DESIGN.md, "the kernel program").
// Per job: check limits, build through the compile cache, fill the input buffers from their seeds (through the
// contents cache: once per distinct buffer), take the device lock (when one is set: other agents on the same
// device build in parallel but never run beside a timing), upload, run the SETUP launches once and the TIMED
// launches once and read the output back, get the (cached) reference output, warm up and time the TIMED launches
// with profiling events, release the device, then compare the output with the
// reference on the host. A wrong answer is thus timed too; it spares every job holding the device while the host
// compares.
//
// Ownership: owns the ClApi, the context, the profiling queue, the compile cache, the contents cache and the
// reference-output cache.
// Thread safety: none; one thread (the worker) calls Execute at a time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/cl_handles.h"
#include "agent/compile_cache.h"
#include "agent/device_lock.h"
#include "agent/host_contents_cache.h"
#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

class Executor {
 public:
  // An executor on `device`, which must belong to a platform of `api`.
  static Result<std::unique_ptr<Executor>> Create(std::unique_ptr<ClApi> api, cl_device_id device);
  // Loads OpenCL (ClApi::Load(opencl_lib)) and opens device `device_index` of platform `platform_index`.
  static Result<std::unique_ptr<Executor>> Open(const std::string& opencl_lib = "", int platform_index = 0,
                                                int device_index = 0);

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const proto::DeviceInfo& device_info() const { return info_; }

  // From now on, every job runs on the device only while holding `lock` (see device_lock.h).
  void SetDeviceLock(DeviceLock lock) { lock_.emplace(std::move(lock)); }

  // The stages a job reports while it executes.
  enum class Stage {
    kWaitingForDevice,  // built; another agent holds the device lock
    kRunning,           // built and holding the device (if locked): upload, correctness run, timing
    kReleased,          // done with the device (lock released): comparing the output on the host
  };
  // Never fails as a function: every failure is a status in the result. Always fills compile_time and wall_time;
  // on OK also costs (seconds, one per repeat) and mean_cost.
  // `on_stage`, when given, is called when the job enters a stage (kWaitingForDevice only when it has to wait).
  proto::MeasureResult Execute(const proto::KernelProgram& program,
                               const std::function<void(Stage)>& on_stage = {});

  const HostContentsCache& TEST_contents() const { return contents_; }
  // An empty contents cache holding at most `max_bytes` from now on.
  void TEST_LimitContents(size_t max_bytes) { contents_ = HostContentsCache(max_bytes); }

 private:
  struct Reference {
    std::string serialized;  // the full reference program, to rule out hash collisions
    std::vector<float> output;
  };

  Executor() = default;
  bool Run(const proto::KernelProgram& program, const std::function<void(Stage)>& on_stage,
           proto::MeasureResult* result);
  // The reference program's output, from the cache or by running it once.
  const std::vector<float>* ReferenceOutput(const proto::KernelProgram& reference, proto::MeasureResult* result);
  bool Measure(class ProgramInstance& instance, const proto::TimingSpec& timing, proto::MeasureResult* result);

  std::unique_ptr<ClApi> api_;  // first member: destroyed last
  cl_device_id device_ = nullptr;
  proto::DeviceInfo info_;
  Context context_;
  Queue queue_;
  std::unique_ptr<CompileCache> cache_;
  std::unordered_map<uint64_t, Reference> references_;
  HostContentsCache contents_;
  std::optional<DeviceLock> lock_;
};

}  // namespace tunefleet::agent
