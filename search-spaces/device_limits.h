// The device limits a search space is checked against. Built from the agent's DeviceInfo; tests build
// them by hand, so enumeration is tested without a device.
// The Check* helpers return an empty string when the launch fits, else the reason it does not (the text the
// tuner records for status 1, "invalid config"). Templates add them to their spaces as constraints.
// Thread safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // Register budget estimates (not reported by OpenCL; derived from the device type in From()):
  // 32-bit registers one work-item may use before the compiler spills, and the register file of one compute
  // unit that a whole work-group must fit in. 0 = unlimited (CPUs spill to cache cheaply).
  uint32_t max_registers_per_item = 0;
  uint64_t registers_per_compute_unit = 0;

  static DeviceLimits From(const proto::DeviceInfo& info);
  // A device that lacks nothing (fp16, images, large work-groups and local memory): a template that refuses a task
  // on it refuses the task on every device, so the tuner can say so before it leases one.
  static DeviceLimits Unbounded();

  // Work-group of `local` (1 to 3 dims) against max_work_group_size and max_work_item_sizes.
  std::string CheckWorkGroup(const std::vector<uint64_t>& local) const;
  // `bytes` of __local memory per work-group.
  std::string CheckLocalMemory(uint64_t bytes) const;
  // An image2d_t of width x height pixels (also fails when the device has no image support).
  std::string CheckImage2d(uint64_t width, uint64_t height) const;
  // `registers_per_item` (an estimate, 32-bit registers) for a work-group of `work_group_size` items.
  std::string CheckRegisters(uint64_t registers_per_item, uint64_t work_group_size) const;
};

}  // namespace tunefleet
