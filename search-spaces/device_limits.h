// The device limits a search space is checked against. Built from the agent's DeviceInfo; tests build
// them by hand, so enumeration is tested without a device.
#pragma once

#include <cstdint>

namespace tunefleet {
namespace proto { class DeviceInfo; }

struct DeviceLimits {
  uint64_t max_work_group_size = 256;
  uint64_t max_work_item_sizes[3] = {256, 256, 256};
  uint64_t local_mem_bytes = 32 * 1024;
  bool image_support = false;
  uint64_t image2d_max_width = 0;
  uint64_t image2d_max_height = 0;
  bool fp16 = false;
  uint32_t compute_units = 1;
  bool is_gpu = false;

  static DeviceLimits From(const proto::DeviceInfo& info);
};

}  // namespace tunefleet
