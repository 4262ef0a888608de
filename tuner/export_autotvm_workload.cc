#include "tuner/export_autotvm_workload.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <sstream>
#include <vector>

#include "search-spaces/conv_common.h"

namespace tunefleet {
namespace {

constexpr const char* kConvTemplate = "conv2d_nchwc.image2d";
constexpr const char* kDepthwiseTemplate = "depthwise_conv2d_nchwc.image2d";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsAdreno(const proto::DeviceInfo& info) {
  return Lower(info.name()).find("adreno") != std::string::npos ||
         Lower(info.vendor()).find("qualcomm") != std::string::npos;
}

// TVM's thread_warp_size: the SIMD width the schedules may rely on without barriers.
int WarpSize(const proto::DeviceInfo& info) {
  std::string vendor = Lower(info.vendor());
  if (info.device_type() == "GPU" && vendor.find("nvidia") != std::string::npos) return 32;
  if (info.device_type() == "GPU" && (vendor.find("advanced micro") != std::string::npos ||
                                      vendor.find("amd") != std::string::npos)) {
    return 64;
  }
  return 1;
}

// Value of "-name=value" in a target string, or "" when absent.
std::string TargetOption(const std::string& target, const std::string& name) {
  std::istringstream in(target);
  std::string tok;
  std::string prefix = "-" + name + "=";
  while (in >> tok) {
    if (tok.rfind(prefix, 0) == 0) return tok.substr(prefix.size());
  }
  return {};
}

// (tvm dtype, out dtype, task-name suffix) for a precision.
struct TvmTypes {
  const char* dtype;
  const char* out_dtype;
  const char* suffix;
};
TvmTypes TypesFor(Precision p) {
  switch (p) {
    case Precision::kFloat16: return {"float16", "float16", ""};
    case Precision::kFloat16Acc32: return {"float16", "float32", "_acc32"};
    case Precision::kFloat32: break;
  }
  return {"float32", "float32", ""};
}

nlohmann::json Tensor(std::vector<int64_t> shape, const char* dtype) { return {"TENSOR", shape, dtype}; }

Result<std::vector<int64_t>> Ints(const nlohmann::json& j, size_t n, const char* what) {
  if (!j.is_array() || j.size() != n) return Status::InvalidArgument(std::string(what) + " is not a list of " +
                                                                     std::to_string(n) + " integers: " + j.dump());
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer()) return Status::InvalidArgument(std::string(what) + " holds a non-integer: " + j.dump());
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidArgument(std::string(what) + " holds a number out of range: " + j.dump());
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

Result<std::vector<int64_t>> TensorShape(const nlohmann::json& j, size_t rank, const char* what, std::string* dtype) {
  if (!j.is_array() || j.size() != 3 || j[0] != "TENSOR" || !j[2].is_string()) {
    return Status::InvalidArgument(std::string(what) + " is not [\"TENSOR\", shape, dtype]: " + j.dump());
  }
  *dtype = j[2].get<std::string>();
  TF_ASSIGN_OR_RETURN(auto shape, Ints(j[1], rank, what));
  for (int64_t d : shape) {
    if (d < 1) return Status::InvalidArgument(std::string(what) + " shape " + j[1].dump() + " has a dimension below 1");
  }
  return shape;
}

}  // namespace

std::string TvmModel(const proto::DeviceInfo& info) {
  std::string model;
  bool gap = false;
  for (const char c : info.name()) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap && !model.empty()) model += '-';
      model += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      gap = false;
    } else {
      gap = true;
    }
  }
  return model;
}

std::string TvmTarget(const proto::DeviceInfo& info) {
  if (info.fingerprint().rfind(kAutotvmDevicePrefix, 0) == 0) {
    return info.fingerprint().substr(std::string(kAutotvmDevicePrefix).size());
  }
  uint64_t threads = info.max_work_group_size() > 0 ? info.max_work_group_size() : 256;
  // -model tells TVM's ApplyHistoryBest the device models of one log apart: it keeps the best per target key (all
  // of them share "opencl" and "gpu") and per model, and looks the model up first.
  const std::string model = TvmModel(info);
  const std::string model_option = model.empty() ? "" : " -model=" + model;
  std::ostringstream t;
  if (IsAdreno(info)) {
    uint64_t limit = info.image2d_max_width() > 0 ? info.image2d_max_width() : 16384;
    t << "opencl -keys=adreno,opencl,gpu -device=adreno -max_num_threads=" << threads << model_option
      << " -texture_spatial_limit=" << limit << " -thread_warp_size=1";
  } else {
    // TVM's opencl target takes the texture limit on any device; without it, a device with images came back from
    // an import as one without them, and the image templates' records were refused.
    t << "opencl -keys=opencl,gpu -max_num_threads=" << threads << model_option;
    if (info.image_support()) {
      t << " -texture_spatial_limit=" << (info.image2d_max_width() > 0 ? info.image2d_max_width() : 16384);
    }
    t << " -thread_warp_size=" << WarpSize(info);
  }
  return t.str();
}

namespace {

// A target option's value as a count of 1 to 2^31: what -max_num_threads and -texture_spatial_limit hold.
Result<uint64_t> TargetCount(const std::string& target, const std::string& option, const std::string& value) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > (uint64_t{1} << 31)) {
    return Status::InvalidArgument("target '" + target + "': -" + option + "=" + value +
                                   " is not a count from 1 to 2147483648");
  }
  return n;
}

}  // namespace

Result<proto::DeviceInfo> DeviceFromTvmTarget(const std::string& target) {
  if (target.rfind("opencl", 0) != 0) {
    return Status::InvalidArgument("target '" + target + "' is not an OpenCL target");
  }
  proto::DeviceInfo info;
  std::string device = TargetOption(target, "device");
  // -model names the device (tunefleet's exports write it), so that the devices of one log stay apart by name too.
  const std::string model = TargetOption(target, "model");
  info.set_name(!model.empty() ? model : device.empty() ? "opencl" : device);
  if (device == "adreno") info.set_vendor("QUALCOMM");
  info.set_device_type("GPU");
  std::string threads = TargetOption(target, "max_num_threads");
  uint64_t max_threads = 256;
  if (!threads.empty()) {
    TF_ASSIGN_OR_RETURN(max_threads, TargetCount(target, "max_num_threads", threads));
  }
  info.set_max_work_group_size(max_threads);
  std::string limit = TargetOption(target, "texture_spatial_limit");
  if (!limit.empty()) {
    TF_ASSIGN_OR_RETURN(uint64_t side, TargetCount(target, "texture_spatial_limit", limit));
    info.set_image_support(true);
    info.set_image2d_max_width(side);
    info.set_image2d_max_height(side);
    info.set_fp16(true);
  }
  info.set_fingerprint(kAutotvmDevicePrefix + target);
  return info;
}

bool MirrorsTvm(const std::string& template_name) {
  return template_name == kConvTemplate || template_name == kDepthwiseTemplate;
}

Result<TvmWorkload> TvmWorkloadFor(const Task& task, const std::string& template_name) {
  if (!MirrorsTvm(template_name)) {
    return Status::NotFound("template " + template_name + " does not mirror a TVM template");
  }
  TF_ASSIGN_OR_RETURN(ConvShape s, ConvShapeFromTask(task));
  TvmTypes types = TypesFor(task.precision);
  TvmWorkload w;
  const bool dw = template_name == kDepthwiseTemplate;
  if (dw != s.depthwise()) {
    return Status::InvalidArgument(task.ToSpec() + ": " + template_name + " needs " +
                                   (dw ? "a depthwise" : "an ungrouped") + " convolution");
  }
  if (!dw && s.groups != 1) return Status::InvalidArgument(task.ToSpec() + ": grouped convolution has no TVM form");
  std::string base = dw ? "depthwise_conv2d_nchwc" : "conv2d_nchwc";
  w.task_name = base + types.suffix + ".image2d";
  nlohmann::json weights = dw ? Tensor({s.c, s.multiplier(), s.kh, s.kw}, types.dtype)
                              : Tensor({s.k, s.c, s.kh, s.kw}, types.dtype);
  w.args = nlohmann::json::array({Tensor({s.n, s.c, s.h, s.w}, types.dtype), weights,
                                  nlohmann::json::array({s.stride, s.stride}),
                                  nlohmann::json::array({s.pad, s.pad, s.pad, s.pad}),
                                  nlohmann::json::array({s.dilation, s.dilation}), types.out_dtype});
  return w;
}

Result<TvmTask> TaskFromTvmWorkload(const std::string& task_name, const nlohmann::json& args) {
  std::string name = task_name;
  bool acc32 = false;
  if (auto pos = name.find("_acc32."); pos != std::string::npos) {
    acc32 = true;
    name.erase(pos, 6);
  }
  if (!MirrorsTvm(name)) return Status::NotFound("TVM task " + task_name + " has no tunefleet template");
  const bool dw = name == kDepthwiseTemplate;
  if (!args.is_array() || args.size() != 6) {
    return Status::InvalidArgument(task_name + ": expected 6 args (data, kernel, strides, padding, dilation, "
                                   "out_dtype), got " + args.dump());
  }
  std::string dtype, kdtype;
  TF_ASSIGN_OR_RETURN(auto data, TensorShape(args[0], 4, "data", &dtype));
  TF_ASSIGN_OR_RETURN(auto kernel, TensorShape(args[1], 4, "kernel", &kdtype));
  TF_ASSIGN_OR_RETURN(auto strides, Ints(args[2], 2, "strides"));
  TF_ASSIGN_OR_RETURN(auto pad, Ints(args[3], 4, "padding"));
  TF_ASSIGN_OR_RETURN(auto dil, Ints(args[4], 2, "dilation"));
  if (strides[0] != strides[1] || dil[0] != dil[1] ||
      std::count(pad.begin(), pad.end(), pad[0]) != static_cast<long>(pad.size())) {
    return Status::InvalidArgument(task_name + ": only equal strides, dilations and paddings map to a task: " +
                                   args.dump());
  }
  std::string precision = dtype == "float16" ? (acc32 ? "float16-acc32" : "float16") : dtype;
  // The types must be those the export writes for the precision: a float64 output was taken as a float32 task.
  const std::string out_dtype = args[5].is_string() ? args[5].get<std::string>() : args[5].dump();
  const std::string want_out = dtype == "float16" && !acc32 ? "float16" : "float32";
  if (kdtype != dtype || out_dtype != want_out) {
    return Status::InvalidArgument(task_name + ": data " + dtype + ", kernel " + kdtype + " and out_dtype " +
                                   out_dtype + " are no tunefleet precision (float32, float16, or float16 with a "
                                   "float32 output as *_acc32)");
  }
  std::ostringstream spec;
  if (dw) {
    if (kernel[0] != data[1]) return Status::InvalidArgument(task_name + ": kernel channels differ from data's");
    spec << "dwconv2d:" << data[0] << "," << data[1] << "," << data[2] << "," << data[3] << "," << kernel[2] << ","
         << kernel[3] << "," << strides[0] << "," << pad[0] << ",dilation=" << dil[0] << ",multiplier=" << kernel[1];
  } else {
    if (kernel[1] != data[1]) {
      return Status::InvalidArgument(task_name + ": " +
                                     (data[1] % kernel[1] == 0 ? std::string("grouped convolution is not supported")
                                                               : "the kernel takes " + std::to_string(kernel[1]) +
                                                                     " input channels, the data has " +
                                                                     std::to_string(data[1])));
    }
    spec << "conv2d:" << data[0] << "," << data[1] << "," << data[2] << "," << data[3] << "," << kernel[0] << ","
         << kernel[2] << "," << kernel[3] << "," << strides[0] << "," << pad[0] << ",dilation=" << dil[0];
  }
  spec << ":" << precision;
  TF_ASSIGN_OR_RETURN(Task task, Task::Parse(spec.str()));
  return TvmTask{name, std::move(task)};
}

Result<nlohmann::json> ConfigFromTvmEntity(const Space& space, const nlohmann::json& entity) {
  if (!entity.is_array()) return Status::InvalidArgument("entity is not a list: " + entity.dump());
  nlohmann::json config = nlohmann::json::object();
  for (const auto& e : entity) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_string()) {
      return Status::InvalidArgument("entity item is not [knob, kind, value]: " + e.dump());
    }
    const std::string knob = e[0].get<std::string>();
    int ki = space.KnobIndex(knob);
    if (ki < 0) return Status::InvalidArgument("knob '" + knob + "' is not in the template's space");
    if (config.contains(knob)) return Status::InvalidArgument("knob '" + knob + "' is given twice");
    const Knob& k = space.knobs()[ki];
    if (e[1] == "sp") {
      if (k.kind != KnobKind::kSplit || !e[2].is_array() || e[2].empty()) {
        return Status::InvalidArgument("knob '" + knob + "' is not a split of this space: " + e.dump());
      }
      for (const auto& factor : e[2]) {  // 1.5 would be read as 1, "x" would throw
        if (!factor.is_number_integer()) {
          return Status::InvalidArgument("split " + e.dump() + " of knob '" + knob + "' holds " + factor.dump() +
                                         ", not a whole number");
        }
      }
      std::vector<int64_t> tail;
      for (size_t i = 1; i < e[2].size(); ++i) tail.push_back(e[2][i].get<int64_t>());
      const int64_t first = e[2][0].get<int64_t>();
      // -1 is "the rest": among choices with this tail take the largest outer factor (the exact split when
      // the space holds exact factorizations only).
      const std::vector<int64_t>* found = nullptr;
      for (const auto& choice : k.choices) {
        if (choice.size() != tail.size() + 1 || !std::equal(tail.begin(), tail.end(), choice.begin() + 1)) continue;
        if (first != -1 && choice[0] != first) continue;
        if (!found || choice[0] > (*found)[0]) found = &choice;
      }
      if (!found) return Status::InvalidArgument("split " + e.dump() + " is not a choice of knob '" + knob + "'");
      config[knob] = *found;
    } else if (e[1] == "ot") {
      if (k.kind == KnobKind::kSplit) return Status::InvalidArgument("knob '" + knob + "' is a split, not \"ot\"");
      config[knob] = e[2];
    } else {
      return Status::InvalidArgument("entity kind " + e[1].dump() + " of knob '" + knob + "' is not supported");
    }
  }
  // Space::FromJson checks the values and that every knob is present.
  TF_ASSIGN_OR_RETURN(Config c, space.FromJson(config));
  return space.ToJson(c);
}

}  // namespace tunefleet
