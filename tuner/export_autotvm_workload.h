// The mapping between tunefleet's view of a measurement and AutoTVM's (log format v0.2), both ways:
// device ↔ target string, (task, template) ↔ (TVM task name, TVM args), config ↔ knob entity list.
// Only templates that mirror TVM's knobs map (the Adreno texture convolutions); others give NotFound.
// Thread safety: free functions over values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

// The TVM version AutoTVM's log lines we write name (their own version is 0.2: export_autotvm.cc).
inline constexpr const char* kAutotvmTvmVersion = "0.8.0";
// Fingerprints of devices created by an import start with this, followed by the target string.
inline constexpr const char* kAutotvmDevicePrefix = "autotvm:";

// The device's name as a TVM target's -model: lowercase letters and digits, each run of other characters one '-'
// ("QUALCOMM Adreno(TM) 740" is "qualcomm-adreno-tm-740"). Empty for a device without a name.
std::string TvmModel(const proto::DeviceInfo& info);

// The target string TVM would use for the device: Adreno gets
// "opencl -keys=adreno,opencl,gpu -device=adreno -max_num_threads=N -model=M -texture_spatial_limit=L
//  -thread_warp_size=1"; any other device "opencl -keys=opencl,gpu -max_num_threads=N -model=M -thread_warp_size=W"
// (-model=TvmModel(info), left out when it is empty). A device imported from a log gives back the target it was
// imported with.
std::string TvmTarget(const proto::DeviceInfo& info);
// The reverse, as far as a target string tells: a DeviceInfo whose fingerprint is "autotvm:<target>", named by its
// -model (else its -device, else "opencl").
Result<proto::DeviceInfo> DeviceFromTvmTarget(const std::string& target);

// True when `template_name` mirrors a TVM template (conv2d_nchwc.image2d, depthwise_conv2d_nchwc.image2d).
bool MirrorsTvm(const std::string& template_name);

struct TvmWorkload {
  std::string task_name;  // "conv2d_nchwc.image2d", "conv2d_nchwc_acc32.image2d", ...
  nlohmann::json args;    // [["TENSOR", shape, dtype], ["TENSOR", shape, dtype], strides, padding, dilation, out_dtype]
};

// TVM's task name and args for a task run by `template_name`. Bias and activation are not part of TVM's
// tuning task (Relay fuses them), so they are dropped. NotFound when the template does not mirror TVM;
// InvalidArgument when the task has no TVM form (grouped convolution).
Result<TvmWorkload> TvmWorkloadFor(const Task& task, const std::string& template_name);
// The reverse: the template name and the task. Errors name what is wrong with the args.
struct TvmTask {
  std::string template_name;
  Task task;
};
Result<TvmTask> TaskFromTvmWorkload(const std::string& task_name, const nlohmann::json& args);

// The tuning log's config JSON for AutoTVM's entity list (Space::ToTvmEntity writes one: [[knob, "sp", [-1, f2,
// ...]] for splits, TVM's -1 meaning "whatever is left", [knob, "ot", value] otherwise); each -1 is resolved against
// the knob's choices. Errors name the knob that does not fit the space.
Result<nlohmann::json> ConfigFromTvmEntity(const Space& space, const nlohmann::json& entity);

}  // namespace tunefleet
