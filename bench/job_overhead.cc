// tunefleet-job-overhead: how long one measurement job holds the device, and how much of that is not the kernel.
// Several agents share a device through its lock (agent/device_lock.h): everything a job does while holding it
// (buffers filled and uploaded, the correctness run and check, the timed runs) limits the fleet's trials per second.
// This runs one template's fallback config for a task JOBS times through the agent's real executor on one device
// and prints, per job, the time from taking the device to the result ("held"), the kernel's share of it (the
// measured cost times the runs made) and the rest.
//
//   tunefleet-job-overhead [--task SPEC] [--template NAME] [--jobs 8] [--platform 0] [--device 0]
//                          [--number 10] [--repeat 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/executor.h"
#include "common/cli_checks.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/template.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunefleet;
  std::string spec = "gemm:2048,2048,2048", template_name = "gemm.buffer";
  int jobs = 8, platform = 0, device = 0, number = 10, repeat = 3;
  CLI::App app{"tunefleet-job-overhead: runs one template's fallback config for a task JOBS times through the "
               "agent's executor on one OpenCL device and prints how long each job held the device, and how much of "
               "that was the kernel"};
  app.add_option("--task", spec, "Task spec")->capture_default_str();
  app.add_option("--template", template_name, "Template")->capture_default_str();
  app.add_option("--jobs", jobs, "Jobs to run")->capture_default_str()->check(cli::Positive());
  app.add_option("--platform", platform, "OpenCL platform index")->capture_default_str()->check(cli::NonNegative());
  app.add_option("--device", device, "Device index on the platform")->capture_default_str()->check(cli::NonNegative());
  app.add_option("--number", number, "Kernel runs per timed repeat")->capture_default_str()->check(cli::Positive());
  app.add_option("--repeat", repeat, "Timed repeats per job")->capture_default_str()->check(cli::Positive());
  if (auto code = cli::ParseCommandLine(app, argc, argv, "tunefleet-job-overhead")) return *code;
  Result<Task> task = Task::Parse(spec);
  const Template* tmpl = FindTemplate(template_name);
  if (!task.ok() || tmpl == nullptr) {
    std::fprintf(stderr, "tunefleet-job-overhead: bad --task or --template\n");
    return 2;
  }
  Result<std::unique_ptr<agent::Executor>> executor = agent::Executor::Open("", platform, device);
  if (!executor.ok()) {
    std::fprintf(stderr, "tunefleet-job-overhead: %s\n", executor.status().ToString().c_str());
    return 1;
  }
  const DeviceLimits limits = DeviceLimits::From((*executor)->device_info());
  Result<Space> space = tmpl->MakeSpace(*task, limits);
  if (!space.ok()) {
    std::fprintf(stderr, "tunefleet-job-overhead: %s\n", space.status().ToString().c_str());
    return 1;
  }
  Result<proto::KernelProgram> program = tmpl->Generate(*task, *space, tmpl->Fallback(*task, *space));
  if (!program.ok()) {
    std::fprintf(stderr, "tunefleet-job-overhead: %s\n", program.status().ToString().c_str());
    return 1;
  }
  program->mutable_timing()->set_warmup(1);
  program->mutable_timing()->set_number(number);
  program->mutable_timing()->set_repeat(repeat);
  std::printf("%s [%s] on %s, %d jobs, number %d, repeat %d\n", spec.c_str(), template_name.c_str(),
              (*executor)->device_info().name().c_str(), jobs, number, repeat);

  using Clock = std::chrono::steady_clock;
  std::vector<double> held, kernel, rest;
  for (int j = 0; j < jobs; ++j) {
    Clock::time_point running, released;
    const proto::MeasureResult r = (*executor)->Execute(*program, [&](agent::Executor::Stage stage) {
      if (stage == agent::Executor::Stage::kRunning) running = Clock::now();
      if (stage == agent::Executor::Stage::kReleased) released = Clock::now();
    });
    // Builds that predate kReleased held the device to the end of the job.
    if (released == Clock::time_point{}) released = Clock::now();
    const double h = std::chrono::duration<double>(released - running).count();
    if (r.status() != proto::OK) {
      std::fprintf(stderr, "tunefleet-job-overhead: job %d: %s %s\n", j, proto::MeasureStatus_Name(r.status()).c_str(),
                   r.message().c_str());
      return 1;
    }
    // Runs of the timed launches: warm-up, correctness run, number x repeat.
    const double k = r.mean_cost() * (2 + number * repeat);
    held.push_back(h);
    kernel.push_back(k);
    rest.push_back(h - k);
    std::printf("job %d: held %.1f ms, kernel %.1f ms, rest %.1f ms, compile %.3f s\n", j, h * 1e3, k * 1e3,
                (h - k) * 1e3, r.compile_time());
  }
  std::printf("median over the jobs after the first: held %.1f ms, kernel %.1f ms, rest %.1f ms\n",
              Median({held.begin() + 1, held.end()}) * 1e3, Median({kernel.begin() + 1, kernel.end()}) * 1e3,
              Median({rest.begin() + 1, rest.end()}) * 1e3);
  return 0;
}
