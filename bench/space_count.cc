// tunefleet-space-count: how many valid configs each template has for a task on a device, with no device at hand
// (the count `tunefleet tune --trials all` measures). Used to pick task shapes for recorded spaces.
//
//   tunefleet-space-count [--device h200|pocl|LOG.db] [--template NAME] SPEC...
//
// --device: h200 = the limits the agent reported for an NVIDIA H200 (driver 580.159.04); pocl = the PoCL CPU
// device that recorded bench/data/; a tuning log = the device with the most records in it. Default h200.
// Prints one line per (task, template that supports it): spec, template, valid configs, raw points.
// A SPEC that cannot be counted (not a task, no template runs it on the device, its space cannot be made) gets one
// error line saying why, and the other SPECs are still counted; exit 2 then (bad input), 1 when standard output
// could not be written.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/tune_run.h"

namespace tunefleet {
namespace {

// DeviceInfo JSON as the agents reported it (devices.info_json of a tuning log).
constexpr const char* kH200 =
    R"({"platform_name":"NVIDIA CUDA","vendor":"NVIDIA Corporation","name":"NVIDIA H200",)"
    R"("driver_version":"580.159.04","device_version":"OpenCL 3.0 CUDA","device_type":"GPU","compute_units":132,)"
    R"("max_work_group_size":"1024","max_work_item_sizes":["1024","1024","64"],"local_mem_bytes":"49152",)"
    R"("image_support":true,"image2d_max_width":"32768","image2d_max_height":"32768"})";
constexpr const char* kPocl =
    R"({"platform_name":"Portable Computing Language","name":"pthread-skylake-avx512-AMD EPYC","device_type":"CPU",)"
    R"("compute_units":2,"max_work_group_size":"4096","max_work_item_sizes":["4096","4096","4096"],)"
    R"("local_mem_bytes":"1048576","image_support":true,"image2d_max_width":"16384","image2d_max_height":"16384"})";

constexpr const char* kTool = "tunefleet-space-count";

// The limits of a device and its name as refusals say it ("no template can run SPEC on NAME").
struct Device {
  DeviceLimits limits;
  std::string name;
};

Result<Device> DeviceFromJson(const std::string& json) {
  proto::DeviceInfo info;
  if (!google::protobuf::util::JsonStringToMessage(json, &info).ok()) {
    return Status::InvalidArgument("device info is not DeviceInfo JSON");
  }
  return Device{DeviceLimits::From(info), info.name()};
}

Result<Device> DeviceFromLog(const std::string& path) {
  // OpenExisting: a mistyped --device names no file, and must not become an empty log of that name.
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> log, TuningLog::OpenExisting(path));
  TF_ASSIGN_OR_RETURN(std::vector<DeviceRow> devices, log->Devices());
  if (devices.empty()) return Status::NotFound(path + ": no device in the log");
  TF_ASSIGN_OR_RETURN(std::vector<RecordRow> records, log->Records(0, 0, 0));
  std::map<int64_t, size_t> per_device;
  for (const RecordRow& r : records) ++per_device[r.device_id];
  const DeviceRow* best = &devices.front();
  for (const DeviceRow& d : devices) {
    if (per_device[d.id] > per_device[best->id]) best = &d;
  }
  return DeviceFromJson(best->info_json);
}

// One error line; returns the exit code for it. The counts printed before it go first (a failed write shows at the
// end, in FlushStandardOutput).
int Error(const std::string& message, int code) {
  std::fflush(stdout);
  std::cerr << kTool << ": error: " << message << "\n";
  return code;
}

// Prints the counts of `spec` on `device` (under `only_template` when not empty). Returns 0, or the exit code after
// one error line: 2 when the spec is no task or no template (the one given) runs it there, or its space cannot be
// made for it (a shape past a template's bounds); 1 for any other failure.
int CountSpec(const std::string& spec, const Device& device, const Template* only_template) {
  Result<Task> task = Task::Parse(spec);
  if (!task.ok()) return Error(task.status().message(), 2);  // the message names the spec
  std::vector<const Template*> templates;
  if (only_template != nullptr) {
    std::string why;
    if (!only_template->Supports(*task, device.limits, &why)) {
      return Error("template " + only_template->name() + " cannot run " + task->ToSpec() + " on " + device.name +
                       (why.empty() ? "" : ": " + why),
                   2);
    }
    templates.push_back(only_template);
  } else {
    templates = TemplatesFor(*task, device.limits);
    if (templates.empty()) return Error(NoTemplateRuns(*task, device.limits, device.name).message(), 2);
  }
  int rc = 0;
  for (const Template* t : templates) {
    Result<Space> space = t->MakeSpace(*task, device.limits);
    if (!space.ok()) {
      const int code = space.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
      rc = std::max(rc, Error(task->ToSpec() + " on " + t->name() + ": " + space.status().message(), code));
      continue;
    }
    std::printf("%-44s %-32s %10llu %12llu\n", task->ToSpec().c_str(), t->name().c_str(),
                static_cast<unsigned long long>(space->CountValid()),
                static_cast<unsigned long long>(space->RawSize()));
  }
  return rc;
}

int Run(int argc, char** argv) {
  std::string device_arg = "h200", template_name;
  std::vector<std::string> specs;
  CLI::App app{"tunefleet-space-count: how many valid configs each template has for a task on a device's limits "
               "(no device needed); one line per task and template: spec, template, valid configs, raw points"};
  app.add_option("SPEC", specs, "Task spec, e.g. gemm:256,256,256 or conv2d:1,48,28,28,48,3,3,1,1");
  app.add_option("--device", device_arg,
                 "Whose limits: h200 (an NVIDIA H200 as its agent reported it), pocl (the PoCL CPU device of "
                 "bench/data/) or a tuning log (its device with the most records)")
      ->capture_default_str()
      ->check(cli::NotEmpty());
  app.add_option("--template", template_name, "Count this template only (default: every template that runs the task)")
      ->check(cli::NotEmpty());
  if (auto code = cli::ParseCommandLine(app, argc, argv, kTool)) return *code;
  // Looked up once parsed (not as the option's check), so that `--template A --template B` is refused as given
  // twice rather than for A.
  const Template* only_template = nullptr;
  if (!template_name.empty()) {
    Result<const Template*> t = LookUpTemplate(template_name);
    if (!t.ok()) return Error("--template: " + t.status().message(), 2);
    only_template = *t;
  }
  if (specs.empty()) return Error("give at least one task SPEC (see --help)", 2);
  Result<Device> device = device_arg == "h200"   ? DeviceFromJson(kH200)
                          : device_arg == "pocl" ? DeviceFromJson(kPocl)
                                                 : DeviceFromLog(device_arg);
  if (!device.ok()) {
    return Error("--device " + device_arg + ": " + device.status().message() + " (h200, pocl or a tuning log)", 2);
  }
  int rc = 0;
  for (const std::string& spec : specs) rc = std::max(rc, CountSpec(spec, *device, only_template));
  // The counts are the result: a count that did not reach standard output (a full disk, a closed pipe) is a
  // failure, not exit 0 with nothing written. A run that failed already said its line.
  if (Status out = FlushStandardOutput(); !out.ok() && rc == 0) rc = Error(out.message(), 1);
  return rc;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) { return tunefleet::Run(argc, argv); }
