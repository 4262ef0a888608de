#include "agent/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "agent/compare.h"
#include "agent/device_info.h"
#include "common/fnv_hash.h"
#include "agent/host_buffer.h"
#include "agent/program_instance.h"
#include "proto/program_checks.h"

namespace tunefleet::agent {
namespace {

constexpr size_t kMaxCachedReferences = 64;
constexpr uint32_t kMaxNumber = 1u << 20;   // cap on `number` when growing it for min_repeat_ms
constexpr int kMaxCalibrationRounds = 12;
// `number` grows at most this much per calibration round: one round's time per run, measured over few runs (the
// first over one), can read far below the steady rate, and a number sized from it alone overran the job's timeout.
constexpr double kMaxGrowthPerRound = 10;
// Warm-up launches between two waits for the queue: a large `warmup` must not grow the driver's queue unbounded.
constexpr uint32_t kWarmupBatch = 64;

// Waits for the device queue on every way out of the scope that holds the device: a launch that fails leaves those
// enqueued before it running, and the device lock must not pass to another agent, whose timing they would overlap,
// before they end. clFinish's own error is not this job's concern here (the job already has its result).
class QueueDrain {
 public:
  QueueDrain(const ClApi* api, cl_command_queue queue) : api_(api), queue_(queue) {}
  QueueDrain(const QueueDrain&) = delete;
  QueueDrain& operator=(const QueueDrain&) = delete;
  ~QueueDrain() { (void)api_->clFinish(queue_); }

 private:
  const ClApi* api_;
  cl_command_queue queue_;
};

// Tolerances used when the program gives neither atol nor rtol.
void DefaultTolerance(proto::ElemType type, double* atol, double* rtol) {
  switch (type) {
    case proto::FLOAT16:
      *atol = 1e-2;
      *rtol = 1e-2;
      break;
    case proto::INT32:
      *atol = 0;
      *rtol = 0;
      break;
    default:
      *atol = 1e-4;
      *rtol = 1e-3;
      break;
  }
}

}  // namespace

Result<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<ClApi> api, cl_device_id device) {
  std::unique_ptr<Executor> executor(new Executor());
  executor->api_ = std::move(api);
  executor->device_ = device;
  TF_ASSIGN_OR_RETURN(executor->info_, DescribeDevice(*executor->api_, device));
  TF_ASSIGN_OR_RETURN(executor->context_, CreateContext(*executor->api_, device));
  TF_ASSIGN_OR_RETURN(executor->queue_, CreateProfilingQueue(*executor->api_, executor->context_(), device));
  executor->cache_ = std::make_unique<CompileCache>(
      executor->api_.get(), executor->context_(), device,
      executor->info_.fingerprint() + "/" + executor->info_.driver_version());
  return executor;
}

Result<std::unique_ptr<Executor>> Executor::Open(const std::string& opencl_lib, int platform_index,
                                                 int device_index) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<ClApi> api, ClApi::Load(opencl_lib));
  TF_ASSIGN_OR_RETURN(cl_device_id device, PickDevice(*api, platform_index, device_index));
  return Create(std::move(api), device);
}

Executor::~Executor() {
  // Programs, queue and context must go before the library that releases them.
  references_.clear();
  cache_.reset();
  queue_.Reset();
  context_.Reset();
}

proto::MeasureResult Executor::Execute(const proto::KernelProgram& program,
                                       const std::function<void(Stage)>& on_stage) {
  const auto start = std::chrono::steady_clock::now();
  proto::MeasureResult result;
  if (Run(program, on_stage, &result)) result.set_status(proto::OK);
  if (result.status() != proto::OK) {
    result.clear_costs();
    result.set_mean_cost(0);
  }
  result.set_wall_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return result;
}

bool Executor::Run(const proto::KernelProgram& program, const std::function<void(Stage)>& on_stage,
                   proto::MeasureResult* result) {
  if (!HasTimedLaunch(program)) return Fail(result, proto::HOST_GENERATION_FAILED, kNoTimedLaunch);
  const DeviceContext device{api_.get(), context_(), device_, queue_(), &info_, cache_.get(), &contents_};
  std::unique_ptr<ProgramInstance> instance = ProgramInstance::Build(device, program, result);
  if (!instance) return false;
  // Fill the inputs now, before taking the device: a no-op for every job of a task after its first. Kept for the
  // upload below, also those the cache's limit evicts again.
  std::vector<HostContentsCache::Bytes> filled;
  filled.reserve(static_cast<size_t>(program.buffers_size()));
  for (const auto& spec : program.buffers()) filled.push_back(contents_.Get(spec));

  const bool checked = program.has_reference() && !program.output_buffer().empty();
  std::vector<uint8_t> output;               // the correctness run's output, as the device wrote it
  const std::vector<float>* want = nullptr;  // the reference's output (cached: stable while this job runs)
  {
    // Everything in this scope uses the device: hold it. The comparison is host work and comes after.
    DeviceLock::Guard guard;
    if (lock_) {
      Result<DeviceLock::Guard> taken = lock_->TryAcquire();
      if (taken.ok() && !taken->held()) {
        if (on_stage) on_stage(Stage::kWaitingForDevice);
        taken = lock_->Acquire();
      }
      if (!taken.ok()) return Fail(result, proto::RUNTIME_ERROR, taken.status().message());
      guard = std::move(*taken);
    }
    const QueueDrain drain(api_.get(), queue_());  // destroyed before `guard`: the queue is idle when the lock goes
    if (on_stage) on_stage(Stage::kRunning);
    if (!instance->Allocate(program, result, &filled)) return false;

    // One correctness run, before timing, so kernels that accumulate into their output are judged like the
    // reference.
    if (!instance->Enqueue(proto::KernelLaunch::SETUP, nullptr, result) ||
        !instance->Enqueue(proto::KernelLaunch::TIMED, nullptr, result) || !instance->Finish(result) ||
        !instance->CheckCanaries(result)) {
      return false;
    }
    if (checked) {
      if (!instance->ReadBytes(program.output_buffer(), &output, result)) return false;
      want = ReferenceOutput(program.reference(), result);
      if (want == nullptr) return false;
    }
    if (!Measure(*instance, program.timing(), result) || !instance->CheckCanaries(result)) return false;
  }
  if (on_stage) on_stage(Stage::kReleased);
  if (!checked) return true;
  // A wrong answer was timed too (rare; it saves holding the device while the host compares every output).
  const proto::ElemType type = instance->BufferType(program.output_buffer());
  const std::vector<float> got = ToFloats(type, output.data(), output.size() / ElementBytes(type));
  double atol = program.atol();
  double rtol = program.rtol();
  if (atol == 0 && rtol == 0) DefaultTolerance(type, &atol, &rtol);
  const CompareResult compared = CompareOutputs(got, *want, program.compare_count(), atol, rtol);
  result->set_max_abs_error(compared.max_abs_error);
  if (!compared.ok) return Fail(result, proto::WRONG_ANSWER, compared.message);
  return true;
}

const std::vector<float>* Executor::ReferenceOutput(const proto::KernelProgram& reference,
                                                    proto::MeasureResult* result) {
  const std::string serialized = reference.SerializeAsString();
  const uint64_t key = FnvHash().Add(serialized).value();
  auto found = references_.find(key);
  if (found != references_.end() && found->second.serialized == serialized) return &found->second.output;

  // The reference's failure is not the candidate's: report it as UNKNOWN_ERROR with the reference's own status.
  proto::MeasureResult own;
  const DeviceContext device{api_.get(), context_(), device_, queue_(), &info_, cache_.get(), &contents_};
  std::unique_ptr<ProgramInstance> instance = ProgramInstance::Prepare(device, reference, &own);
  std::vector<float> output;
  const bool ok = instance && instance->Enqueue(proto::KernelLaunch::SETUP, nullptr, &own) &&
                  instance->Enqueue(proto::KernelLaunch::TIMED, nullptr, &own) && instance->Finish(&own) &&
                  instance->CheckCanaries(&own) && instance->ReadBuffer(reference.output_buffer(), &output, &own);
  if (!ok) {
    Fail(result, proto::UNKNOWN_ERROR,
         "reference program failed (" + proto::MeasureStatus_Name(own.status()) + "): " + own.message());
    return nullptr;
  }
  if (references_.size() >= kMaxCachedReferences) references_.clear();
  Reference& entry = references_[key];
  entry.serialized = serialized;
  entry.output = std::move(output);
  return &entry.output;
}

bool Executor::Measure(ProgramInstance& instance, const proto::TimingSpec& timing, proto::MeasureResult* result) {
  const uint32_t warmup = timing.warmup() ? timing.warmup() : 1;
  uint32_t number = timing.number() ? timing.number() : 1;
  const uint32_t repeat = timing.repeat() ? timing.repeat() : 3;
  const double min_repeat_ns = timing.min_repeat_ms() * 1e6;
  // The host's time per run counts too: a tiny kernel's launch costs far more than it runs, and growing `number` by
  // device time alone ran a job past its timeout (recorded as a failure, the fastest configs most often). One
  // repeat's wall time is kept within the job's timeout halved and shared by the repeats and the calibration.
  const double wall_per_repeat_ns =
      timing.timeout_ms() > 0 ? timing.timeout_ms() * 1e6 / 2 / (static_cast<double>(repeat) + 2) : 0;

  for (uint32_t i = 0; i < warmup; ++i) {
    if (!instance.Enqueue(proto::KernelLaunch::TIMED, nullptr, result)) return false;
    if ((i + 1) % kWarmupBatch == 0 && !instance.Finish(result)) return false;
  }
  if (!instance.Finish(result)) return false;

  // One repeat: `number` runs, each the summed device time of all TIMED launches; returns the total, and the
  // repeat's host (wall) time.
  double wall_ns = 0;
  auto run_repeat = [&](uint32_t runs, uint64_t* total_ns) {
    const auto start = std::chrono::steady_clock::now();
    *total_ns = 0;
    for (uint32_t r = 0; r < runs; ++r) {
      if (!instance.Enqueue(proto::KernelLaunch::TIMED, total_ns, result)) return false;
    }
    wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return true;
  };

  double sum = 0;
  for (uint32_t rep = 0; rep < repeat; ++rep) {
    uint64_t total_ns = 0;
    if (!run_repeat(number, &total_ns)) return false;
    // Grow `number` until one repeat lasts min_repeat_ms (only the first repeat calibrates).
    for (int round = 0; rep == 0 && total_ns < min_repeat_ns && number < kMaxNumber && round < kMaxCalibrationRounds;
         ++round) {
      const double per_run = std::max(1.0, static_cast<double>(total_ns) / number);
      const double wanted = std::ceil(min_repeat_ns * 1.1 / per_run);
      double grown =
          std::min<double>({kMaxNumber, std::max<double>(number * 2.0, wanted), number * kMaxGrowthPerRound});
      if (wall_per_repeat_ns > 0) {
        const double wall_per_run = std::max(1.0, wall_ns / number);
        grown = std::min(grown, std::floor(wall_per_repeat_ns / wall_per_run));
        if (grown <= number) break;  // the timeout allows no more: the repeat stays shorter than asked
      }
      number = static_cast<uint32_t>(grown);
      if (!run_repeat(number, &total_ns)) return false;
    }
    // A repeat below the profiling timer's resolution reads as 1 ns: a cost is always above 0 (the tracker drops an
    // agent that sends a cost of 0 or less, tracker/result_check.h).
    const double cost = static_cast<double>(std::max<uint64_t>(total_ns, 1)) * 1e-9 / number;
    result->add_costs(cost);
    sum += cost;
    // A repeat that ran past its share of the timeout (the launches slowed down after calibrating: another process
    // took the CPU, the device clocked down) makes the next ones shorter; a cost is per run, whatever `number` is.
    if (wall_per_repeat_ns > 0 && wall_ns > wall_per_repeat_ns && number > 1) {
      number = std::max<uint32_t>(1, static_cast<uint32_t>(std::floor(wall_per_repeat_ns / (wall_ns / number))));
    }
  }
  result->set_mean_cost(sum / repeat);
  return true;
}

}  // namespace tunefleet::agent
