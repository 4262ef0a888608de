// tunefleet-job-overhead: how long one measurement job holds the device, and how much of that is not the kernel.
// Several agents share a device through its lock (agent/device_lock.h): everything a job does while holding it
// (buffers filled and uploaded, the correctness run and check, the timed runs) limits the fleet's trials per second.
// This runs one template's fallback config for a task JOBS times through the agent's real executor on one device
// and prints, per job, the time from taking the device to the result ("held"), the kernel's share of it (the
// measured cost times the runs made) and the rest.
//
//   tunefleet-job-overhead [--task SPEC] [--template NAME] [--jobs 8] [--platform 0] [--device 0]
//                          [--number 10] [--repeat 3]
//
// Exit 2 for bad input, after one line saying which option and why: a --task that is no task, an unknown
// --template or one that does not run the task, a --platform or --device index out of range, and a task the device
// cannot run (a float16 task on a device without cl_khr_fp16), as `tunefleet measure` says it. Exit 1 for a failure
// at run time (OpenCL not found, a job that failed, standard output that could not be written).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/executor.h"
#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/template.h"

namespace tunefleet {
namespace {

constexpr const char* kTool = "tunefleet-job-overhead";

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One error line; returns `code`.
int Error(const std::string& message, int code) {
  std::fflush(stdout);  // the lines printed before it go first
  std::fprintf(stderr, "%s: error: %s\n", kTool, message.c_str());
  return code;
}

// 2 for an InvalidArgument (the input is at fault), 1 for any other failure.
int CodeOf(const Status& s) { return s.code() == Status::Code::kInvalidArgument ? 2 : 1; }

// "template T cannot run SPEC on DEVICE[: why]" when `tmpl` does not run `task` on a device of `limits`.
std::string Misfit(const Template& tmpl, const Task& task, const DeviceLimits& limits, const std::string& device) {
  std::string why;
  if (tmpl.Supports(task, limits, &why)) return {};
  return "template " + tmpl.name() + " cannot run " + task.ToSpec() + " on " + device + (why.empty() ? "" : ": " + why);
}

int Run(int argc, char** argv) {
  std::string spec = "gemm:2048,2048,2048", template_name = "gemm.buffer";
  int jobs = 8, platform = 0, device = 0, number = 10, repeat = 3;
  CLI::App app{"tunefleet-job-overhead: runs one template's fallback config for a task JOBS times through the "
               "agent's executor on one OpenCL device and prints how long each job held the device, and how much of "
               "that was the kernel"};
  app.add_option("--task", spec, "Task spec")->capture_default_str()->check(cli::NotEmpty());
  app.add_option("--template", template_name, "Template")->capture_default_str()->check(cli::NotEmpty());
  app.add_option("--jobs", jobs, "Jobs to run (the median is over those after the first)")
      ->capture_default_str()
      ->check(cli::Positive());
  app.add_option("--platform", platform, "OpenCL platform index")->capture_default_str()->check(cli::NonNegative());
  app.add_option("--device", device, "Device index on the platform")->capture_default_str()->check(cli::NonNegative());
  app.add_option("--number", number, "Kernel runs per timed repeat")->capture_default_str()->check(cli::Positive());
  app.add_option("--repeat", repeat, "Timed repeats per job")->capture_default_str()->check(cli::Positive());
  if (auto code = cli::ParseCommandLine(app, argc, argv, kTool)) return *code;
  Result<Task> task = Task::Parse(spec);
  if (!task.ok()) return Error("--task: " + task.status().message(), 2);
  Result<const Template*> found = LookUpTemplate(template_name);
  if (!found.ok()) return Error("--template: " + found.status().message(), 2);
  const Template* tmpl = *found;
  // A template of another op (--template's fault), or a shape that no device runs (--task's), is said before a
  // device is opened.
  if (std::string misfit = Misfit(*tmpl, *task, DeviceLimits::Unbounded(), "any device"); !misfit.empty()) {
    return Error((tmpl->RunsOp(task->op) ? "--task: " : "--template: ") + misfit, 2);
  }
  // A --platform or --device index out of range is bad input (InvalidArgument, as tunefleet-agent exits 2 for it);
  // OpenCL that does not load, or a driver that fails, is not.
  Result<std::unique_ptr<agent::Executor>> executor = agent::Executor::Open("", platform, device);
  if (!executor.ok()) {
    // The agent's refusal points at its own --list-devices, which this tool has not.
    std::string message = executor.status().message();
    const std::string list = "see --list-devices";
    if (size_t at = message.find(list); at != std::string::npos) {
      message.replace(at, list.size(), "see tunefleet-agent --list-devices");
    }
    return Error(message, CodeOf(executor.status()));
  }
  const proto::DeviceInfo& info = (*executor)->device_info();
  const DeviceLimits limits = DeviceLimits::From(info);
  // A task this device cannot run (float16 without cl_khr_fp16, images it lacks): bad input, as `tunefleet
  // measure` exits 2 when the device cannot run the task.
  if (std::string misfit = Misfit(*tmpl, *task, limits, info.name()); !misfit.empty()) return Error(misfit, 2);
  Result<Space> space = tmpl->MakeSpace(*task, limits);
  if (!space.ok()) return Error(task->ToSpec() + " on " + tmpl->name() + ": " + space.status().message(),
                                CodeOf(space.status()));
  Result<proto::KernelProgram> program = tmpl->Generate(*task, *space, tmpl->Fallback(*task, *space));
  if (!program.ok()) return Error(program.status().message(), 1);
  program->mutable_timing()->set_warmup(1);
  program->mutable_timing()->set_number(number);
  program->mutable_timing()->set_repeat(repeat);
  std::printf("%s [%s] on %s, %d jobs, number %d, repeat %d\n", spec.c_str(), template_name.c_str(),
              info.name().c_str(), jobs, number, repeat);

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
      return Error("job " + std::to_string(j) + ": " + proto::MeasureStatus_Name(r.status()) + " " + r.message(), 1);
    }
    // Runs of the timed launches: warm-up, correctness run, number x repeat.
    const double k = r.mean_cost() * (2 + number * repeat);
    held.push_back(h);
    kernel.push_back(k);
    rest.push_back(h - k);
    std::printf("job %d: held %.1f ms, kernel %.1f ms, rest %.1f ms, compile %.3f s\n", j, h * 1e3, k * 1e3,
                (h - k) * 1e3, r.compile_time());
  }
  // The first job builds the program and fills the caches; the median is of the jobs after it.
  if (jobs < 2) {
    std::printf("no median: there is no job after the first (give --jobs 2 or more)\n");
  } else {
    std::printf("median over the %d jobs after the first: held %.1f ms, kernel %.1f ms, rest %.1f ms\n", jobs - 1,
                Median({held.begin() + 1, held.end()}) * 1e3, Median({kernel.begin() + 1, kernel.end()}) * 1e3,
                Median({rest.begin() + 1, rest.end()}) * 1e3);
  }
  // The figures are the result: output that did not reach standard output (a full disk, a closed pipe) is a failure.
  if (Status out = FlushStandardOutput(); !out.ok()) return Error(out.message(), 1);
  return 0;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) { return tunefleet::Run(argc, argv); }
