#include "agent/agent_main.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "agent/cl_api.h"
#include "agent/device_info.h"
#include "agent/device_lock.h"
#include "agent/kernel_disk_cache.h"
#include "agent/session.h"
#include "agent/worker_main.h"
#include "agent/worker_supervisor.h"
#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "common/grpc_log_route.h"
#include "common/pem_check.h"
#include "common/printable.h"
#include "common/utf8.h"

namespace tunefleet::agent {
namespace {

struct Flags {
  std::string tracker;
  std::string key;
  std::string token;
  std::string opencl_lib;
  std::string tls_ca;
  std::string device_lock;
  int platform = 0;
  bool platform_given = false;  // --list-devices lists that platform only
  int device = 0;
  int job_timeout_s = 60;
  int pocl_cache_mb = 0;  // 0: PoCL's own kernel cache folder, unbounded
  std::string pocl_cache_dir;
  bool list_devices = false;
  bool version = false;
  bool worker = false;
  int worker_fd = -1;
};

// The path of this executable, for starting workers.
std::string SelfPath(const char* argv0) {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return argv0;
  path[n] = '\0';
  return path;
}

// One line for a failure; 2 for bad input (a library path that does not load, a platform index out of range).
int ListFailure(const Status& status) {
  std::fprintf(stderr, "tunefleet-agent: error: %s\n", status.message().c_str());
  return status.code() == Status::Code::kInvalidArgument ? 2 : 1;
}

// 0 once what was printed is written; 1 with one line when it cannot be (a full disk, a closed pipe).
int ExitAfterOutput() {
  if (Status out = FlushStandardOutput(); !out.ok()) return ListFailure(out);
  return 0;
}

int ListDevices(const Flags& flags) {
  Result<std::unique_ptr<ClApi>> api = ClApi::Load(flags.opencl_lib);
  if (!api.ok()) return ListFailure(api.status());
  Result<std::string> listing =
      DeviceListing(**api, flags.platform_given ? std::optional<int>(flags.platform) : std::nullopt);
  if (!listing.ok()) return ListFailure(listing.status());
  std::fputs(listing->c_str(), stdout);
  return ExitAfterOutput();
}

// A --device-lock file that cannot be opened (a folder that does not exist, a directory) is said before the worker
// starts, as bad input; opening creates it, as the worker would.
int CheckDeviceLock(const std::string& path) {
  if (path.empty() || path == "none") return 0;
  Result<DeviceLock> lock = DeviceLock::Open(path);
  if (lock.ok()) return 0;
  std::fprintf(stderr, "tunefleet-agent: error: --device-lock: %s (give a file path, or 'none')\n",
               lock.status().message().c_str());
  return 2;
}

// The root of the agents' kernel cache folders: --pocl-cache-dir, else $XDG_CACHE_HOME/tunefleet/pocl, else
// $HOME/.cache/tunefleet/pocl; empty when none of them is set.
std::string KernelCacheRoot(const Flags& flags) {
  if (!flags.pocl_cache_dir.empty()) return flags.pocl_cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {  // relative: ignored
    return std::string(xdg) + "/tunefleet/pocl";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/tunefleet/pocl";
  }
  return "";
}

int Serve(const Flags& flags, const char* argv0) {
  // Block the stop signals in every thread (gRPC's included); one thread takes them with sigtimedwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The worker is started before any gRPC channel or thread exists, and by exec (posix_spawn), never a bare fork.
  WorkerSupervisor::Options worker;
  worker.argv = {SelfPath(argv0), "--worker", "--platform", std::to_string(flags.platform), "--device",
                 std::to_string(flags.device)};
  if (!flags.opencl_lib.empty()) {
    worker.argv.push_back("--opencl-lib");
    worker.argv.push_back(flags.opencl_lib);
  }
  if (!flags.device_lock.empty()) {
    worker.argv.push_back("--device-lock");
    worker.argv.push_back(flags.device_lock);
  }
  // The TLS roots are read before the device is opened: a bad file is said alone, not after the device's line.
  std::string tls_root_certs;
  if (!flags.tls_ca.empty()) {
    Result<std::string> pem = ReadPemCertificates(flags.tls_ca);
    if (!pem.ok()) {
      std::fprintf(stderr, "tunefleet-agent: error: %s\n", Printable(pem.status().message(), 1000).c_str());
      return pem.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    tls_root_certs = std::move(pem).value();
  }
  worker.default_job_timeout = std::chrono::seconds(flags.job_timeout_s);
  if (flags.pocl_cache_mb > 0) {
    const std::string root = KernelCacheRoot(flags);
    if (root.empty()) {
      std::fprintf(stderr, "tunefleet-agent: error: --pocl-cache-mb: neither HOME nor XDG_CACHE_HOME is set; give "
                           "--pocl-cache-dir DIR\n");
      return 2;
    }
    // A restarted agent of the same device and key finds its own slot again, with the kernels it built.
    const std::string owner = "key " + flags.key + ", platform " + std::to_string(flags.platform) + ", device " +
                              std::to_string(flags.device) + "\n";
    auto cache = KernelDiskCache::Claim(root, static_cast<uint64_t>(flags.pocl_cache_mb) * 1024 * 1024, owner);
    if (!cache.ok()) {
      std::fprintf(stderr, "tunefleet-agent: error: --pocl-cache-mb: %s\n",
                   Printable(cache.status().message(), 1000).c_str());
      return cache.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    spdlog::info("PoCL's kernel cache: {} (kept under {} MB)", (*cache)->dir().string(), flags.pocl_cache_mb);
    worker.kernel_cache = std::move(cache).value();
  }
  Result<std::unique_ptr<WorkerSupervisor>> supervisor = WorkerSupervisor::Start(worker);
  if (!supervisor.ok()) {
    const std::string why = supervisor.status().message();
    std::fprintf(stderr, "tunefleet-agent: error: %s%s\n",
                 why.rfind("--device-lock", 0) == 0 ? "" : "cannot open the OpenCL device: ",
                 Printable(why, 1000).c_str());
    // A --platform or --device index out of range, or an --opencl-lib that does not load, is bad input; a driver
    // that fails is not.
    return supervisor.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  const proto::DeviceInfo& device = (*supervisor)->device();
  spdlog::info("device: {} ({}, {}), fingerprint {}", device.name(), device.platform_name(), device.driver_version(),
               device.fingerprint());

  SessionOptions options;
  options.tls_root_certs = std::move(tls_root_certs);
  options.tracker = flags.tracker;
  options.key = flags.key;
  options.token = flags.token;
  options.agent_version = TUNEFLEET_VERSION;
  Session session(options, device, supervisor->get());

  std::atomic<bool> done{false};
  std::atomic<int> received{0};
  std::thread signals([&] {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!done) {
      const int signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
      if (signal_number > 0) {
        received = signal_number;
        spdlog::info("{}: stopping", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
        session.Stop();
        (*supervisor)->Cancel();
        return;
      }
    }
  });

  Status status = session.Run();
  done = true;
  signals.join();
  if (!status.ok()) {  // the tracker refused the agent (its token): the last line, said as a start failure is
    std::fprintf(stderr, "tunefleet-agent: error: %s\n", Printable(status.message(), 1000).c_str());
    return 2;
  }
  spdlog::info("stopped after {} job(s)", session.jobs_done());
  return 0;
}

}  // namespace

int AgentMain(int argc, char** argv) {
  Flags flags;
  CLI::App app{"tunefleet-agent: runs OpenCL tuning jobs from a tunefleet tracker on this device"};
  // The options of a serving agent, which --list-devices would silently ignore: refused beside it.
  std::vector<CLI::Option*> serving;
  serving.push_back(app.add_option("--tracker", flags.tracker, "tracker address host:port (e.g. 127.0.0.1:9190)")
                        ->check(cli::HostPort()));
  serving.push_back(app.add_option("--key", flags.key, "device key the tuner acquires by (e.g. pixel7-adreno)")
                        ->check(cli::DeviceKey()));
  serving.push_back(app.add_option("--token", flags.token,
                 "shared secret, when the tracker requires one (default: $TUNEFLEET_TOKEN, which, unlike an "
                 "argument, other users of the machine cannot read)")
                        ->check(cli::NotEmpty()));
  CLI::Option* platform = app.add_option("--platform", flags.platform,
                                         "OpenCL platform index (default 0; see --list-devices, which lists only it "
                                         "when given)")
                              ->check(cli::NonNegative());
  serving.push_back(app.add_option("--device", flags.device, "OpenCL device index within the platform (default 0)")
                        ->check(cli::NonNegative()));
  serving.push_back(app.add_option("--tls-ca", flags.tls_ca, "PEM file of root certificates: dial the tracker with TLS")
                        ->check(CLI::ExistingFile));
  app.add_option("--opencl-lib", flags.opencl_lib, "path of libOpenCL.so (default: $TUNEFLEET_OPENCL_LIB, system)")
      ->check(cli::NotEmpty());
  serving.push_back(app.add_option("--device-lock", flags.device_lock,
                 "lock file shared by the agents of one device: they build in parallel, run one at a time "
                 "(default: named by the device in $TMPDIR or /tmp; 'none': no lock)")
                        ->check(cli::NotEmpty()));
  serving.push_back(app.add_option("--job-timeout", flags.job_timeout_s,
                                   "seconds a job may take when it names no timeout (default 60)")
                        ->check(cli::Positive()));
  CLI::Option* cache_mb = app.add_option("--pocl-cache-mb", flags.pocl_cache_mb,
                 "keep PoCL's on-disk kernel cache in a folder of this agent's own, and every 16 jobs, when it "
                 "holds more than this many MB, prune its least recently used programs down to half of it (default "
                 "0: PoCL's own folder, which grows without bound)")
                              ->check(cli::NonNegative());
  serving.push_back(cache_mb);
  serving.push_back(app.add_option("--pocl-cache-dir", flags.pocl_cache_dir,
                 "with --pocl-cache-mb: where the agents' cache folders are kept, one slot-N folder for each agent "
                 "running (default: $XDG_CACHE_HOME/tunefleet/pocl, else ~/.cache/tunefleet/pocl)")
                        ->check(cli::NotEmpty()));
  CLI::Option* list = app.add_flag("--list-devices", flags.list_devices,
                                   "list OpenCL platforms and devices with their indices (of --platform only, when "
                                   "given); takes no option of a serving agent");
  for (CLI::Option* option : serving) list->excludes(option);
  app.add_flag("--version", flags.version, "print the version");
  app.add_flag("--worker", flags.worker, "internal: run as the job worker")->group("");
  app.add_option("--worker-fd", flags.worker_fd, "internal: the worker's socket")->group("");
  if (auto done = cli::ParseCommandLine(app, argc, argv, "tunefleet-agent")) return *done;
  flags.platform_given = platform->count() > 0;

  if (flags.worker) {
    if (flags.worker_fd < 0) {
      std::fprintf(stderr, "tunefleet-agent: error: --worker needs --worker-fd\n");
      return 2;
    }
    return RunWorker(WorkerOptions{flags.worker_fd, flags.opencl_lib, flags.platform, flags.device, flags.device_lock});
  }
  if (flags.version) {
    std::printf("tunefleet-agent %s\n", TUNEFLEET_VERSION);
    return ExitAfterOutput();
  }
  if (flags.list_devices) return ListDevices(flags);
  if (flags.token.empty()) {
    if (const char* env = std::getenv("TUNEFLEET_TOKEN")) flags.token = env;
  }
  if (!IsUtf8(flags.token)) {  // it travels in a protobuf string, which must be UTF-8
    std::fprintf(stderr, "tunefleet-agent: error: the token (--token or TUNEFLEET_TOKEN) is not valid UTF-8\n");
    return 2;
  }
  if (flags.tracker.empty() || flags.key.empty()) {
    std::fprintf(stderr, "tunefleet-agent: error: --tracker host:port and --key KEY are required (see --help)\n");
    return 2;
  }
  if (!flags.pocl_cache_dir.empty() && flags.pocl_cache_mb == 0) {
    std::fprintf(stderr, "tunefleet-agent: error: --pocl-cache-dir needs --pocl-cache-mb above 0\n");
    return 2;
  }
  if (int bad = CheckDeviceLock(flags.device_lock); bad != 0) return bad;
  spdlog::set_default_logger(spdlog::stderr_color_mt("tunefleet-agent"));
  GrpcLogRoute grpc_logs(GrpcLogRoute::Mode::kShow);
  return Serve(flags, argv[0]);
}

}  // namespace tunefleet::agent
