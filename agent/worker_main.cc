#include "agent/worker_main.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/executor.h"
#include "agent/frame_io.h"

namespace tunefleet::agent {
namespace {

constexpr char kFaultMarker[] = "TUNEFLEET_FAULT";

bool HasFaultMarker(const proto::KernelProgram& program) {
  for (const auto& launch : program.launches()) {
    if (launch.source().find(kFaultMarker) != std::string::npos) return true;
  }
  return false;
}

// The test-only fault hook (see the header). `stage` is "build" (before compiling) or "run" (after). Returns only
// when no fault applies.
void MaybeInjectFault(const proto::KernelProgram& program, const char* stage) {
  const char* fault = std::getenv("TUNEFLEET_TEST_FAULT");
  if (fault == nullptr || !HasFaultMarker(program)) return;
  if (std::strcmp(stage, "build") == 0) {
    if (std::strcmp(fault, "hang-build") == 0) {
      for (;;) pause();
    }
    if (std::strcmp(fault, "exit-build") == 0) _exit(1);  // as LLVM's fatal error on a full disk
    return;
  }
  if (std::strcmp(fault, "crash") == 0) {
    // The driver may have installed its own SIGSEGV handler (LLVM does); a crash must still be a crash.
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (std::strcmp(fault, "sigkill") == 0) raise(SIGKILL);
  if (std::strcmp(fault, "hang") == 0) {
    for (;;) pause();
  }
}

}  // namespace

int RunWorker(const WorkerOptions& options) {
  // Die with the agent, even when it is killed without closing the socket.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  // stdout is the agent's OutputRelay pipe: line-buffered, a kernel's printf reaches it line by line, also from a job
  // that then hangs or crashes (fully buffered, what it printed died with the worker).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // A crashing driver must not leave core files on a phone.
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  Result<std::unique_ptr<Executor>> executor = Executor::Open(options.opencl_lib, options.platform, options.device);
  if (!executor.ok()) {
    (void)WriteFrame(options.fd, FrameKind::kError, executor.status().message());
    // 2: bad input (a --platform or --device index out of range, an --opencl-lib that does not load), which the
    // supervisor passes on.
    return executor.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  if (options.device_lock != "none") {
    const std::string path = options.device_lock.empty()
                                 ? DeviceLock::DefaultPath((*executor)->device_info().fingerprint(), options.platform,
                                                           options.device)
                                 : options.device_lock;
    Result<DeviceLock> lock = DeviceLock::Open(path);
    if (!lock.ok()) {
      // The agent's configuration, not the device: exit 2, which the agent passes on (a supervisor restarting it
      // would meet the same folder). An explicit --device-lock was checked by the agent before; this is the default.
      (void)WriteFrame(options.fd, FrameKind::kError,
                       options.device_lock.empty()
                           ? "--device-lock (default): " + lock.status().message() +
                                 " (the default lock is made in $TMPDIR or /tmp: give --device-lock FILE, or 'none')"
                           : "--device-lock: " + lock.status().message());
      return 2;
    }
    (*executor)->SetDeviceLock(std::move(*lock));
  }
  if (!WriteFrame(options.fd, FrameKind::kHello, (*executor)->device_info().SerializeAsString()).ok()) return 1;

  for (;;) {
    Result<Frame> frame = ReadFrame(options.fd);
    if (!frame.ok()) return frame.status().code() == Status::Code::kUnavailable ? 0 : 1;
    if (frame->kind != FrameKind::kJob) return 1;
    proto::KernelProgram program;
    proto::MeasureResult result;
    if (!program.ParseFromString(frame->payload)) {
      result.set_status(proto::HOST_GENERATION_FAILED);
      result.set_message("the worker could not parse the kernel program");
    } else {
      MaybeInjectFault(program, "build");
      result = (*executor)->Execute(program, [&](Executor::Stage stage) {
        if (stage == Executor::Stage::kWaitingForDevice) {
          (void)WriteFrame(options.fd, FrameKind::kWaiting, "");
          return;
        }
        (void)WriteFrame(options.fd, FrameKind::kBuilt, "");
        MaybeInjectFault(program, "run");
      });
    }
    // A kernel's printf, held in stdio's buffer (stdout is a pipe to the agent's OutputRelay), reaches the log with
    // its job, not when the buffer fills or the worker ends.
    std::fflush(stdout);
    if (!WriteFrame(options.fd, FrameKind::kResult, result.SerializeAsString()).ok()) return 1;
  }
}

}  // namespace tunefleet::agent
