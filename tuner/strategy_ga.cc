#include "tuner/strategy_ga.h"

#include <algorithm>

#include "tuner/strategy_common.h"

namespace tunefleet {

GaStrategy::GaStrategy(const Space& space, uint64_t seed, GaOptions opts)
    : space_(space), opts_(opts), rng_(seed) {}

std::vector<Observation> GaStrategy::Parents() const {
  std::vector<Observation> ok;
  for (const auto& o : observed_) {
    if (o.ok && o.cost > 0) ok.push_back(o);
  }
  // Ties broken by index so the population does not depend on arrival order.
  std::sort(ok.begin(), ok.end(), [](const Observation& a, const Observation& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.index < b.index;
  });
  if (ok.size() > opts_.population) ok.resize(opts_.population);
  return ok;
}

std::optional<uint64_t> GaStrategy::Child(const std::vector<Observation>& parents,
                                          const std::vector<double>& cumulative) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto pick = [&]() -> const Observation& {
    const double r = unit(rng_) * cumulative.back();
    const size_t i = std::upper_bound(cumulative.begin(), cumulative.end(), r) - cumulative.begin();
    return parents[std::min(i, parents.size() - 1)];
  };
  const auto& knobs = space_.knobs();
  for (int attempt = 0; attempt < 32; ++attempt) {
    const Config a = space_.FromIndex(pick().index);
    const Config b = space_.FromIndex(pick().index);
    Config c(knobs.size());
    for (size_t k = 0; k < knobs.size(); ++k) {
      c[k] = unit(rng_) < 0.5 ? a[k] : b[k];
      if (unit(rng_) < opts_.mutation_prob && knobs[k].choices.size() > 1) {
        c[k] = static_cast<uint32_t>(std::uniform_int_distribution<size_t>(0, knobs[k].choices.size() - 1)(rng_));
      }
    }
    if (!space_.Valid(c)) continue;
    const uint64_t idx = space_.IndexOf(c);
    if (visited_.insert(idx).second) return idx;
  }
  return std::nullopt;
}

std::vector<uint64_t> GaStrategy::NextBatch(size_t n) {
  const std::vector<Observation> parents = Parents();
  std::vector<uint64_t> out;
  if (parents.size() >= 2) {
    // Fitness-proportional selection on best/cost; the elite get an extra share.
    const double best = parents.front().cost;
    std::vector<double> cumulative;
    double sum = 0;
    for (size_t i = 0; i < parents.size(); ++i) {
      double f = best / parents[i].cost;
      if (i < opts_.elite) f *= 2;
      sum += f;
      cumulative.push_back(sum);
    }
    int misses = 0;
    while (out.size() < n && misses < 16) {
      std::optional<uint64_t> c = Child(parents, cumulative);
      if (c) {
        out.push_back(*c);
      } else {
        ++misses;
      }
    }
    ++generation_;
  }
  // Before results exist, or when crossover runs dry, fill with random configs.
  if (out.size() < n) {
    std::vector<uint64_t> more = SampleUnvisited(space_, visited_, n - out.size(), rng_);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

void GaStrategy::Update(const std::vector<Observation>& results) {
  for (const auto& r : results) {
    visited_.insert(r.index);
    observed_.push_back(r);
  }
}

std::string GaStrategy::StatusLine() const {
  return "ga: generation " + std::to_string(generation_) + ", " + std::to_string(observed_.size()) + " results";
}

}  // namespace tunefleet
