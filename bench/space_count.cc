// tunefleet-space-count: how many valid configs each template has for a task on a device, with no device at hand
// (the count `tunefleet tune --trials all` measures). Used to pick task shapes for recorded spaces.
//
//   tunefleet-space-count [--device h200|pocl|LOG.db] [--template NAME] SPEC...
//
// --device: h200 = the limits the agent reported for an NVIDIA H200 (driver 580.159.04); pocl = the PoCL CPU
// device that recorded bench/data/; a tuning log = the device with the most records in it. Default h200.
// Prints one line per (task, template that supports it): spec, template, valid configs, raw points.
#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"

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

Result<DeviceLimits> LimitsFromJson(const std::string& json) {
  proto::DeviceInfo info;
  if (!google::protobuf::util::JsonStringToMessage(json, &info).ok()) {
    return Status::InvalidArgument("device info is not DeviceInfo JSON");
  }
  return DeviceLimits::From(info);
}

Result<DeviceLimits> LimitsFromLog(const std::string& path) {
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
  return LimitsFromJson(best->info_json);
}

int Run(int argc, char** argv) {
  std::string device = "h200", only_template;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--device" || a == "--template") && i + 1 < argc) {
      (a == "--device" ? device : only_template) = argv[++i];
    } else if (a == "-h" || a == "--help" || a.rfind("--", 0) == 0) {
      std::cerr << "usage: tunefleet-space-count [--device h200|pocl|LOG.db] [--template NAME] SPEC...\n";
      return a == "-h" || a == "--help" ? 0 : 2;
    } else {
      specs.push_back(a);
    }
  }
  if (specs.empty()) {
    std::cerr << "tunefleet-space-count: error: give at least one task SPEC (see --help)\n";
    return 2;
  }
  if (!only_template.empty()) {
    if (Result<const Template*> t = LookUpTemplate(only_template); !t.ok()) {
      std::cerr << "tunefleet-space-count: error: " << t.status().message() << "\n";
      return 2;
    }
  }
  Result<DeviceLimits> limits = device == "h200"   ? LimitsFromJson(kH200)
                                : device == "pocl" ? LimitsFromJson(kPocl)
                                                   : LimitsFromLog(device);
  if (!limits.ok()) {
    std::cerr << "tunefleet-space-count: error: --device " << device << ": " << limits.status().message()
              << " (h200, pocl or a tuning log)\n";
    return 2;
  }
  int rc = 0;
  for (const std::string& spec : specs) {
    Result<Task> task = Task::Parse(spec);
    if (!task.ok()) {
      std::cerr << "tunefleet-space-count: error: " << spec << ": " << task.status().message() << "\n";
      rc = 2;
      continue;
    }
    for (const Template* t : TemplatesFor(*task, *limits)) {
      if (!only_template.empty() && t->name() != only_template) continue;
      Result<Space> space = t->MakeSpace(*task, *limits);
      if (!space.ok()) continue;
      std::printf("%-44s %-32s %10llu %12llu\n", task->ToSpec().c_str(), t->name().c_str(),
                  static_cast<unsigned long long>(space->CountValid()),
                  static_cast<unsigned long long>(space->RawSize()));
    }
  }
  return rc;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) { return tunefleet::Run(argc, argv); }
