#include "tuner/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace tunefleet {
namespace {

Status XgbError(const char* what) {
  return Status::Internal(std::string("xgboost ") + what + ": " + XGBGetLastError());
}

}  // namespace

// ---- XgbMatrix ----------------------------------------------------------------------------------------------

Result<XgbMatrix> XgbMatrix::FromDense(const float* data, size_t rows, size_t cols) {
  XgbMatrix m;
  DMatrixHandle h = nullptr;
  // NaN marks missing values; our features never are NaN, so every value counts.
  if (XGDMatrixCreateFromMat(data, rows, cols, std::numeric_limits<float>::quiet_NaN(), &h) != 0) {
    return XgbError("DMatrix create");
  }
  m.handle_ = h;
  return m;
}

XgbMatrix::~XgbMatrix() {
  if (handle_ != nullptr) XGDMatrixFree(handle_);
}

XgbMatrix& XgbMatrix::operator=(XgbMatrix&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) XGDMatrixFree(handle_);
    handle_ = o.handle_;
    o.handle_ = nullptr;
  }
  return *this;
}

Status XgbMatrix::SetFloatInfo(const char* field, const std::vector<float>& values) {
  if (XGDMatrixSetFloatInfo(handle_, field, values.data(), values.size()) != 0) return XgbError(field);
  return Status::OK();
}

Status XgbMatrix::SetUIntInfo(const char* field, const std::vector<unsigned>& values) {
  if (XGDMatrixSetUIntInfo(handle_, field, values.data(), values.size()) != 0) return XgbError(field);
  return Status::OK();
}

// ---- XgbBooster ---------------------------------------------------------------------------------------------

Result<XgbBooster> XgbBooster::Create(const XgbMatrix& train) {
  XgbBooster b;
  DMatrixHandle cache[1] = {train.handle()};
  BoosterHandle h = nullptr;
  if (XGBoosterCreate(cache, 1, &h) != 0) return XgbError("booster create");
  b.handle_ = h;
  return b;
}

XgbBooster::~XgbBooster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

XgbBooster& XgbBooster::operator=(XgbBooster&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = o.handle_;
    o.handle_ = nullptr;
  }
  return *this;
}

Status XgbBooster::SetParam(const std::string& name, const std::string& value) {
  if (XGBoosterSetParam(handle_, name.c_str(), value.c_str()) != 0) return XgbError(name.c_str());
  return Status::OK();
}

Status XgbBooster::UpdateOneIter(int iter, const XgbMatrix& train) {
  if (XGBoosterUpdateOneIter(handle_, iter, train.handle()) != 0) return XgbError("update");
  return Status::OK();
}

Result<std::vector<float>> XgbBooster::Predict(const XgbMatrix& m) const {
  bst_ulong len = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(handle_, m.handle(), 0, 0, 0, &len, &out) != 0) return XgbError("predict");
  return std::vector<float>(out, out + len);  // `out` belongs to the booster: copy before the next call
}

// ---- CostModel ----------------------------------------------------------------------------------------------

std::string XgbObjectiveName(const std::string& objective) {
  if (objective == "rank") return "rank:pairwise";
  if (objective == "ndcg") return "rank:ndcg";
  if (objective == "reg") return "reg:squarederror";
  return "";
}

namespace {

// The rows an ndcg model is fitted on. XGBoost 1.7 takes ndcg labels as integer relevance levels (its gain is
// 2^level - 1), so a score becomes round(kNdcgLevels x score). ndcg weighs a pair by how much swapping it changes
// the top of the ranking, so a failed config (level 0) and a slow one (level 2: a gain of 3, against 2^20 at the
// top) hardly count, and a plan would keep proposing configs that fail. Every group holding both failed and
// successful configs is therefore added once more as a feasibility group, labelled 1 ran / 0 failed, at
// kFeasibilityWeight of its weight.
TrainingSet NdcgRows(const TrainingSet& set, const std::vector<unsigned>& groups, const std::vector<float>& weights) {
  TrainingSet out;
  out.dim = set.dim;
  out.features = set.features;
  out.group_sizes = groups;
  out.group_weights = weights;
  out.margins = set.margins;
  out.scores.reserve(set.rows());
  for (float score : set.scores) out.scores.push_back(std::round(kNdcgLevels * std::clamp(score, 0.0f, 1.0f)));
  size_t begin = 0;
  for (size_t g = 0; g < groups.size(); begin += groups[g], ++g) {
    const auto first = set.scores.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto failed = static_cast<size_t>(std::count_if(first, first + groups[g], [](float s) { return s <= 0; }));
    if (failed == 0 || failed == groups[g]) continue;
    for (size_t r = begin; r < begin + groups[g]; ++r) out.scores.push_back(set.scores[r] > 0 ? 1.0f : 0.0f);
    out.features.insert(out.features.end(), set.features.begin() + static_cast<std::ptrdiff_t>(begin * set.dim),
                        set.features.begin() + static_cast<std::ptrdiff_t>((begin + groups[g]) * set.dim));
    if (!set.margins.empty()) {
      out.margins.insert(out.margins.end(), set.margins.begin() + static_cast<std::ptrdiff_t>(begin),
                         set.margins.begin() + static_cast<std::ptrdiff_t>(begin + groups[g]));
    }
    out.group_sizes.push_back(groups[g]);
    out.group_weights.push_back(weights[g] * kFeasibilityWeight);
  }
  return out;
}

}  // namespace

CostModel::CostModel(CostModelOptions opts) : opts_(std::move(opts)) {}

Status CostModel::Fit(const TrainingSet& set) {
  const size_t rows = set.rows();
  if (rows == 0 || set.dim == 0) return Status::InvalidArgument("cost model: empty training set");
  if (set.features.size() != rows * set.dim) return Status::InvalidArgument("cost model: ragged training set");
  std::vector<unsigned> groups = set.group_sizes;
  if (groups.empty()) groups.push_back(static_cast<unsigned>(rows));
  if (std::accumulate(groups.begin(), groups.end(), size_t{0}) != rows) {
    return Status::InvalidArgument("cost model: group sizes do not sum to the row count");
  }
  std::vector<float> group_weights = set.group_weights;
  if (group_weights.empty()) group_weights.assign(groups.size(), 1.0f);
  if (group_weights.size() != groups.size()) return Status::InvalidArgument("cost model: one weight per group");
  if (!set.margins.empty() && set.margins.size() != rows) {
    return Status::InvalidArgument("cost model: one margin per row");
  }

  const std::string objective = XgbObjectiveName(opts_.objective);
  const bool ndcg = opts_.objective == "ndcg";
  const bool rank = opts_.objective == "rank" || ndcg;
  if (objective.empty()) {
    return Status::InvalidArgument("cost model: objective must be rank, ndcg or reg, not '" + opts_.objective + "'");
  }
  TrainingSet ndcg_rows;
  const TrainingSet* fitted = &set;
  if (ndcg) {
    ndcg_rows = NdcgRows(set, groups, group_weights);
    groups = ndcg_rows.group_sizes;
    group_weights = ndcg_rows.group_weights;
    fitted = &ndcg_rows;
  }
  const TrainingSet& data = *fitted;
  TF_ASSIGN_OR_RETURN(XgbMatrix train, XgbMatrix::FromDense(data.features.data(), data.rows(), data.dim));
  TF_RETURN_IF_ERROR(train.SetFloatInfo("label", data.scores));
  if (!data.margins.empty()) TF_RETURN_IF_ERROR(train.SetFloatInfo("base_margin", data.margins));
  const bool weighted = std::any_of(group_weights.begin(), group_weights.end(), [](float w) { return w != 1.0f; });
  if (rank) {
    TF_RETURN_IF_ERROR(train.SetUIntInfo("group", groups));
    // For ranking objectives XGBoost takes one weight per group.
    if (weighted) TF_RETURN_IF_ERROR(train.SetFloatInfo("weight", group_weights));
  } else if (weighted) {
    std::vector<float> row_weights;
    row_weights.reserve(data.rows());
    for (size_t g = 0; g < groups.size(); ++g) row_weights.insert(row_weights.end(), groups[g], group_weights[g]);
    TF_RETURN_IF_ERROR(train.SetFloatInfo("weight", row_weights));
  }

  TF_ASSIGN_OR_RETURN(XgbBooster booster, XgbBooster::Create(train));
  const std::pair<const char*, std::string> params[] = {
      {"objective", objective},
      {"max_depth", std::to_string(opts_.max_depth)},
      {"eta", std::to_string(opts_.eta)},
      {"gamma", "0.0001"},
      // ndcg divides each pair's weight by the group's ideal DCG, so hessians sum far below 1 and a minimum
      // child weight of 1 forbids every split (the model predicts a constant).
      {"min_child_weight", ndcg ? "0" : "1"},
      {"subsample", std::to_string(opts_.subsample)},
      {"lambda", "1"},
      {"tree_method", "exact"},
      {"seed", std::to_string(opts_.seed)},
      {"nthread", std::to_string(opts_.nthread)},
      {"verbosity", "0"},
  };
  for (const auto& [name, value] : params) TF_RETURN_IF_ERROR(booster.SetParam(name, value));
  if (rank) TF_RETURN_IF_ERROR(booster.SetParam("num_pairsample", std::to_string(std::max(1, opts_.pair_samples))));
  for (int i = 0; i < opts_.rounds; ++i) TF_RETURN_IF_ERROR(booster.UpdateOneIter(i, train));
  booster_ = std::move(booster);
  dim_ = set.dim;
  ++fits_;
  return Status::OK();
}

Result<std::vector<float>> CostModel::Predict(const std::vector<float>& features, size_t dim,
                                              const std::vector<float>& margins) const {
  if (!trained()) return Status::Internal("cost model: predict before the first fit");
  if (dim != dim_ || features.size() % dim != 0) {
    return Status::InvalidArgument("cost model: feature width " + std::to_string(dim) + ", model has " +
                                   std::to_string(dim_));
  }
  const size_t rows = features.size() / dim;
  if (rows == 0) return std::vector<float>{};
  if (!margins.empty() && margins.size() != rows) return Status::InvalidArgument("cost model: one margin per row");
  TF_ASSIGN_OR_RETURN(XgbMatrix m, XgbMatrix::FromDense(features.data(), rows, dim));
  if (!margins.empty()) TF_RETURN_IF_ERROR(m.SetFloatInfo("base_margin", margins));
  return booster_.Predict(m);
}

Result<std::vector<float>> CostModel::Predict(const XgbMatrix& rows, size_t dim) const {
  if (!trained()) return Status::Internal("cost model: predict before the first fit");
  if (dim != dim_) {
    return Status::InvalidArgument("cost model: feature width " + std::to_string(dim) + ", model has " +
                                   std::to_string(dim_));
  }
  return booster_.Predict(rows);
}

// ---- Spearman -----------------------------------------------------------------------------------------------

namespace {

std::vector<double> AverageRanks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = avg;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  const std::vector<double> ra = AverageRanks(a), rb = AverageRanks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n - 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return 0;
  return cov / std::sqrt(va * vb);
}

std::string SpearmanText(const std::vector<double>& predicted, const std::vector<double>& measured) {
  auto constant = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
  };
  if (predicted.size() != measured.size() || predicted.size() < 2) return "Spearman n/a (fewer than 2 configs)";
  if (constant(predicted)) return "Spearman n/a (constant predictions)";
  if (constant(measured)) return "Spearman n/a (equal measured scores)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "Spearman %.2f", SpearmanCorrelation(predicted, measured));
  return buf;
}

}  // namespace tunefleet
