#include "search-spaces/device_limits.h"

#include "proto/tunefleet.pb.h"

namespace tunefleet {

DeviceLimits DeviceLimits::Unbounded() {
  DeviceLimits l;
  l.max_work_group_size = uint64_t{1} << 16;
  for (auto& s : l.max_work_item_sizes) s = uint64_t{1} << 16;
  l.local_mem_bytes = uint64_t{1} << 30;
  l.image_support = true;
  l.image2d_max_width = l.image2d_max_height = uint64_t{1} << 20;
  l.fp16 = true;
  l.compute_units = 1024;
  l.is_gpu = true;
  return l;
}

DeviceLimits DeviceLimits::From(const proto::DeviceInfo& info) {
  DeviceLimits l;
  if (info.max_work_group_size() > 0) l.max_work_group_size = info.max_work_group_size();
  // A device without item sizes (one imported from AutoTVM records, whose target names only max_num_threads) is
  // bounded by its work-group size in every dimension; one that reports fewer than 3 has no more.
  const bool sizes_unknown = info.max_work_item_sizes_size() == 0;
  for (int i = 0; i < 3; ++i) {
    l.max_work_item_sizes[i] = i < info.max_work_item_sizes_size() ? info.max_work_item_sizes(i)
                               : sizes_unknown                     ? l.max_work_group_size
                                                                   : 1;
  }
  if (info.local_mem_bytes() > 0) l.local_mem_bytes = info.local_mem_bytes();
  l.image_support = info.image_support();
  l.image2d_max_width = info.image_support() ? info.image2d_max_width() : 0;
  l.image2d_max_height = info.image_support() ? info.image2d_max_height() : 0;
  l.fp16 = info.fp16() || info.extensions().find("cl_khr_fp16") != std::string::npos;
  l.compute_units = info.compute_units() > 0 ? info.compute_units() : 1;
  l.is_gpu = info.device_type().find("GPU") != std::string::npos;
  if (l.is_gpu) {
    // NVIDIA/AMD allow 255 registers per item and 64K per SM/CU; mobile GPUs have less, but there the
    // work-group limit reported by the driver already shrinks. Spilling configs then fail at launch and are
    // recorded as runtime errors, which the cost model learns from.
    l.max_registers_per_item = 255;
    l.registers_per_compute_unit = 65536;
  }
  return l;
}

std::string DeviceLimits::CheckWorkGroup(const std::vector<uint64_t>& local) const {
  uint64_t total = 1;
  for (size_t i = 0; i < local.size(); ++i) {
    if (local[i] == 0) return "work-group dimension " + std::to_string(i) + " is 0";
    if (i < 3 && local[i] > max_work_item_sizes[i]) {
      return "work-group size " + std::to_string(local[i]) + " in dimension " + std::to_string(i) +
             " exceeds the device maximum " + std::to_string(max_work_item_sizes[i]);
    }
    total *= local[i];
  }
  if (total > max_work_group_size) {
    return "work-group of " + std::to_string(total) + " items exceeds the device maximum " +
           std::to_string(max_work_group_size);
  }
  return {};
}

std::string DeviceLimits::CheckLocalMemory(uint64_t bytes) const {
  if (bytes > local_mem_bytes) {
    return "needs " + std::to_string(bytes) + " bytes of local memory, the device has " +
           std::to_string(local_mem_bytes);
  }
  return {};
}

std::string DeviceLimits::CheckImage2d(uint64_t width, uint64_t height) const {
  if (!image_support) return "device has no image support";
  if (width > image2d_max_width || height > image2d_max_height) {
    return "image2d of " + std::to_string(width) + "x" + std::to_string(height) + " exceeds the device maximum " +
           std::to_string(image2d_max_width) + "x" + std::to_string(image2d_max_height);
  }
  return {};
}

std::string DeviceLimits::CheckRegisters(uint64_t registers_per_item, uint64_t work_group_size) const {
  if (max_registers_per_item > 0 && registers_per_item > max_registers_per_item) {
    return "needs about " + std::to_string(registers_per_item) + " registers per work-item, the device has " +
           std::to_string(max_registers_per_item);
  }
  if (registers_per_compute_unit > 0 && registers_per_item * work_group_size > registers_per_compute_unit) {
    return "needs about " + std::to_string(registers_per_item * work_group_size) +
           " registers per work-group, a compute unit has " + std::to_string(registers_per_compute_unit);
  }
  return {};
}

}  // namespace tunefleet
