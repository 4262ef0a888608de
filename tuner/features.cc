#include "tuner/features.h"

#include <algorithm>
#include <cmath>

#include "search-spaces/template.h"

namespace tunefleet {
namespace {

// Number of factors of a split knob (the longest choice; all have the same length in practice).
size_t SplitParts(const Knob& k) {
  size_t parts = 0;
  for (const auto& ch : k.choices) parts = std::max(parts, ch.size());
  return parts;
}

size_t KnobWidth(const Knob& k) {
  switch (k.kind) {
    case KnobKind::kSplit: return SplitParts(k);
    case KnobKind::kList: return k.choices.size();
    case KnobKind::kBool: return 1;
  }
  return 0;
}

float Log2Positive(int64_t v) { return v > 0 ? static_cast<float>(std::log2(static_cast<double>(v))) : -1.0f; }

}  // namespace

FeatureExtractor::FeatureExtractor(const Space& space, const Template* tmpl, const Task* task,
                                   const DeviceLimits* limits)
    : space_(space), tmpl_(tmpl), task_(task), limits_(limits) {
  for (const auto& k : space_.knobs()) knob_dim_ += KnobWidth(k);
  if (tmpl_ != nullptr && task_ != nullptr && limits_ != nullptr && space_.RawSize() > 0) {
    derived_dim_ = tmpl_->DerivedFeatures(*task_, space_, space_.FromIndex(0), *limits_).size();
  }
}

void FeatureExtractor::Extract(const Config& c, float* out) const {
  float* p = out;
  const auto& knobs = space_.knobs();
  for (size_t i = 0; i < knobs.size(); ++i) {
    const Knob& k = knobs[i];
    const uint32_t choice = i < c.size() ? c[i] : 0;
    const size_t width = KnobWidth(k);
    std::fill(p, p + width, 0.0f);
    if (choice < k.choices.size()) {
      const auto& values = k.choices[choice];
      switch (k.kind) {
        case KnobKind::kSplit: {
          // Each factor as a share of the axis it splits (log2 of factor / extent): a task's own configs see the
          // same trees as with plain log2 factors (a constant shift per knob), while history from a sibling of
          // another shape lines up by share ("the whole axis in the inner factor"), not by absolute factor.
          double extent = 1;
          for (int64_t v : values) extent *= static_cast<double>(std::max<int64_t>(v, 1));
          const float shift = static_cast<float>(std::log2(extent));
          for (size_t j = 0; j < values.size() && j < width; ++j) p[j] = Log2Positive(values[j]) - shift;
          break;
        }
        case KnobKind::kList:
          p[choice] = 1.0f;
          break;
        case KnobKind::kBool:
          p[0] = !values.empty() && values[0] != 0 ? 1.0f : 0.0f;
          break;
      }
    }
    p += width;
  }
  if (derived_dim_ > 0) {
    const std::vector<float> d = tmpl_->DerivedFeatures(*task_, space_, c, *limits_);
    const size_t n = std::min(d.size(), derived_dim_);
    std::copy(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n), p);
    std::fill(p + n, p + derived_dim_, 0.0f);
  }
}

std::vector<float> FeatureExtractor::ExtractIndices(const std::vector<uint64_t>& indices) const {
  std::vector<float> m(indices.size() * dim());
  for (size_t r = 0; r < indices.size(); ++r) Extract(space_.FromIndex(indices[r]), m.data() + r * dim());
  return m;
}

}  // namespace tunefleet
