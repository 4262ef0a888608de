// The agent side of crash isolation: starts the worker process (posix_spawn of the agent binary with --worker, so no
// gRPC state is ever forked), sends it one job at a time, and acts as the watchdog: a job that outlives its timeout
// gets the worker SIGKILLed and replaced (RUN_TIMEOUT, or BUILD_TIMEOUT while still compiling); a worker that dies
// mid-job is reported as RUNTIME_ERROR "worker died: SIGSEGV" and replaced. A job that fails as on a full disk while
// the kernel cache's disk is nearly full is given back (the full disk is no property of the config; PoCL's LLVM exits 1
// when it cannot write). A worker killed by SIGKILL that the watchdog did not send (the system's out-of-memory killer;
// on Android the low-memory killer) gets the job once more in a new worker, and only a second such death is recorded,
// as "worker died: SIGKILL, twice (...)". The agent itself never goes down with a job.
//
// The workers' stdout, where a kernel's printf goes, reaches the agent's log through an OutputRelay, bounded.
//
// Ownership: owns the worker process and its socket; the destructor closes the socket and reaps the worker.
// Thread safety: Run() from one thread at a time, and always the same thread (the worker is tied to the thread
// that spawned it by PR_SET_PDEATHSIG); Cancel() from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/disk_space.h"
#include "agent/kernel_disk_cache.h"
#include "agent/output_relay.h"
#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

// What runs a job; the session depends on this, not on processes.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  virtual proto::MeasureResult Run(const proto::KernelProgram& program) = 0;
  // From another thread while Run() is in flight: end that job now (Run returns a failed result). The caller makes
  // sure the job is still running when it asks, and calls ForgetAbort() once that Run() has returned, so that an
  // abort that came too late cannot end the next job.
  virtual void AbortJob() = 0;
  virtual void ForgetAbort() = 0;
  // Why the runner can take no job now (the disk where kernels are built is full), or nullopt. The session leaves
  // the tracker while it says so, and comes back when it no longer does.
  virtual std::optional<std::string> Unavailable() { return std::nullopt; }
};

class WorkerSupervisor final : public JobRunner {
 public:
  struct Options {
    // The worker command: the agent binary and its worker flags, e.g. {"/path/tunefleet-agent", "--worker", ...}.
    // The socket is passed as fd 3 and "--worker-fd 3" is appended.
    std::vector<std::string> argv;
    std::chrono::milliseconds default_job_timeout{60000};  // when a job's timing.timeout_ms is 0
    std::chrono::milliseconds startup_timeout{60000};      // until the worker says hello
    // How long a job waits for the device lock (another agent's jobs on the device) at least; 10x its timeout
    // when that is longer. Past it the job is given back, not measured (MeasureResult.not_measured).
    std::chrono::milliseconds min_device_wait{std::chrono::minutes(5)};
    // How much of the workers' stdout (kernels' printf) reaches the agent's log.
    OutputRelay::Limits output_limits;
    // PoCL's on-disk kernel cache in a folder of this agent's own, kept under its limit (none: PoCL's own folder,
    // unbounded). After every kJobsPerCacheCheck jobs, before the next, a folder over its limit is pruned with the
    // worker stopped.
    std::shared_ptr<KernelDiskCache> kernel_cache;
    // A job that failed as on a full disk (FailedAsOnAFullDisk) with less than this free in the kernel cache folder
    // (CompilerWriteDirs), or fewer inodes, failed for the full disk: the job is given back
    // (MeasureResult.not_measured), not failed, the agent's own kernel cache is emptied, and Unavailable() says so
    // until there is room again.
    uint64_t low_disk_bytes = kLowDiskBytes;
    uint64_t low_disk_inodes = kLowDiskInodes;
    // At the start, with less than this free there, or fewer inodes, the disk is full: the agent's own kernel cache
    // is emptied and, the disk still that full, Unavailable() says so until it is no longer (no job is taken).
    uint64_t full_at_start_bytes = kFullAtStartBytes;
    uint64_t full_at_start_inodes = kFullAtStartInodes;
  };
  static constexpr int kJobsPerCacheCheck = 16;

  // Starts the worker and waits for its hello; fails with the worker's own error line (e.g. OpenCL not loadable).
  static Result<std::unique_ptr<WorkerSupervisor>> Start(Options options);
  ~WorkerSupervisor() override;
  WorkerSupervisor(const WorkerSupervisor&) = delete;
  WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

  // The device the worker opened.
  const proto::DeviceInfo& device() const { return device_; }

  // Runs one job in the worker under the watchdog; restarts the worker when it died or was killed. A job whose
  // worker was SIGKILLed from outside is run once more before its failure counts.
  proto::MeasureResult Run(const proto::KernelProgram& program) override;

  // Aborts the job in flight (its worker is killed; Run returns RUN_TIMEOUT "cancelled"), and makes later Runs
  // fail fast. For shutdown: safe from any thread and from a signal-handling thread.
  void Cancel();

  // The job in flight only: its worker is killed and replaced, Run returns RUN_TIMEOUT "cancelled: the tuner
  // abandoned the job". Thread-safe.
  void AbortJob() override;
  void ForgetAbort() override;
  // After a job given back for the full disk, or when the disk was full at the start: why no job can be built while
  // the disk stays so full; nullopt once there is room again (looked at on each call).
  std::optional<std::string> Unavailable() override;
  // Stands in for the free space in tests: UINT64_MAX makes the disk full by both thresholds, 0 gives it room.
  void TEST_set_low_disk_bytes(uint64_t bytes) { low_disk_bytes_ = full_at_start_bytes_ = bytes; }

  pid_t TEST_worker_pid() const { return pid_; }

 private:
  explicit WorkerSupervisor(Options options)
      : options_(std::move(options)),
        low_disk_bytes_(options_.low_disk_bytes),
        full_at_start_bytes_(options_.full_at_start_bytes) {}
  Status Spawn();
  // One attempt at a job; `killed_from_outside` says the worker died of a SIGKILL the watchdog did not send.
  proto::MeasureResult RunOnce(const proto::KernelProgram& program, bool& killed_from_outside);
  // Kills (when `kill_first`) and reaps the worker; returns its wait status.
  int Reap(bool kill_first);
  // Reaps a worker that ended while no job ran (killed from outside between jobs), saying so; it is no job's death.
  void ReapIfEndedWhileIdle();
  // Drops the reaped worker: its pid and its socket (closed).
  void ForgetWorker();
  // Ends a worker that runs no job: closes its socket (it exits 0), and kills it when it has not left within a second.
  void StopIdleWorker();
  // Before a job, once kJobsPerCacheCheck jobs ran since the last look: prunes a kernel cache over its limit (beyond
  // what could not be removed before), with the worker stopped, and starts a new worker.
  void PruneKernelCacheIfDue();
  // Where the compiler writes, the first folder too full to build in: by Options::full_at_start_bytes and _inodes
  // when `at_start`, else by Options::low_disk_bytes and _inodes.
  std::optional<std::string> FullDisk(bool at_start) const;
  // A failed build on a full disk becomes a job given back (see Options::low_disk_bytes); other results pass.
  proto::MeasureResult GiveBackOnFullDisk(proto::MeasureResult result);
  // Empties the agent's own kernel cache (no worker may run); returns what a log line adds ("; emptied this agent's
  // kernel cache (N entries, K KB)"), empty when there was nothing to remove and `say_nothing_removed` is false.
  std::string EmptyKernelCache(bool say_nothing_removed);
  // At the start, before the first worker: a disk already too full to build in makes Unavailable() say so (after the
  // agent's own kernel cache was emptied, in case that was what filled it), so that no job is taken to give back.
  void LookForRoomAtStart();

  Options options_;
  std::unique_ptr<OutputRelay> output_;  // the workers' stdout; outlives them (destroyed after the destructor's body)
  proto::DeviceInfo device_;
  pid_t pid_ = -1;
  int socket_ = -1;
  int cancel_pipe_[2] = {-1, -1};  // Cancel() and AbortJob() write one byte; the watchdog polls the read end
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> aborted_{false};  // AbortJob() since the last ForgetAbort()
  int jobs_since_cache_check_ = 0;
  uint64_t cache_stuck_bytes_ = 0;  // what the last prune could not remove
  uint64_t low_disk_bytes_;
  uint64_t full_at_start_bytes_;
  std::optional<std::string> full_disk_;  // a job was given back for the full disk (or it was full at the start)
  bool full_at_start_ = false;            // full_disk_ was found at the start, by the start's thresholds
};

// "SIGSEGV" for SIGSEGV; "signal N" for others it does not name.
std::string SignalName(int signal_number);

// Whether a failed job's result looks like a full disk's doing: ENOSPC's text in its message, a clBuildProgram
// CL_BUILD_PROGRAM_FAILURE without a compiler diagnostic ("error:"), or a worker that exited with a code or of
// SIGABRT (what LLVM and PoCL do when they cannot write). A kernel's own failures (a compile error, a kernel name or
// build option refused, SIGSEGV, a wrong answer) do not.
bool FailedAsOnAFullDisk(const proto::MeasureResult& result);

}  // namespace tunefleet::agent
