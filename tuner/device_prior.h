// The device prior: what a device's parallelism says about a config before anything of its task has run. The
// model-based search orders its first plan by it when it has neither results nor history, and every model of it
// starts from the prior (XGBoost's base margin) and learns a correction (XgbStrategy).
// A GPU hides memory latency with resident work-items: up to what its compute units hold at once, a launch of
// more items runs faster; beyond that, more items only queue. A CPU runs a work-group's items one after another
// on one core, so items beyond its cores add per-item overhead and no parallelism. So a config scores
// -|log2(work-items / capacity)|, with the capacity the work-items the device runs at once: for a GPU, compute
// units x the items one unit's register file holds at 32 registers each (64K registers when not known); for a
// CPU, its compute units. A template whose configs gain from fewer, heavier items (GEMM's register tiles) says so
// (Template::FollowsDevicePrior) and is searched without the prior.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

class Template;

// Work-items the device runs at once (at least 1).
double DeviceCapacity(const DeviceLimits& limits);

// -|log2(work_items / capacity)|; 0 (no preference) when work_items is 0 (unknown).
double DevicePriorScore(double work_items, double capacity);

// `configs` (indices of `space`) ordered by the prior, best first; configs that score the same keep their order.
std::vector<uint64_t> OrderByDevicePrior(const Template& tmpl, const Task& task, const Space& space,
                                         const DeviceLimits& limits, std::vector<uint64_t> configs);

}  // namespace tunefleet
