// Enumerating OpenCL platforms/devices and describing a device as proto::DeviceInfo.
// Thread safety: pure functions over the driver.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/cl_api.h"
#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

struct PlatformDevices {
  cl_platform_id platform = nullptr;
  std::string platform_name;
  std::vector<cl_device_id> devices;
};

// Every platform with its devices (a platform whose device query fails is listed with none).
Result<std::vector<PlatformDevices>> ListPlatforms(const ClApi& api);

// The device at (platform index, device index) with a message naming the valid range when out of range.
Result<cl_device_id> PickDevice(const ClApi& api, int platform_index, int device_index);

// Fills every field, fingerprint included.
Result<proto::DeviceInfo> DescribeDevice(const ClApi& api, cl_device_id device);

// Stable hex hash of what identifies a device model + driver: vendor, name, driver, versions, type, compute units,
// work-group/item/local-memory/image limits, fp16 (not the RAM-dependent global-memory sizes).
std::string Fingerprint(const proto::DeviceInfo& info);

// The `--list-devices` text: one line per platform and per device, with indices; only platform `only_platform`
// when given (InvalidArgument naming the platforms there are when it is out of range).
Result<std::string> DeviceListing(const ClApi& api, std::optional<int> only_platform = std::nullopt);

}  // namespace tunefleet::agent
