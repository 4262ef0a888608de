// Genetic search: the population is the best measured configs; children come from fitness-proportional
// parents, uniform crossover per knob and per-knob mutation; invalid and already visited children are redrawn.
// Random configs until the first results arrive.
// Thread safety: one instance per task, one thread.
#pragma once

#include <random>
#include <unordered_set>
#include <vector>

#include "tuner/strategy.h"

namespace tunefleet {

struct GaOptions {
  size_t population = 64;
  double mutation_prob = 0.1;  // per knob of a child
  size_t elite = 8;            // best configs always kept as parents
};

class GaStrategy final : public Strategy {
 public:
  // `space` must outlive the strategy.
  GaStrategy(const Space& space, uint64_t seed, GaOptions opts = {});
  std::vector<uint64_t> NextBatch(size_t n) override;
  void Update(const std::vector<Observation>& results) override;
  std::string StatusLine() const override;

 private:
  std::vector<Observation> Parents() const;
  std::optional<uint64_t> Child(const std::vector<Observation>& parents, const std::vector<double>& cumulative);

  const Space& space_;
  GaOptions opts_;
  std::mt19937_64 rng_;
  std::unordered_set<uint64_t> visited_;
  std::vector<Observation> observed_;
  size_t generation_ = 0;
};

}  // namespace tunefleet
