#include "deploy/runtime/pack_device.h"

#include "common/cl_error_name.h"
#include "common/printable.h"

namespace tunefleet::runtime {
namespace {

Result<std::string> DeviceString(cl_device_id device, cl_device_info param, const char* name) {
  size_t size = 0;
  cl_int err = clGetDeviceInfo(device, param, 0, nullptr, &size);
  std::string value(size, '\0');
  if (err == CL_SUCCESS && size > 0) err = clGetDeviceInfo(device, param, size, value.data(), nullptr);
  if (err != CL_SUCCESS) {
    return Status::Internal(std::string("clGetDeviceInfo(") + name + ") failed: " + ClErrorName(err));
  }
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

// Drivers pad some strings with spaces (a vendor's name, a version); they are not part of the value.
std::string Trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(' ');
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(' ') - begin + 1);
}

const DeviceDifference* FindField(const std::vector<DeviceDifference>& diffs, const std::string& field) {
  for (const DeviceDifference& d : diffs)
    if (d.field == field) return &d;
  return nullptr;
}

}  // namespace

bool DeviceComparison::OtherModel() const {
  return FindField(differences, "name") != nullptr || FindField(differences, "vendor") != nullptr;
}

std::string DeviceComparison::Describe() const {
  if (differences.empty()) return "tuned on this device";
  std::string pack_side, device_side;
  for (const DeviceDifference& d : differences) {
    const std::string sep = pack_side.empty() ? "" : ", ";
    pack_side += sep + d.field + " '" + Printable(d.pack_value, 80) + "'";
    device_side += sep + d.field + " '" + Printable(d.device_value, 80) + "'";
  }
  return std::string(OtherModel() ? "tuned on another device" : "tuned with another driver") + " (" + pack_side +
         "), this device has " + device_side;
}

Result<DeviceComparison> CompareDevice(const PackDevice& pack_device, cl_device_id device) {
  struct Field {
    const char* name;
    cl_device_info param;
    const std::string& pack_value;
  };
  const Field fields[] = {{"name", CL_DEVICE_NAME, pack_device.name},
                          {"vendor", CL_DEVICE_VENDOR, pack_device.vendor},
                          {"driver", CL_DRIVER_VERSION, pack_device.driver},
                          {"opencl_version", CL_DEVICE_VERSION, pack_device.opencl_version}};
  DeviceComparison out;
  for (const Field& f : fields) {
    if (Trimmed(f.pack_value).empty()) continue;  // the pack does not say (the fields are optional): no difference
    TF_ASSIGN_OR_RETURN(std::string value, DeviceString(device, f.param, f.name));
    if (Trimmed(value) != Trimmed(f.pack_value)) out.differences.push_back({f.name, f.pack_value, value});
  }
  return out;
}

}  // namespace tunefleet::runtime
