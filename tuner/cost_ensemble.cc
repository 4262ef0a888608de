#include "tuner/cost_ensemble.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <string>

namespace tunefleet {
namespace {

// Runs fn(k) for k < n, each on its own thread when n > 1: every member fits with one XGBoost thread on its own
// matrix and booster, so an ensemble's refit takes the cores a single model leaves idle. The first error wins.
Status ForEachMember(size_t n, const std::function<Status(size_t)>& fn) {
  if (n == 1) return fn(0);
  std::vector<std::future<Status>> running;
  running.reserve(n);
  for (size_t k = 0; k < n; ++k) running.push_back(std::async(std::launch::async, fn, k));
  Status first = Status::OK();
  for (auto& r : running) {
    Status s = r.get();
    if (first.ok() && !s.ok()) first = std::move(s);
  }
  return first;
}

}  // namespace

CostEnsemble::CostEnsemble(const CostModelOptions& base, const EnsembleOptions& opts)
    : opts_(opts), objective_(base.objective) {
  const int n = std::max(1, opts.members);
  for (int k = 0; k < n; ++k) {
    CostModelOptions m = base;
    m.seed = base.seed + 7919 * static_cast<uint64_t>(k);
    if (n > 1) m.subsample = opts.subsample;
    members_.emplace_back(m);
  }
}

Status CostEnsemble::Fit(const TrainingSet& set) {
  return ForEachMember(members_.size(), [&](size_t k) { return members_[k].Fit(set); });
}

Status CostEnsemble::FitEach(const std::vector<TrainingSet>& sets) {
  if (sets.size() != members_.size()) {
    return Status::InvalidArgument("cost ensemble: " + std::to_string(sets.size()) + " training sets for " +
                                   std::to_string(members_.size()) + " members");
  }
  return ForEachMember(members_.size(), [&](size_t k) { return members_[k].Fit(sets[k]); });
}

Result<std::vector<float>> CostEnsemble::Predict(const std::vector<float>& features, size_t dim) const {
  return Combine(features, dim, 0.0);
}

Result<std::vector<float>> CostEnsemble::Acquisition(const std::vector<float>& features, size_t dim) const {
  return Combine(features, dim, opts_.kappa);
}

Result<std::vector<float>> CostEnsemble::Combine(const std::vector<float>& features, size_t dim,
                                                 double kappa) const {
  if (!trained()) return Status::Internal("cost ensemble: predict before the first fit");
  if (members_.size() == 1) return members_.front().Predict(features, dim);
  if (dim == 0 || features.size() % dim != 0) {
    return Status::InvalidArgument("cost ensemble: " + std::to_string(features.size()) +
                                   " feature values are not rows of " + std::to_string(dim));
  }
  const size_t rows = features.size() / dim;
  if (rows == 0) return std::vector<float>{};
  TF_ASSIGN_OR_RETURN(XgbMatrix matrix, XgbMatrix::FromDense(features.data(), rows, dim));
  std::vector<double> sum(rows, 0.0), sum_sq(rows, 0.0);
  for (const CostModel& m : members_) {  // one after another: the members read the same matrix
    TF_ASSIGN_OR_RETURN(std::vector<float> p, m.Predict(matrix, dim));
    if (p.size() != rows) return Status::Internal("cost ensemble: a member returned a wrong number of rows");
    for (size_t i = 0; i < rows; ++i) {
      sum[i] += p[i];
      sum_sq[i] += static_cast<double>(p[i]) * p[i];
    }
  }
  const double n = static_cast<double>(members_.size());
  std::vector<float> out(rows);
  for (size_t i = 0; i < rows; ++i) {
    const double mean = sum[i] / n;
    const double var = std::max(0.0, sum_sq[i] / n - mean * mean);
    out[i] = static_cast<float>(mean + kappa * std::sqrt(var));
  }
  return out;
}

}  // namespace tunefleet
