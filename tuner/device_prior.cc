#include "tuner/device_prior.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "search-spaces/template.h"

namespace tunefleet {

double DeviceCapacity(const DeviceLimits& limits) {
  const double units = std::max<uint32_t>(1, limits.compute_units);
  if (!limits.is_gpu) return units;
  constexpr double kRegistersPerItem = 32;
  constexpr double kDefaultRegisterFile = 65536;  // DeviceLimits::From's figure, for limits built without one
  const double file = limits.registers_per_compute_unit > 0 ? static_cast<double>(limits.registers_per_compute_unit)
                                                            : kDefaultRegisterFile;
  return units * std::max(1.0, file / kRegistersPerItem);
}

double DevicePriorScore(double work_items, double capacity) {
  if (work_items <= 0 || capacity <= 0) return 0;
  return -std::abs(std::log2(work_items / capacity));
}

std::vector<uint64_t> OrderByDevicePrior(const Template& tmpl, const Task& task, const Space& space,
                                         const DeviceLimits& limits, std::vector<uint64_t> configs) {
  const double capacity = DeviceCapacity(limits);
  std::vector<std::pair<double, uint64_t>> scored;
  scored.reserve(configs.size());
  for (uint64_t idx : configs) {
    scored.emplace_back(DevicePriorScore(tmpl.WorkItems(task, space, space.FromIndex(idx)), capacity), idx);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < scored.size(); ++i) configs[i] = scored[i].second;
  return configs;
}

}  // namespace tunefleet
