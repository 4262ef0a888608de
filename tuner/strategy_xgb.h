// Model-based search (AutoTVM's XGBTuner, done again): an XGBoost model over config features is refitted after
// every plan of `plan_size` new results. The model is a bagged ensemble (CostEnsemble, 5 members by default) and
// plans follow its upper confidence bound, mean + kappa * spread of the members' predictions, where AutoTVM
// follows one model's mean (`xgb_ensemble` 1). Its objective (`xgb_objective` auto) is rank:ndcg while it learns
// from the task's own results, which weighs the order among the fastest configs most. When other tasks' history
// warm-starts it, its members alternate rank:pairwise, AutoTVM's, and rank:ndcg (3 and 2 of 5): a sibling's
// overall order (pairwise) and its top (ndcg) each mislead where the tasks differ in that respect, and where the
// two disagree the spread sends the plan to both.
// Simulated annealing over these scores, minus visited configs, makes the next plan: the first `greedy_share` of
// the model's picks in predicted order, the rest through a diversity filter, then an epsilon of exploration picks:
// the model's best among random configs that extend a feature's range beyond the training data (random ones when
// there are none).
// Without history the first plan is the device prior's best of a random pool (`prior_pool`, tuner/device_prior.h),
// or random; with `early_refits` the model is also fitted at plan_size/4 and plan_size/2 own results, so most of
// the first plan already comes from a model. Every model starts from the device prior: each row's base margin is
// its config's prior score on this device (kPriorMarginWeight x; a history record's config in its own task), and
// the trees learn a correction to it, so results that do not contrast what the prior says (a first plan all in its
// best class) do not lead the plans away from it.
// Warm start: history of other tasks/devices of the same template trains the first model, one rank group per
// (task, device), discounted by 1 / (1 + own results / plan_size) as own data arrives. A later WarmStart (a run's
// other tasks recorded more since) replaces the history, and the next plan comes from a model refitted on it. A
// history record gets the features of its own task's config (the kernel that was measured) when the template
// builds that task's space with the same feature layout; otherwise it is mapped onto the nearest config of this
// space.
// A refit trains on at most 8192 of the task's own results (tuner/fit_rows.h: the newest, the fastest and an even
// stride of the rest), so a task resumed with a large log refits as fast as one of 8192 results.
// Failed configs are trained on as the worst (score 0). History beyond 8192 rows is thinned evenly per group, and
// a refit gives its members 8192 history rows in all: beyond 8192 / members rows, each member gets its own
// interleaved share (plus every group's best), so an ensemble refits in about the time of one model.
// Thread safety: one instance per task, one thread (the ensemble's members fit on threads of their own).
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "tuner/annealing.h"
#include "tuner/cost_ensemble.h"
#include "tuner/features.h"
#include "tuner/strategy.h"

namespace tunefleet {

class XgbStrategy final : public Strategy {
 public:
  // `space` (and `tmpl`, `task`, `limits` when set) must outlive the strategy. A null template means knob
  // features only.
  XgbStrategy(const StrategyOptions& opts, const Template* tmpl, const Task* task, const Space& space,
              const DeviceLimits* limits);

  std::vector<uint64_t> NextBatch(size_t n) override;
  void Update(const std::vector<Observation>& results) override;
  void WarmStart(const std::vector<HistoryRecord>& history) override;
  bool UsesHistory() const override { return true; }
  bool WantsHistoryRefresh() const override { return plans_ > 0 && plan_pos_ >= plan_.size(); }
  std::string StatusLine() const override;

  // For tests: the ranking quality of the model on the newest plan, measured before the refit; NaN until known.
  double last_rank_correlation() const { return last_corr_; }

 private:
  struct Group {  // rows of one (task, device) from history
    std::vector<float> features;
    std::vector<float> scores;
    std::vector<float> margins;  // the device prior of each row's config (PriorMargin's units)
  };

  bool HasTrainingData() const;
  bool EarlyRefitDue() const;
  // The space and features of another task of the template, for its history records.
  struct OwnTaskFeatures {
    Task task;
    Space space;
    std::unique_ptr<FeatureExtractor> features;  // null when its feature layout differs from this task's
  };
  using OwnTaskCache = std::map<std::string, std::unique_ptr<OwnTaskFeatures>>;  // by task spec
  // Appends the features of `h` to `out`: those of its own task's config when `cache` can build them, else those
  // of the nearest config of this space (counted in history_inexact_), and sets `margin` to that config's device
  // prior on this device (0 without a template, task and limits). False when neither fits.
  bool HistoryFeatures(const HistoryRecord& h, OwnTaskCache& cache, std::vector<float>& out, float& margin);
  void ThinHistory();
  // The rows a refit trains on: history rows r with r % shares == share (and every group's best), at
  // `history_weight`, then the own results RowsToFit keeps.
  TrainingSet TrainingRows(size_t share, size_t shares, float history_weight) const;
  Status Refit();
  void EvaluateNewestPlan();
  void MakePlan();
  std::vector<ScoredIndex> RankCandidates(size_t keep, uint64_t plan_seed);
  // Up to `n` exploration picks outside `taken`: a tree model predicts a config whose feature lies beyond the
  // range it was trained on no better than the edge of that range, so model picks alone never try an extreme
  // that no result has shown (one virtual thread, when the first random plan held none). These are the model's
  // best among random configs that extend the range of at least one feature.
  std::vector<uint64_t> FrontierPicks(size_t n, const std::unordered_set<uint64_t>& taken);
  // The ensemble's acquisition score (mean + kappa * spread) of configs: what plans are chosen by.
  Result<std::vector<float>> Score(const std::vector<uint64_t>& indices) const;
  // Whether the device prior (tuner/device_prior.h) acts: it picks the first plan without history and is every
  // fit's base margin. On with prior_pool > 1, a template that follows it (Template::FollowsDevicePrior), a task
  // and device limits.
  bool DevicePriorOn() const;
  // The base margin of a config of this space: kPriorMarginWeight x its device prior score on this device; 0 while
  // the prior is off (DevicePriorOn).
  float PriorMargin(uint64_t index) const;
  // The same for a config of `space`, a space of `task` (another task's, for history).
  float PriorMargin(const Task& task, const Space& space, const Config& config) const;

  StrategyOptions opts_;
  const Template* tmpl_;
  const Task* task_;
  const DeviceLimits* limits_;
  const Space& space_;
  FeatureExtractor features_;
  CostEnsemble model_;
  AnnealingOptions annealing_;
  std::mt19937_64 rng_;

  std::unordered_set<uint64_t> visited_;  // proposed or observed
  std::vector<Observation> observed_;     // own results, arrival order
  std::vector<float> observed_features_;  // observed_.size() x dim
  std::vector<float> observed_margins_;   // PriorMargin of each own result (when a prior can be had)
  size_t observed_at_fit_ = 0;            // observed_.size() when the model was last fitted
  bool fit_pending_ = false;              // new data arrived that the model has not seen
  bool history_changed_ = false;          // WarmStart replaced the history: the next plan refits
  bool warm_model_ = false;               // the ensemble has the members of a warm-started model

  std::vector<Group> history_;
  size_t history_rows_ = 0;
  size_t history_own_ = 0;      // records featured in their own task's space
  size_t history_inexact_ = 0;  // records mapped to the nearest choices
  size_t history_skipped_ = 0;  // records that could not be mapped

  std::vector<uint64_t> plan_;
  size_t plan_pos_ = 0;
  size_t plans_ = 0;
  bool last_plan_from_model_ = false;
  bool last_plan_from_prior_ = false;
  double last_corr_;
  std::string last_corr_text_;  // SpearmanText of the newest plan; empty until known
  size_t last_corr_n_ = 0;
  std::string last_error_;
};

}  // namespace tunefleet
