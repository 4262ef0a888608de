// A bagged ensemble of XGBoost cost models and the acquisition score the xgb strategy anneals over.
// Every member is fitted on the same rows with its own seed, each tree grown on a subsample of them, so the
// members agree where the results say one thing and disagree where they say little (a knob choice seen in one
// context only, a region seen in a few rows). The acquisition score is the members' mean plus `kappa` times
// their standard deviation, an upper confidence bound as in Bayesian optimization's UCB: a config the data
// cannot rule out gets a turn before the model's settled opinion is exhausted. One member is a single model
// (no subsampling, no spread; AutoTVM's with the rank objective); kappa 0 follows the members' mean.
// Members may differ in objective (EnsembleOptions::objectives): their scores are then on different scales, so
// each member's predictions are standardized by their mean and standard deviation on its own training rows
// before the mean and spread are taken, and the spread also measures how far the objectives disagree.
// Thread safety: one thread at a time, like CostModel (Fit runs the members on threads of its own and joins them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "tuner/cost_model.h"

namespace tunefleet {

struct EnsembleOptions {
  int members = 5;          // 1 = one model on all rows, no bagging
  double subsample = 0.8;   // rows per tree, when members > 1
  double kappa = 1.0;       // acquisition = mean + kappa * standard deviation of the members' predictions
  // Member k's CostModelOptions::objective is objectives[k % size]; empty = the base options' for all.
  std::vector<std::string> objectives;
};

class CostEnsemble {
 public:
  // Member k gets `base` with seed base.seed + k * 7919, its objective from opts.objectives and, with more than
  // one member, opts.subsample.
  CostEnsemble(const CostModelOptions& base, const EnsembleOptions& opts);

  // Fits every member on `set`; errors as CostModel::Fit.
  Status Fit(const TrainingSet& set);
  // Fits member k on sets[k] (one set per member, e.g. each with its own share of a large history).
  Status FitEach(const std::vector<TrainingSet>& sets);
  size_t members() const { return members_.size(); }
  // The members' distinct CostModelOptions::objective values, in member order.
  const std::vector<std::string>& objectives() const { return objectives_; }
  // The members' mean prediction per row (higher = predicted faster); `margins` as CostModel::Predict's.
  Result<std::vector<float>> Predict(const std::vector<float>& features, size_t dim,
                                     const std::vector<float>& margins = {}) const;
  // Mean + kappa * standard deviation per row: what the next plan is chosen by.
  Result<std::vector<float>> Acquisition(const std::vector<float>& features, size_t dim,
                                         const std::vector<float>& margins = {}) const;

  bool trained() const { return !members_.empty() && members_.front().trained(); }
  int fits() const { return members_.empty() ? 0 : members_.front().fits(); }

 private:
  Result<std::vector<float>> Combine(const std::vector<float>& features, size_t dim, const std::vector<float>& margins,
                                     double kappa) const;
  // Fits member k on `set` (on the member's own thread) and, with mixed objectives, sets its scale: the mean and
  // standard deviation of its predictions on `set`'s rows.
  Status FitMember(size_t k, const TrainingSet& set);

  struct Scale {
    double mean = 0;
    double sd = 1;
  };
  EnsembleOptions opts_;
  std::vector<CostModel> members_;
  std::vector<std::string> objectives_;
  std::vector<Scale> scales_;  // one per member; identity unless the objectives are mixed
};

}  // namespace tunefleet
