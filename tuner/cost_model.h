// The XGBoost cost model: gradient-boosted trees over config features, predicting a score where higher means
// faster. Wraps Debian's libxgboost C API (1.7) behind RAII handles; errors come back as Status.
// Thread safety: a CostModel is used by one thread at a time (XGBoost's predict buffer is per booster).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tunefleet {

// Owns one DMatrixHandle. Move-only; freeing never fails loudly.
class XgbMatrix {
 public:
  // `data` is row-major rows x cols.
  static Result<XgbMatrix> FromDense(const float* data, size_t rows, size_t cols);
  XgbMatrix() = default;
  ~XgbMatrix();
  XgbMatrix(XgbMatrix&& o) noexcept : handle_(o.handle_) { o.handle_ = nullptr; }
  XgbMatrix& operator=(XgbMatrix&& o) noexcept;
  XgbMatrix(const XgbMatrix&) = delete;
  XgbMatrix& operator=(const XgbMatrix&) = delete;

  Status SetFloatInfo(const char* field, const std::vector<float>& values);
  Status SetUIntInfo(const char* field, const std::vector<unsigned>& values);
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;  // DMatrixHandle
};

// Owns one BoosterHandle. Move-only.
class XgbBooster {
 public:
  // A booster whose cache holds `train` (which must outlive training calls).
  static Result<XgbBooster> Create(const XgbMatrix& train);
  XgbBooster() = default;
  ~XgbBooster();
  XgbBooster(XgbBooster&& o) noexcept : handle_(o.handle_) { o.handle_ = nullptr; }
  XgbBooster& operator=(XgbBooster&& o) noexcept;
  XgbBooster(const XgbBooster&) = delete;
  XgbBooster& operator=(const XgbBooster&) = delete;

  Status SetParam(const std::string& name, const std::string& value);
  Status UpdateOneIter(int iter, const XgbMatrix& train);
  // Predictions of `m`, one per row.
  Result<std::vector<float>> Predict(const XgbMatrix& m) const;
  bool valid() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;  // BoosterHandle
};

struct CostModelOptions {
  // rank (rank:pairwise: every pair of configs counts alike) | ndcg (rank:ndcg: pairs weighted by how much
  // swapping them changes the top of the ranking; scores become graded relevance, round(kNdcgLevels x score))
  // | reg (reg:squarederror)
  std::string objective = "rank";
  int rounds = 100;                // boosting rounds per fit
  // rank: pairs XGBoost samples per row and round (num_pairsample). With its default of 1 a plan-sized training
  // set gives too few pairs to order the top configs; 4 finds them with fewer trials on the recorded spaces.
  int pair_samples = 4;
  int max_depth = 4;
  double eta = 0.3;
  uint64_t seed = 1;
  double subsample = 1;  // share of the rows each tree is grown on (drawn with `seed`); below 1 for bagging
  int nthread = 1;  // 1 keeps fits reproducible and polite on shared machines
};

// Relevance levels of the ndcg objective: a score (best/cost) of 1 is level 20, 0.95 level 19, 0.5 level 10, and
// XGBoost's gain 2^level - 1 makes the ranking among the fastest configs count most.
inline constexpr float kNdcgLevels = 20.0f;
// ndcg: weight of the feasibility group (ran / failed) added for each group with failed configs, relative to the
// group's own. 1 makes failures as costly to the fit as the top's order and loses much of ndcg's gain on the
// recorded spaces; a tenth keeps that gain and proposes about as few failing configs as rank does.
inline constexpr float kFeasibilityWeight = 0.1f;

// XGBoost's name of an objective option: rank:pairwise, rank:ndcg or reg:squarederror; empty when unknown.
std::string XgbObjectiveName(const std::string& objective);

// One training set: rows of features, a score per row (higher = faster; failed configs get the lowest),
// rows grouped (rank pairs are formed only within a group, e.g. one task on one device), a weight per group.
struct TrainingSet {
  size_t dim = 0;
  std::vector<float> features;     // rows x dim, row-major
  std::vector<float> scores;       // one per row
  std::vector<unsigned> group_sizes;   // sums to rows; empty = one group
  std::vector<float> group_weights;    // one per group; empty = all 1
  // One per row, or empty: XGBoost's base margin, a prior score the trees start from and learn a correction to
  // (the rows to predict then need theirs too). In the rank objectives' units: a margin higher by 1 says the row is
  // faster than the other of a pair with probability 1 / (1 + e^-1), 0.73, before any tree.
  std::vector<float> margins;
  size_t rows() const { return scores.size(); }
};

class CostModel {
 public:
  explicit CostModel(CostModelOptions opts);

  // Trains a fresh model on `set` (replacing the previous one). InvalidArgument on an empty or ragged set.
  Status Fit(const TrainingSet& set);
  // Scores of rows x dim features (higher = predicted faster), with the rows' base margins (one per row, or empty
  // for none) when the model was fitted with margins. FailedPrecondition-like error before Fit.
  Result<std::vector<float>> Predict(const std::vector<float>& features, size_t dim,
                                     const std::vector<float>& margins = {}) const;
  // The same for rows already in a matrix of `dim` columns (several models scoring the same rows; the matrix holds
  // their margins, if any).
  Result<std::vector<float>> Predict(const XgbMatrix& rows, size_t dim) const;
  bool trained() const { return booster_.valid(); }
  int fits() const { return fits_; }
  const CostModelOptions& options() const { return opts_; }

 private:
  CostModelOptions opts_;
  XgbBooster booster_;
  size_t dim_ = 0;
  int fits_ = 0;
};

// Spearman rank correlation of two equally long series (ties get average ranks); 0 when undefined.
double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b);

// The model's ranking of `measured` (scores of configs) by `predicted`, as a progress line says it: "Spearman 0.85".
// Where the correlation is undefined it says why rather than print 0.00, which would read as a model that ranks no
// better than chance: "Spearman n/a (constant predictions)" for a model that predicted one value for every config (a
// degenerate model), "Spearman n/a (equal measured scores)" when the configs measured alike (every one failed, say),
// "Spearman n/a (fewer than 2 configs)".
std::string SpearmanText(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace tunefleet
