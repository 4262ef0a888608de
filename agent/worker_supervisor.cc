#include "agent/worker_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "agent/frame_io.h"
#include "agent/host_buffer.h"

extern char** environ;

namespace tunefleet::agent {
namespace {

constexpr int kWorkerFd = 3;

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

proto::MeasureResult Failed(proto::MeasureStatus status, std::string message) {
  proto::MeasureResult result;
  result.set_status(status);
  result.set_message(std::move(message));
  return result;
}

// A job that ended for a reason outside it (the agent stopping, the tuner gone, a device locked by another agent):
// no result about its config (MeasureResult.not_measured).
proto::MeasureResult NotMeasured(proto::MeasureStatus status, std::string message) {
  proto::MeasureResult result = Failed(status, std::move(message));
  result.set_not_measured(true);
  return result;
}

}  // namespace

std::string SignalName(int signal_number) {
  switch (signal_number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal_number);
  }
}

Result<std::unique_ptr<WorkerSupervisor>> WorkerSupervisor::Start(Options options) {
  if (options.argv.empty()) return Status::InvalidArgument("no worker command");
  std::unique_ptr<WorkerSupervisor> supervisor(new WorkerSupervisor(std::move(options)));
  if (pipe2(supervisor->cancel_pipe_, O_CLOEXEC) != 0) return Errno("pipe2");
  TF_ASSIGN_OR_RETURN(supervisor->output_,
                      OutputRelay::Start(supervisor->options_.output_limits,
                                         [](const std::string& line) { spdlog::info("{}", line); }));
  supervisor->LookForRoomAtStart();
  TF_RETURN_IF_ERROR(supervisor->Spawn());
  return supervisor;
}

void WorkerSupervisor::LookForRoomAtStart() {
  std::optional<std::string> full = FullDisk(/*at_start=*/true);
  if (!full) return;
  if (options_.kernel_cache) {
    const std::string emptied = EmptyKernelCache(/*say_nothing_removed=*/false);
    if (!emptied.empty()) {
      const std::string before = *full;
      full = FullDisk(/*at_start=*/true);
      spdlog::warn("the disk was full at the start ({}){}{}", before, emptied,
                   full ? "; it still is" : "; there is room now");
    }
    if (!full) return;
  }
  full_disk_ = *full;  // Session::Run says it, as it waits for room
  full_at_start_ = true;
}

WorkerSupervisor::~WorkerSupervisor() {
  StopIdleWorker();
  for (int fd : cancel_pipe_) {
    if (fd >= 0) close(fd);
  }
}

void WorkerSupervisor::StopIdleWorker() {
  if (socket_ >= 0) close(socket_);  // the worker sees EOF and exits 0
  socket_ = -1;
  if (pid_ <= 0) return;
  // Give it a moment to leave on its own (releasing the driver cleanly), then insist.
  for (int i = 0; i < 50; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      ForgetWorker();
      return;
    }
    usleep(20 * 1000);
  }
  Reap(true);
}

void WorkerSupervisor::PruneKernelCacheIfDue() {
  if (!options_.kernel_cache || jobs_since_cache_check_ < kJobsPerCacheCheck) return;
  jobs_since_cache_check_ = 0;
  KernelDiskCache& cache = *options_.kernel_cache;
  const uint64_t bytes = cache.Bytes();
  if (bytes <= cache.limit_bytes() + cache_stuck_bytes_) return;
  StopIdleWorker();  // PoCL writes into the folder of a program that lives
  const KernelDiskCache::Pruned pruned = cache.Prune();
  cache_stuck_bytes_ = pruned.stuck_bytes;
  constexpr double kMb = 1024.0 * 1024.0;
  spdlog::info("the kernel cache {} held {:.1f} MB, over its {:.1f} MB: removed its {} least recently used "
               "entries ({:.1f} MB; {:.1f} MB left); the worker was stopped for it",
               cache.dir().string(), bytes / kMb, cache.limit_bytes() / kMb, pruned.entries, pruned.bytes / kMb,
               pruned.left / kMb);
  if (pruned.failed > 0) {
    spdlog::warn("the kernel cache {}: {} entr{} ({:.1f} MB) could not be removed and stay{}, beyond its limit ({})",
                 cache.dir().string(), pruned.failed, pruned.failed == 1 ? "y" : "ies", pruned.stuck_bytes / kMb,
                 pruned.failed == 1 ? "s" : "", pruned.first_failure);
  }
  if (!cancelled_) (void)Spawn();  // a failure is the next job's to say
}

Status WorkerSupervisor::Spawn() {
  // No worker runs now: what the last one left in the agent's own cache folder is nobody's.
  if (options_.kernel_cache) options_.kernel_cache->RemoveLeftovers();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return Errno("socketpair");
  // dup2 onto the same number would keep O_CLOEXEC; move the child end off fd 3 first.
  if (fds[1] == kWorkerFd) {
    const int moved = fcntl(fds[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
    const int err = errno;
    close(fds[1]);
    if (moved < 0) {  // the worker would start without its socket and be taken for one that never answered
      close(fds[0]);
      errno = err;
      return Errno("fcntl(F_DUPFD_CLOEXEC)");
    }
    fds[1] = moved;
  }

  std::vector<std::string> args = options_.argv;
  args.push_back("--worker-fd");
  args.push_back(std::to_string(kWorkerFd));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // stdout first: the relay's pipe may hold fd 3 itself.
  int err = posix_spawn_file_actions_adddup2(&actions, output_->write_fd(), STDOUT_FILENO);
  if (err == 0) err = posix_spawn_file_actions_adddup2(&actions, fds[1], kWorkerFd);
  if (err != 0) {
    posix_spawn_file_actions_destroy(&actions);
    close(fds[0]);
    close(fds[1]);
    return Status::IOError(std::string("cannot start the worker: posix_spawn_file_actions_adddup2: ") +
                           std::strerror(err));
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The agent blocks SIGINT/SIGTERM for its signal thread; the worker starts clean, in its own process group so a
  // terminal's Ctrl-C reaches only the agent (which then closes the worker down).
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  // The worker runs the kernels and needs no secret: the tracker's token stays out of its environment. With a kernel
  // cache of the agent's own, PoCL's folder is that one.
  std::string cache_dir;
  if (options_.kernel_cache) cache_dir = "POCL_CACHE_DIR=" + options_.kernel_cache->dir().string();
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TUNEFLEET_TOKEN=", 16) == 0) continue;
    if (!cache_dir.empty() && std::strncmp(*e, "POCL_CACHE_DIR=", 15) == 0) continue;
    env.push_back(*e);
  }
  if (!cache_dir.empty()) env.push_back(cache_dir.data());
  env.push_back(nullptr);
  pid_t pid = -1;
  err = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    return Status::IOError("cannot start the worker " + args[0] + ": " + std::strerror(err));
  }
  pid_ = pid;
  socket_ = fds[0];

  Result<Frame> hello = ReadFrame(socket_, std::chrono::steady_clock::now() + options_.startup_timeout, -1);
  if (!hello.ok() || hello->kind != FrameKind::kHello || !device_.ParseFromString(hello->payload)) {
    std::string why = !hello.ok()                        ? hello.status().message()
                      : hello->kind == FrameKind::kError ? hello->payload
                                                         : "unexpected first message";
    const int status = Reap(!hello.ok() || hello->kind != FrameKind::kError);
    if (WIFSIGNALED(status)) why += " (worker died: " + SignalName(WTERMSIG(status)) + ")";
    // The worker exits 2 when the device or OpenCL library it was asked for does not exist (worker_main.cc).
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return Status::InvalidArgument(why);
    return Status::Unavailable(why);
  }
  return Status::OK();
}

int WorkerSupervisor::Reap(bool kill_first) {
  int status = 0;
  if (pid_ > 0) {
    if (kill_first) kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ForgetWorker();
  return status;
}

void WorkerSupervisor::ForgetWorker() {
  // The worker is gone: a line of its printf it left unended (killed mid-line) does not run on into the next's.
  if (output_) output_->EndLine();
  pid_ = -1;
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
}

void WorkerSupervisor::ReapIfEndedWhileIdle() {
  if (pid_ <= 0) return;
  int status = 0;
  pid_t ended = 0;
  while ((ended = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (ended != pid_) return;
  ForgetWorker();
  spdlog::warn("the worker ended between jobs ({}); a new one runs the next job",
               WIFSIGNALED(status) ? SignalName(WTERMSIG(status)) : "exit code " + std::to_string(WEXITSTATUS(status)));
}

proto::MeasureResult WorkerSupervisor::Run(const proto::KernelProgram& program) {
  // Before the job, not after it: a result is never held back by a prune (nor lost to a stop during one).
  if (!cancelled_) PruneKernelCacheIfDue();
  ++jobs_since_cache_check_;
  bool killed = false;
  proto::MeasureResult result = RunOnce(program, killed);
  if (!killed) return GiveBackOnFullDisk(std::move(result));
  // SIGKILL that the watchdog did not send: the system killed the worker, most often for memory (Linux's OOM killer,
  // Android's low-memory killer when the phone needs memory for something else). Not a property of the config
  // until it happens again: measured once more in a new worker.
  spdlog::warn("the worker was killed by SIGKILL from outside the agent (out of memory?); measuring the job again "
               "in a new worker");
  result = RunOnce(program, killed);
  if (killed) {
    result.set_message("worker died: SIGKILL, twice (killed from outside the agent: out of memory?)");
  }
  return result;
}

bool FailedAsOnAFullDisk(const proto::MeasureResult& result) {
  const std::string& m = result.message();
  if (m.find("No space left on device") != std::string::npos || m.find("Disk quota exceeded") != std::string::npos) {
    return true;
  }
  // A build that failed without a word from the compiler: with no byte left on its disk, PoCL says only "failed to
  // build the program" (a kernel at fault gets "error: ..." lines). Not another call's refusal under the same status
  // (clCreateKernel's CL_INVALID_KERNEL_NAME, clBuildProgram's CL_INVALID_BUILD_OPTIONS).
  if (result.status() == proto::DEVICE_COMPILE_FAILED) {
    return m.find("clBuildProgram: CL_BUILD_PROGRAM_FAILURE") != std::string::npos &&
           m.find("error:") == std::string::npos;
  }
  // LLVM exits 1 when it cannot write its output; with no inode left PoCL aborted at a kernel's first launch (it
  // builds a kernel again for each local size then). A kernel's own crash is SIGSEGV or SIGBUS.
  return result.status() == proto::RUNTIME_ERROR &&
         (m.rfind("worker died: exit code ", 0) == 0 || m == "worker died: SIGABRT");
}

std::optional<std::string> WorkerSupervisor::FullDisk(bool at_start) const {
  const std::filesystem::path cache = options_.kernel_cache ? options_.kernel_cache->dir() : "";
  if (at_start) {
    return NearlyFullDisk(CompilerWriteDirs(cache), full_at_start_bytes_, options_.full_at_start_inodes);
  }
  return NearlyFullDisk(CompilerWriteDirs(cache), low_disk_bytes_, options_.low_disk_inodes);
}

proto::MeasureResult WorkerSupervisor::GiveBackOnFullDisk(proto::MeasureResult result) {
  if (result.not_measured() || !FailedAsOnAFullDisk(result)) return result;
  const std::optional<std::string> full = FullDisk(/*at_start=*/false);
  if (!full) return result;
  full_disk_ = *full;
  full_at_start_ = false;
  const std::string what = result.message().substr(0, result.message().find('\n')).substr(0, 200);
  std::string emptied;
  if (options_.kernel_cache) {
    // Its own folder may hold what the disk lacks: the agent's kernels cost a compile each to build again.
    StopIdleWorker();
    emptied = EmptyKernelCache(/*say_nothing_removed=*/true);
    if (!cancelled_) (void)Spawn();
  }
  spdlog::warn("a job failed ({}) and {}: the disk is full, not the kernel at fault; the job is given back{}", what,
               *full, emptied);
  return NotMeasured(proto::RUNTIME_ERROR, what + ", and " + *full + ": a full disk, not the config; given back");
}

std::string WorkerSupervisor::EmptyKernelCache(bool say_nothing_removed) {
  const KernelDiskCache::Pruned pruned = options_.kernel_cache->PruneTo(0);
  cache_stuck_bytes_ = pruned.stuck_bytes;
  if (pruned.entries == 0 && !say_nothing_removed) return "";
  const std::string size =
      pruned.bytes < 10240 ? std::to_string(pruned.bytes) + " bytes" : std::to_string(pruned.bytes >> 10) + " KB";
  return "; emptied this agent's kernel cache (" + std::to_string(pruned.entries) +
         (pruned.entries == 1 ? " entry, " : " entries, ") + size + ")";
}

std::optional<std::string> WorkerSupervisor::Unavailable() {
  if (!full_disk_) return std::nullopt;
  if (std::optional<std::string> full = FullDisk(full_at_start_)) {
    full_disk_ = *full;
    return "the disk is full (" + *full + ")";
  }
  spdlog::info("there is room {} where the compiler writes (it was: {}): taking jobs{}",
               full_at_start_ ? "now" : "again", *full_disk_, full_at_start_ ? "" : " again");
  full_disk_.reset();
  return std::nullopt;
}

proto::MeasureResult WorkerSupervisor::RunOnce(const proto::KernelProgram& program, bool& killed_from_outside) {
  killed_from_outside = false;
  const auto start = std::chrono::steady_clock::now();
  bool spawn_failed = false;
  auto finish = [&](proto::MeasureResult result) {
    if (result.wall_time() == 0) {
      result.set_wall_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    // Replace a worker that died or was killed now, so the next job does not pay for its start; the start is not
    // this job's time (it was counted in its wall time).
    if (pid_ <= 0 && !cancelled_ && !spawn_failed) (void)Spawn();
    return result;
  };
  if (cancelled_) return finish(NotMeasured(proto::UNKNOWN_ERROR, "the agent is shutting down"));
  // A worker killed while idle was counted as this job's first death ("SIGKILL, twice" after one death in the job).
  ReapIfEndedWhileIdle();
  if (pid_ <= 0) {
    Status spawned = Spawn();
    spawn_failed = !spawned.ok();
    if (!spawned.ok()) return finish(Failed(proto::RUNTIME_ERROR, "worker unavailable: " + spawned.message()));
  }

  const auto timeout = program.timing().timeout_ms() ? std::chrono::milliseconds(program.timing().timeout_ms())
                                                     : options_.default_job_timeout;
  Result<Frame> reply = Status::Unavailable("job not sent");
  bool built = false;  // a timeout before kBuilt is a BUILD_TIMEOUT
  bool waiting = false;
  // Time spent waiting for the device lock (another agent's job on the same device) does not count: the holder is
  // bounded by its own watchdog. The wait itself is bounded so that a stuck peer is reported, not waited out.
  auto deadline = start + timeout;
  std::chrono::steady_clock::time_point wait_start;
  const auto max_wait = std::max<std::chrono::steady_clock::duration>(10 * timeout, options_.min_device_wait);
  Status sent = WriteFrame(socket_, FrameKind::kJob, program.SerializeAsString());
  if (sent.ok()) {
    for (;;) {
      reply = ReadFrame(socket_, waiting ? wait_start + max_wait : deadline, cancel_pipe_[0]);
      if (!reply.ok()) break;
      if (reply->kind == FrameKind::kWaiting) {
        waiting = true;
        wait_start = std::chrono::steady_clock::now();
        continue;
      }
      if (reply->kind != FrameKind::kBuilt) break;
      built = true;
      if (waiting) deadline += std::chrono::steady_clock::now() - wait_start;
      waiting = false;
    }
  }
  if (waiting && !reply.ok() && reply.status().code() == Status::Code::kDeadlineExceeded) {
    // Not a property of the config: the job is given back, to be measured again (a stuck peer holds the lock).
    Reap(true);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(max_wait).count();
    const std::string waited = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
    return finish(NotMeasured(proto::RUNTIME_ERROR, "the device stayed locked by another agent for " + waited +
                                                        "; the worker was killed and replaced, and the job given "
                                                        "back"));
  }

  if (reply.ok() && reply->kind == FrameKind::kResult) {
    proto::MeasureResult result;
    if (result.ParseFromString(reply->payload)) {
      // A kernel that wrote past a buffer's end (the job's, or its reference's: "reference program failed
      // (WRONG_ANSWER): out-of-bounds ...") may have written past its canary too, into the worker's heap: the worker
      // is replaced, so that no later job dies of it (a write 76 floats past the end passed as OK and the next,
      // unrelated job died of SIGABRT before the canary was widened).
      if (result.status() != proto::OK && result.message().find(kOutOfBoundsMessage) != std::string::npos) Reap(true);
      return finish(result);
    }
    Reap(true);
    return finish(Failed(proto::UNKNOWN_ERROR, "the worker sent an unreadable result"));
  }
  if (!reply.ok() && reply.status().code() == Status::Code::kDeadlineExceeded) {
    Reap(true);
    return finish(Failed(built ? proto::RUN_TIMEOUT : proto::BUILD_TIMEOUT,
                         std::string(built ? "running" : "building") + " the job exceeded its timeout of " +
                             std::to_string(timeout.count()) + " ms; the worker was killed and replaced"));
  }
  if (!reply.ok() && (cancelled_ || aborted_)) {
    // Stopped from outside, not a property of the config: not a result (the tracker drops or measures it again).
    Reap(true);
    return finish(NotMeasured(proto::RUN_TIMEOUT, cancelled_ ? "cancelled: the agent is shutting down"
                                                              : "cancelled: the tuner abandoned the job"));
  }
  // The worker died (or spoke nonsense): find out how, and replace it on the next job.
  const bool died = !sent.ok() || (!reply.ok() && reply.status().code() == Status::Code::kUnavailable);
  const int status = Reap(!died);
  std::string why = "worker died: ";
  if (died && WIFSIGNALED(status)) {
    why += SignalName(WTERMSIG(status));
    killed_from_outside = WTERMSIG(status) == SIGKILL;  // every kill of the watchdog's own is handled above
  } else if (died && WIFEXITED(status)) {
    why += "exit code " + std::to_string(WEXITSTATUS(status));
  } else {
    why = "worker failed: " + (reply.ok() ? std::string("unexpected message") : reply.status().message());
  }
  return finish(Failed(proto::RUNTIME_ERROR, why));
}

void WorkerSupervisor::Cancel() {
  cancelled_ = true;
  const char byte = 1;
  (void)!write(cancel_pipe_[1], &byte, 1);
}

void WorkerSupervisor::AbortJob() {
  aborted_ = true;
  const char byte = 1;
  (void)!write(cancel_pipe_[1], &byte, 1);
}

void WorkerSupervisor::ForgetAbort() {
  if (!aborted_.exchange(false) || cancelled_) return;  // shutdown keeps its byte
  // Drain AbortJob()'s byte (a pipe holds it until read; poll first, so an empty pipe never blocks).
  pollfd p{cancel_pipe_[0], POLLIN, 0};
  char byte;
  while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && read(cancel_pipe_[0], &byte, 1) == 1) {
  }
}

}  // namespace tunefleet::agent
