// The worker: a child process of the agent that owns the OpenCL context and compile cache and runs one job at a
// time, so a driver crash or hang costs only the worker (the supervisor replaces it), never the agent.
//
// Protocol on `fd` (frame_io.h): the worker sends kHello(DeviceInfo) once ready, or kError(text) and exits 1; then
// for each kJob(KernelProgram) it sends kWaiting when its kernels are built but another agent holds the device
// lock (device_lock.h), kBuilt once the kernels are built and it holds the device (unless the job failed before),
// then kResult(MeasureResult). It exits 0 when the agent closes the socket.
//
// Test-only fault hook: with env TUNEFLEET_TEST_FAULT=crash|sigkill|hang, a job whose kernel source contains the
// marker TUNEFLEET_FAULT makes the worker raise SIGSEGV (crash), die of SIGKILL as the out-of-memory killer would
// kill it (sigkill) or sleep forever (hang) once its kernels are built, instead of running them; =hang-build makes it
// sleep forever before building, =exit-build exit 1 before building (as LLVM does when the disk is full).
#pragma once

#include <string>

namespace tunefleet::agent {

struct WorkerOptions {
  int fd = -1;             // the connected socket to the agent
  std::string opencl_lib;  // empty: ClApi's default search
  int platform = 0;
  int device = 0;
  std::string device_lock;  // lock file shared by agents on the same device; "" = the default path, "none" = off
};

// Runs the worker loop; returns the process exit code.
int RunWorker(const WorkerOptions& options);

}  // namespace tunefleet::agent
