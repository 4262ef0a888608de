// Features of a config for the cost model: the knob values (log2 of each split factor's share of its axis, one-hot
// of list knobs, 0/1 of bools) followed by the template's derived features (Template::DerivedFeatures).
// The layout is fixed per (space, template, task): every row has dim() floats.
// Thread safety: immutable after construction; Extract may be called from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "search-spaces/device_limits.h"
#include "search-spaces/space.h"
#include "search-spaces/task.h"

namespace tunefleet {

class Template;

class FeatureExtractor {
 public:
  // `space` must outlive the extractor. `tmpl` may be null (knob features only); when set, `task` and
  // `limits` must be set too and outlive the extractor.
  FeatureExtractor(const Space& space, const Template* tmpl, const Task* task, const DeviceLimits* limits);

  size_t dim() const { return knob_dim_ + derived_dim_; }

  // Writes dim() floats at `out`.
  void Extract(const Config& c, float* out) const;
  // Row-major matrix of indices.size() x dim().
  std::vector<float> ExtractIndices(const std::vector<uint64_t>& indices) const;

 private:
  const Space& space_;
  const Template* tmpl_;
  const Task* task_;
  const DeviceLimits* limits_;
  size_t knob_dim_ = 0;
  size_t derived_dim_ = 0;  // length of DerivedFeatures, probed once on config 0; rows are cut/padded to it
};

}  // namespace tunefleet
