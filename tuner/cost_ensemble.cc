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

CostEnsemble::CostEnsemble(const CostModelOptions& base, const EnsembleOptions& opts) : opts_(opts) {
  const int n = std::max(1, opts.members);
  for (int k = 0; k < n; ++k) {
    CostModelOptions m = base;
    m.seed = base.seed + 7919 * static_cast<uint64_t>(k);
    if (n > 1) m.subsample = opts.subsample;
    if (!opts.objectives.empty()) m.objective = opts.objectives[k % opts.objectives.size()];
    if (std::find(objectives_.begin(), objectives_.end(), m.objective) == objectives_.end()) {
      objectives_.push_back(m.objective);
    }
    members_.emplace_back(m);
  }
  scales_.assign(members_.size(), Scale{});
}

Status CostEnsemble::Fit(const TrainingSet& set) {
  return ForEachMember(members_.size(), [&](size_t k) { return FitMember(k, set); });
}

Status CostEnsemble::FitEach(const std::vector<TrainingSet>& sets) {
  if (sets.size() != members_.size()) {
    return Status::InvalidArgument("cost ensemble: " + std::to_string(sets.size()) + " training sets for " +
                                   std::to_string(members_.size()) + " members");
  }
  return ForEachMember(members_.size(), [&](size_t k) { return FitMember(k, sets[k]); });
}

Status CostEnsemble::FitMember(size_t k, const TrainingSet& set) {
  TF_RETURN_IF_ERROR(members_[k].Fit(set));
  if (objectives_.size() < 2) return Status::OK();  // one scale for all: the members' scores compare as they are
  TF_ASSIGN_OR_RETURN(std::vector<float> p, members_[k].Predict(set.features, set.dim, set.margins));
  double sum = 0, sum_sq = 0;
  for (float v : p) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(std::max<size_t>(1, p.size()));
  const double mean = sum / n;
  const double sd = std::sqrt(std::max(0.0, sum_sq / n - mean * mean));
  scales_[k] = Scale{mean, sd > 1e-9 ? sd : 1.0};  // a member that predicts one value adds nothing but its mean
  return Status::OK();
}

Result<std::vector<float>> CostEnsemble::Predict(const std::vector<float>& features, size_t dim,
                                                 const std::vector<float>& margins) const {
  return Combine(features, dim, margins, 0.0);
}

Result<std::vector<float>> CostEnsemble::Acquisition(const std::vector<float>& features, size_t dim,
                                                     const std::vector<float>& margins) const {
  return Combine(features, dim, margins, opts_.kappa);
}

Result<std::vector<float>> CostEnsemble::Combine(const std::vector<float>& features, size_t dim,
                                                 const std::vector<float>& margins, double kappa) const {
  if (!trained()) return Status::Internal("cost ensemble: predict before the first fit");
  if (members_.size() == 1) return members_.front().Predict(features, dim, margins);
  if (dim == 0 || features.size() % dim != 0) {
    return Status::InvalidArgument("cost ensemble: " + std::to_string(features.size()) +
                                   " feature values are not rows of " + std::to_string(dim));
  }
  const size_t rows = features.size() / dim;
  if (rows == 0) return std::vector<float>{};
  if (!margins.empty() && margins.size() != rows) return Status::InvalidArgument("cost ensemble: one margin per row");
  TF_ASSIGN_OR_RETURN(XgbMatrix matrix, XgbMatrix::FromDense(features.data(), rows, dim));
  if (!margins.empty()) TF_RETURN_IF_ERROR(matrix.SetFloatInfo("base_margin", margins));
  std::vector<double> sum(rows, 0.0), sum_sq(rows, 0.0);
  for (size_t k = 0; k < members_.size(); ++k) {  // one after another: the members read the same matrix
    TF_ASSIGN_OR_RETURN(std::vector<float> p, members_[k].Predict(matrix, dim));
    if (p.size() != rows) return Status::Internal("cost ensemble: a member returned a wrong number of rows");
    const Scale& scale = scales_[k];
    for (size_t i = 0; i < rows; ++i) {
      const double v = (p[i] - scale.mean) / scale.sd;
      sum[i] += v;
      sum_sq[i] += v * v;
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
