#include "agent/device_info.h"

#include <sstream>

#include "agent/cl_error.h"
#include "common/fnv_hash.h"

namespace tunefleet::agent {
namespace {

std::string PlatformString(const ClApi& api, cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (api.clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (api.clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  return std::string(text.c_str());  // drop the terminating NUL
}

Result<std::string> DeviceString(const ClApi& api, cl_device_id device, cl_device_info what) {
  size_t size = 0;
  TF_RETURN_IF_ERROR(ClStatus("clGetDeviceInfo", api.clGetDeviceInfo(device, what, 0, nullptr, &size)));
  std::string text(size, '\0');
  TF_RETURN_IF_ERROR(ClStatus("clGetDeviceInfo", api.clGetDeviceInfo(device, what, size, text.data(), nullptr)));
  return std::string(text.c_str());
}

template <typename T>
Result<T> DeviceValue(const ClApi& api, cl_device_id device, cl_device_info what) {
  T value{};
  TF_RETURN_IF_ERROR(ClStatus("clGetDeviceInfo", api.clGetDeviceInfo(device, what, sizeof(T), &value, nullptr)));
  return value;
}

std::string TypeName(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  return "OTHER";
}

}  // namespace

Result<std::vector<PlatformDevices>> ListPlatforms(const ClApi& api) {
  cl_uint count = 0;
  cl_int err = api.clGetPlatformIDs(0, nullptr, &count);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || count == 0) return std::vector<PlatformDevices>{};
  TF_RETURN_IF_ERROR(ClStatus("clGetPlatformIDs", err));
  std::vector<cl_platform_id> platforms(count);
  TF_RETURN_IF_ERROR(ClStatus("clGetPlatformIDs", api.clGetPlatformIDs(count, platforms.data(), nullptr)));

  std::vector<PlatformDevices> result;
  for (cl_platform_id platform : platforms) {
    PlatformDevices entry;
    entry.platform = platform;
    entry.platform_name = PlatformString(api, platform, CL_PLATFORM_NAME);
    cl_uint devices = 0;
    if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) == CL_SUCCESS && devices > 0) {
      entry.devices.resize(devices);
      if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices, entry.devices.data(), nullptr) != CL_SUCCESS) {
        entry.devices.clear();
      }
    }
    result.push_back(std::move(entry));
  }
  return result;
}

Result<cl_device_id> PickDevice(const ClApi& api, int platform_index, int device_index) {
  TF_ASSIGN_OR_RETURN(std::vector<PlatformDevices> platforms, ListPlatforms(api));
  if (platforms.empty()) return Status::NotFound("no OpenCL platform found (is an ICD installed?)");
  if (platform_index < 0 || platform_index >= static_cast<int>(platforms.size())) {
    return Status::InvalidArgument("--platform " + std::to_string(platform_index) + " is out of range: " +
                                   std::to_string(platforms.size()) + " platform(s), see --list-devices");
  }
  const PlatformDevices& platform = platforms[platform_index];
  if (device_index < 0 || device_index >= static_cast<int>(platform.devices.size())) {
    return Status::InvalidArgument("--device " + std::to_string(device_index) + " is out of range: platform " +
                                   std::to_string(platform_index) + " has " + std::to_string(platform.devices.size()) +
                                   " device(s), see --list-devices");
  }
  return platform.devices[device_index];
}

Result<proto::DeviceInfo> DescribeDevice(const ClApi& api, cl_device_id device) {
  proto::DeviceInfo info;
  TF_ASSIGN_OR_RETURN(cl_platform_id platform, DeviceValue<cl_platform_id>(api, device, CL_DEVICE_PLATFORM));
  info.set_platform_name(PlatformString(api, platform, CL_PLATFORM_NAME));
  TF_ASSIGN_OR_RETURN(*info.mutable_vendor(), DeviceString(api, device, CL_DEVICE_VENDOR));
  TF_ASSIGN_OR_RETURN(*info.mutable_name(), DeviceString(api, device, CL_DEVICE_NAME));
  TF_ASSIGN_OR_RETURN(*info.mutable_driver_version(), DeviceString(api, device, CL_DRIVER_VERSION));
  TF_ASSIGN_OR_RETURN(*info.mutable_device_version(), DeviceString(api, device, CL_DEVICE_VERSION));
  TF_ASSIGN_OR_RETURN(*info.mutable_opencl_c_version(), DeviceString(api, device, CL_DEVICE_OPENCL_C_VERSION));
  TF_ASSIGN_OR_RETURN(cl_device_type type, DeviceValue<cl_device_type>(api, device, CL_DEVICE_TYPE));
  info.set_device_type(TypeName(type));
  TF_ASSIGN_OR_RETURN(cl_uint units, DeviceValue<cl_uint>(api, device, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.set_compute_units(units);
  TF_ASSIGN_OR_RETURN(cl_uint clock, DeviceValue<cl_uint>(api, device, CL_DEVICE_MAX_CLOCK_FREQUENCY));
  info.set_max_clock_mhz(clock);
  TF_ASSIGN_OR_RETURN(size_t max_group, DeviceValue<size_t>(api, device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  info.set_max_work_group_size(max_group);
  TF_ASSIGN_OR_RETURN(cl_uint dims, DeviceValue<cl_uint>(api, device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS));
  std::vector<size_t> item_sizes(dims);
  TF_RETURN_IF_ERROR(ClStatus("clGetDeviceInfo", api.clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                                                                     dims * sizeof(size_t), item_sizes.data(),
                                                                     nullptr)));
  for (size_t size : item_sizes) info.add_max_work_item_sizes(size);
  TF_ASSIGN_OR_RETURN(cl_ulong local_mem, DeviceValue<cl_ulong>(api, device, CL_DEVICE_LOCAL_MEM_SIZE));
  info.set_local_mem_bytes(local_mem);
  TF_ASSIGN_OR_RETURN(cl_ulong global_mem, DeviceValue<cl_ulong>(api, device, CL_DEVICE_GLOBAL_MEM_SIZE));
  info.set_global_mem_bytes(global_mem);
  TF_ASSIGN_OR_RETURN(cl_ulong max_alloc, DeviceValue<cl_ulong>(api, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  info.set_max_alloc_bytes(max_alloc);
  TF_ASSIGN_OR_RETURN(cl_bool images, DeviceValue<cl_bool>(api, device, CL_DEVICE_IMAGE_SUPPORT));
  info.set_image_support(images == CL_TRUE);
  if (info.image_support()) {
    TF_ASSIGN_OR_RETURN(size_t width, DeviceValue<size_t>(api, device, CL_DEVICE_IMAGE2D_MAX_WIDTH));
    TF_ASSIGN_OR_RETURN(size_t height, DeviceValue<size_t>(api, device, CL_DEVICE_IMAGE2D_MAX_HEIGHT));
    info.set_image2d_max_width(width);
    info.set_image2d_max_height(height);
  }
  TF_ASSIGN_OR_RETURN(*info.mutable_extensions(), DeviceString(api, device, CL_DEVICE_EXTENSIONS));
  info.set_fp16(info.extensions().find("cl_khr_fp16") != std::string::npos);
  info.set_fingerprint(Fingerprint(info));
  return info;
}

std::string Fingerprint(const proto::DeviceInfo& info) {
  FnvHash hash;
  hash.Add(info.vendor()).Add(info.name()).Add(info.driver_version()).Add(info.device_version());
  hash.Add(info.opencl_c_version()).Add(info.device_type()).Add(info.compute_units());
  hash.Add(info.max_work_group_size());
  for (uint64_t size : info.max_work_item_sizes()) hash.Add(size);
  // Global memory and max allocation are left out: some drivers (PoCL) derive them from the RAM free at start-up,
  // and the fingerprint must not change when the same device reconnects.
  hash.Add(info.local_mem_bytes());
  hash.Add(info.image_support() ? 1 : 0).Add(info.image2d_max_width()).Add(info.image2d_max_height());
  hash.Add(info.fp16() ? 1 : 0);
  return hash.Hex();
}

Result<std::string> DeviceListing(const ClApi& api, std::optional<int> only_platform) {
  TF_ASSIGN_OR_RETURN(std::vector<PlatformDevices> platforms, ListPlatforms(api));
  if (only_platform && (*only_platform < 0 || static_cast<size_t>(*only_platform) >= platforms.size())) {
    return Status::InvalidArgument("--platform " + std::to_string(*only_platform) + " is out of range: " +
                                   std::to_string(platforms.size()) + " platform(s) (loader: " + api.library_path() +
                                   "; --list-devices without --platform lists them all)");
  }
  std::ostringstream out;
  if (platforms.empty()) out << "no OpenCL platform found (loader: " << api.library_path() << ")\n";
  for (size_t p = 0; p < platforms.size(); ++p) {
    if (only_platform && p != static_cast<size_t>(*only_platform)) continue;
    out << "platform " << p << ": " << platforms[p].platform_name << "\n";
    for (size_t d = 0; d < platforms[p].devices.size(); ++d) {
      Result<proto::DeviceInfo> info = DescribeDevice(api, platforms[p].devices[d]);
      if (!info.ok()) {
        out << "  device " << d << ": (cannot describe: " << info.status().message() << ")\n";
        continue;
      }
      out << "  device " << d << ": " << info->name() << " [" << info->device_type() << ", " << info->vendor()
          << ", " << info->device_version() << ", driver " << info->driver_version() << ", "
          << info->compute_units() << " CU, max work-group " << info->max_work_group_size() << ", local mem "
          << info->local_mem_bytes() << " B" << (info->fp16() ? ", fp16" : "")
          << (info->image_support() ? ", images" : "") << "] fingerprint " << info->fingerprint() << "\n";
    }
  }
  return out.str();
}

}  // namespace tunefleet::agent
