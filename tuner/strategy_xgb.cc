#include "tuner/strategy_xgb.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "search-spaces/template.h"
#include "tuner/device_prior.h"
#include "tuner/fit_rows.h"
#include "tuner/strategy_common.h"
#include "tuner/strategy_transfer.h"

namespace tunefleet {
namespace {

// Every fit starts from the device prior as its rows' base margin, scaled by this: 1 unit of the prior (a factor 2
// off the device's capacity) is worth a pair probability of 0.73 before any tree. Chosen on the replay of
// bench/data's 16 runs without history (bench/data/README.md): weight 1 met the target on 12 of them, 0 on 11, 3 on
// 12.
constexpr double kPriorMarginWeight = 1.0;
// Spaces up to this many raw points are scored exhaustively instead of annealed: cheaper and exact.
constexpr uint64_t kExhaustiveRawSize = 4096;
// Warm-start rows kept at most, so that every refit stays well under a second even on a large log.
constexpr size_t kMaxHistoryRows = 8192;
// Random configs drawn per plan to find the ones beyond the training data's feature ranges (FrontierPicks).
constexpr size_t kFrontierPool = 1024;

// True when configs of `a` and `b` have the same feature layout: the same knobs in the same order, list and bool
// knobs with the same values, split knobs with the same number of factors.
bool SameFeatureLayout(const Space& a, const Space& b) {
  if (a.knobs().size() != b.knobs().size()) return false;
  for (size_t i = 0; i < a.knobs().size(); ++i) {
    const Knob& x = a.knobs()[i];
    const Knob& y = b.knobs()[i];
    if (x.name != y.name || x.kind != y.kind) return false;
    if (x.kind != KnobKind::kSplit && x.choices != y.choices) return false;
    if (x.kind == KnobKind::kSplit && !x.choices.empty() && !y.choices.empty() &&
        x.choices.front().size() != y.choices.front().size()) {
      return false;
    }
  }
  return true;
}

CostModelOptions ModelOptions(const StrategyOptions& opts) {
  CostModelOptions m;
  m.seed = opts.seed;
  return m;
}

EnsembleOptions Ensemble(const StrategyOptions& opts, bool warm) {
  EnsembleOptions e;
  e.members = opts.xgb_ensemble;
  e.kappa = opts.xgb_kappa;
  e.objectives = XgbModelObjectives(opts, warm);
  return e;
}

}  // namespace

XgbStrategy::XgbStrategy(const StrategyOptions& opts, const Template* tmpl, const Task* task, const Space& space,
                         const DeviceLimits* limits)
    : opts_(opts),
      tmpl_(tmpl),
      task_(task),
      limits_(limits),
      space_(space),
      features_(space, tmpl, task, limits),
      model_(ModelOptions(opts), Ensemble(opts, /*warm=*/false)),
      rng_(opts.seed),
      last_corr_(std::numeric_limits<double>::quiet_NaN()) {
  annealing_.seed = opts.seed;
}

Result<std::vector<float>> XgbStrategy::Score(const std::vector<uint64_t>& indices) const {
  std::vector<float> margins;
  if (DevicePriorOn()) {
    margins.reserve(indices.size());
    for (uint64_t idx : indices) margins.push_back(PriorMargin(idx));
  }
  return model_.Acquisition(features_.ExtractIndices(indices), features_.dim(), margins);
}

bool XgbStrategy::DevicePriorOn() const {
  return opts_.prior_pool > 1 && tmpl_ != nullptr && task_ != nullptr && limits_ != nullptr &&
         tmpl_->FollowsDevicePrior();
}

float XgbStrategy::PriorMargin(uint64_t index) const {
  if (!DevicePriorOn()) return 0;
  return PriorMargin(*task_, space_, space_.FromIndex(index));
}

float XgbStrategy::PriorMargin(const Task& task, const Space& space, const Config& config) const {
  if (!DevicePriorOn()) return 0;  // no fit reads margins then: the configs' work-items are not worked out
  const double items = tmpl_->WorkItems(task, space, config);
  return static_cast<float>(kPriorMarginWeight * DevicePriorScore(items, DeviceCapacity(*limits_)));
}

bool XgbStrategy::HasTrainingData() const { return history_rows_ > 0 || observed_.size() >= 2; }

std::vector<uint64_t> XgbStrategy::NextBatch(size_t n) {
  std::vector<uint64_t> out;
  while (out.size() < n) {
    if (plan_pos_ >= plan_.size()) {
      MakePlan();
      if (plan_.empty()) break;
    }
    const uint64_t idx = plan_[plan_pos_++];
    if (visited_.insert(idx).second) out.push_back(idx);
  }
  if (out.size() < n) {  // plans ran dry: the space is (nearly) exhausted
    std::vector<uint64_t> more = SampleUnvisited(space_, visited_, n - out.size(), rng_);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

void XgbStrategy::Update(const std::vector<Observation>& results) {
  const size_t dim = features_.dim();
  for (const auto& r : results) {
    visited_.insert(r.index);
    observed_.push_back(r);
    observed_margins_.push_back(PriorMargin(r.index));
    observed_features_.resize(observed_.size() * dim);
    features_.Extract(space_.FromIndex(r.index), observed_features_.data() + (observed_.size() - 1) * dim);
  }
  if (!results.empty()) fit_pending_ = true;
  // A full plan of new results (or an early refit point): drop what is left of the plan so the next one comes
  // from a refitted model.
  if (observed_.size() - observed_at_fit_ >= opts_.plan_size || EarlyRefitDue()) plan_pos_ = plan_.size();
}

bool XgbStrategy::EarlyRefitDue() const {
  if (!opts_.early_refits) return false;
  // The first plan is cut at a quarter, a half and all of it; later refits keep the plan_size cadence from there.
  const size_t n = observed_.size();
  for (size_t at : {opts_.plan_size / 4, opts_.plan_size / 2, opts_.plan_size}) {
    if (at >= 2 && n >= at && observed_at_fit_ < at) return true;
  }
  return false;
}

bool XgbStrategy::HistoryFeatures(const HistoryRecord& h, OwnTaskCache& cache, std::vector<float>& out,
                                  float& margin) {
  const size_t dim = features_.dim();
  margin = 0;
  if (tmpl_ != nullptr && limits_ != nullptr) {
    auto it = cache.find(h.task_spec);
    if (it == cache.end()) {
      auto own = std::make_unique<OwnTaskFeatures>();
      Result<Task> task = Task::Parse(h.task_spec);
      if (task.ok()) {
        own->task = std::move(task).value();
        Result<Space> space = tmpl_->MakeSpace(own->task, *limits_);
        if (space.ok() && SameFeatureLayout(*space, space_)) {
          own->space = std::move(space).value();
          auto fx = std::make_unique<FeatureExtractor>(own->space, tmpl_, &own->task, limits_);
          if (fx->dim() == dim) own->features = std::move(fx);
        }
      }
      it = cache.emplace(h.task_spec, std::move(own)).first;
    }
    if (const OwnTaskFeatures& own = *it->second; own.features != nullptr) {
      const nlohmann::json j = ParseJson(h.config_json);
      Result<Config> c = j.is_discarded() ? Result<Config>(Status::InvalidArgument("not JSON")) : own.space.FromJson(j);
      if (c.ok()) {
        out.resize(out.size() + dim);
        own.features->Extract(*c, out.data() + out.size() - dim);
        margin = PriorMargin(own.task, own.space, *c);
        ++history_own_;
        return true;
      }
    }
  }
  std::optional<MappedConfig> m = MapConfigJson(space_, h.config_json);
  if (!m) return false;
  if (!m->exact) ++history_inexact_;
  out.resize(out.size() + dim);
  features_.Extract(m->config, out.data() + out.size() - dim);
  if (DevicePriorOn()) margin = PriorMargin(*task_, space_, m->config);
  return true;
}

void XgbStrategy::WarmStart(const std::vector<HistoryRecord>& history) {
  const bool had_history = history_rows_ > 0;
  history_.clear();
  history_rows_ = history_own_ = history_inexact_ = history_skipped_ = 0;
  std::map<std::string, size_t> group_of;
  std::vector<std::vector<const HistoryRecord*>> members;
  for (const auto& h : history) {
    auto [it, inserted] = group_of.emplace(h.task_spec + "@" + h.device_fingerprint, members.size());
    if (inserted) members.emplace_back();
    members[it->second].push_back(&h);
  }
  OwnTaskCache own_tasks;
  for (size_t g = 0; g < members.size(); ++g) {
    double best = 0;
    for (const HistoryRecord* h : members[g]) {
      if (h->ok && h->cost > 0 && (best == 0 || h->cost < best)) best = h->cost;
    }
    if (best == 0) {  // nothing ran: no ranking to learn from this group
      history_skipped_ += members[g].size();
      continue;
    }
    Group group;
    for (const HistoryRecord* h : members[g]) {
      float margin = 0;
      if (!HistoryFeatures(*h, own_tasks, group.features, margin)) {
        ++history_skipped_;
        continue;
      }
      group.margins.push_back(margin);
      group.scores.push_back(RelativeScore(h->ok, h->cost, best));
    }
    if (group.scores.empty()) continue;
    history_rows_ += group.scores.size();
    history_.push_back(std::move(group));
  }
  if (history_rows_ > kMaxHistoryRows) ThinHistory();
  if (history_rows_ > 0 && !warm_model_) {
    model_ = CostEnsemble(ModelOptions(opts_), Ensemble(opts_, /*warm=*/true));  // nothing fitted yet
    warm_model_ = true;
  }
  if (history_rows_ > 0 || had_history) {
    fit_pending_ = history_changed_ = true;
    plan_pos_ = plan_.size();  // the next plan comes from a model fitted on this history
  }
}

void XgbStrategy::ThinHistory() {
  // Keep every stride-th row of each group plus the group's best, so each group keeps its ranking signal.
  const size_t stride = (history_rows_ + kMaxHistoryRows - 1) / kMaxHistoryRows;
  const size_t dim = features_.dim();
  history_rows_ = 0;
  for (Group& g : history_) {
    Group kept;
    for (size_t r = 0; r < g.scores.size(); ++r) {
      if (r % stride != 0 && g.scores[r] < 1.0f) continue;
      kept.scores.push_back(g.scores[r]);
      kept.margins.push_back(g.margins[r]);
      kept.features.insert(kept.features.end(), g.features.begin() + static_cast<std::ptrdiff_t>(r * dim),
                           g.features.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
    }
    g.scores = std::move(kept.scores);
    g.features = std::move(kept.features);
    g.margins = std::move(kept.margins);
    history_rows_ += g.scores.size();
  }
}

void XgbStrategy::EvaluateNewestPlan() {
  if (!model_.trained() || observed_.size() <= observed_at_fit_ + 1) return;
  const size_t dim = features_.dim();
  std::vector<float> rows(observed_features_.begin() + static_cast<std::ptrdiff_t>(observed_at_fit_ * dim),
                          observed_features_.end());
  std::vector<float> margins;
  if (DevicePriorOn()) {
    margins.assign(observed_margins_.begin() + static_cast<std::ptrdiff_t>(observed_at_fit_), observed_margins_.end());
  }
  Result<std::vector<float>> pred = model_.Predict(rows, dim, margins);
  if (!pred.ok()) {
    last_error_ = pred.status().ToString();
    return;
  }
  const double best = BestCost(observed_);
  std::vector<double> predicted, measured;
  for (size_t i = observed_at_fit_; i < observed_.size(); ++i) {
    predicted.push_back((*pred)[i - observed_at_fit_]);
    measured.push_back(RelativeScore(observed_[i].ok, observed_[i].cost, best));
  }
  last_corr_ = SpearmanCorrelation(predicted, measured);
  last_corr_text_ = SpearmanText(predicted, measured);
  last_corr_n_ = measured.size();
}

TrainingSet XgbStrategy::TrainingRows(size_t share, size_t shares, float history_weight) const {
  const size_t dim = features_.dim();
  const bool margins = DevicePriorOn();
  TrainingSet set;
  set.dim = dim;
  for (const Group& g : history_) {
    size_t rows = 0;
    for (size_t r = 0; r < g.scores.size(); ++r) {
      if (r % shares != share && g.scores[r] < 1.0f) continue;
      set.features.insert(set.features.end(), g.features.begin() + static_cast<std::ptrdiff_t>(r * dim),
                          g.features.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
      set.scores.push_back(g.scores[r]);
      if (margins) set.margins.push_back(g.margins[r]);
      ++rows;
    }
    set.group_sizes.push_back(static_cast<unsigned>(rows));
    set.group_weights.push_back(history_weight);
  }
  if (!observed_.empty()) {
    const double best = BestCost(observed_);
    std::vector<float> scores;
    scores.reserve(observed_.size());
    for (const auto& o : observed_) scores.push_back(RelativeScore(o.ok, o.cost, best));
    const std::vector<size_t> rows = RowsToFit(scores, kMaxOwnFitRows);
    for (size_t r : rows) {
      set.features.insert(set.features.end(), observed_features_.begin() + static_cast<std::ptrdiff_t>(r * dim),
                          observed_features_.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
      set.scores.push_back(scores[r]);
      if (margins) set.margins.push_back(observed_margins_[r]);
    }
    set.group_sizes.push_back(static_cast<unsigned>(rows.size()));
    set.group_weights.push_back(1.0f);
  }
  return set;
}

Status XgbStrategy::Refit() {
  // Each history row weighs 1 before the first own result, 1/2 after a plan of them, 1/(1 + n/plan) after n. The
  // weight is per row, so a large sibling still outweighs a few plans of own results (6,600 rows against 192 own
  // ones: 8:1); capping the history's total at a plan's worth was tried and not kept (bench/data/README.md).
  const float history_weight =
      1.0f / (1.0f + static_cast<float>(observed_.size()) / static_cast<float>(opts_.plan_size));
  // A refit fits at most kMaxHistoryRows history rows in all: when each member's share of that would be smaller
  // than the history, the members get interleaved shares of it (each with every group's best row), so the
  // ensemble still sees the whole history at about the cost of one model on it.
  const size_t members = model_.members();
  const size_t budget = std::max<size_t>(1, kMaxHistoryRows / members);
  const size_t shares = history_rows_ > budget ? std::min(members, (history_rows_ + budget - 1) / budget) : 1;
  if (shares == 1) {
    TF_RETURN_IF_ERROR(model_.Fit(TrainingRows(0, 1, history_weight)));
  } else {
    std::vector<TrainingSet> each;
    for (size_t k = 0; k < members; ++k) each.push_back(TrainingRows(k % shares, shares, history_weight));
    TF_RETURN_IF_ERROR(model_.FitEach(each));
  }
  observed_at_fit_ = observed_.size();
  fit_pending_ = history_changed_ = false;
  return Status::OK();
}

std::vector<ScoredIndex> XgbStrategy::RankCandidates(size_t keep, uint64_t plan_seed) {
  Result<std::vector<ScoredIndex>> ranked = std::vector<ScoredIndex>{};
  if (space_.RawSize() <= kExhaustiveRawSize) {
    std::vector<uint64_t> all;
    space_.ForEachValid([&](uint64_t idx) {
      if (visited_.count(idx) == 0) all.push_back(idx);
      return true;
    });
    Result<std::vector<float>> scores = Score(all);
    if (!scores.ok()) {
      ranked = scores.status();
    } else {
      std::vector<ScoredIndex> v;
      for (size_t i = 0; i < all.size(); ++i) v.push_back({all[i], (*scores)[i]});
      std::sort(v.begin(), v.end(), BetterScored);
      if (v.size() > keep) v.resize(keep);
      ranked = std::move(v);
    }
  } else {
    // Chains start from the best measured configs; Anneal tops them up with random ones.
    std::vector<Observation> ok;
    for (const auto& o : observed_) {
      if (o.ok) ok.push_back(o);
    }
    std::sort(ok.begin(), ok.end(), [](const Observation& a, const Observation& b) {
      return a.cost != b.cost ? a.cost < b.cost : a.index < b.index;
    });
    std::vector<uint64_t> starts;
    for (size_t i = 0; i < ok.size() && starts.size() < static_cast<size_t>(annealing_.chains / 4); ++i) {
      starts.push_back(ok[i].index);
    }
    AnnealingOptions a = annealing_;
    a.seed = plan_seed;
    ranked = Anneal(
        space_, [this](const std::vector<uint64_t>& idx) { return Score(idx); }, visited_, starts, keep, a);
  }
  if (!ranked.ok()) {
    last_error_ = ranked.status().ToString();
    return {};
  }
  return std::move(ranked).value();
}

void XgbStrategy::MakePlan() {
  ++plans_;
  plan_.clear();
  plan_pos_ = 0;
  last_plan_from_model_ = false;
  last_plan_from_prior_ = false;
  if (fit_pending_ && HasTrainingData() &&
      (!model_.trained() || history_changed_ || observed_.size() - observed_at_fit_ >= opts_.plan_size ||
       EarlyRefitDue())) {
    EvaluateNewestPlan();  // with the old model, on data it has not seen
    Status s = Refit();
    if (!s.ok()) last_error_ = s.ToString();
  }
  const uint64_t plan_seed = rng_();
  if (model_.trained()) {
    const size_t n_random = static_cast<size_t>(std::lround(opts_.epsilon * static_cast<double>(opts_.plan_size)));
    const size_t n_model = opts_.plan_size - std::min(n_random, opts_.plan_size);
    std::vector<ScoredIndex> ranked = RankCandidates(2 * opts_.plan_size, plan_seed);
    // The model's best guesses go in as ranked: when its top configs are near neighbours (often, since the
    // best region of a space is small) a filter over them would push the likeliest winners out of the plan.
    // The rest must differ from each other, so that a wrong model still learns something from the plan.
    const size_t n_greedy = std::min(
        {ranked.size(), n_model,
         static_cast<size_t>(std::lround(std::clamp(opts_.greedy_share, 0.0, 1.0) * static_cast<double>(n_model)))});
    for (size_t i = 0; i < n_greedy; ++i) plan_.push_back(ranked[i].index);
    const std::vector<ScoredIndex> rest(ranked.begin() + static_cast<std::ptrdiff_t>(n_greedy), ranked.end());
    const std::vector<uint64_t> diverse = PickDiverse(space_, rest, n_model - n_greedy, opts_.diversity_knobs);
    plan_.insert(plan_.end(), diverse.begin(), diverse.end());
    last_plan_from_model_ = !plan_.empty();
  }
  std::unordered_set<uint64_t> taken = visited_;
  taken.insert(plan_.begin(), plan_.end());
  if (model_.trained() && opts_.frontier_picks) {
    const std::vector<uint64_t> frontier = FrontierPicks(opts_.plan_size - plan_.size(), taken);
    plan_.insert(plan_.end(), frontier.begin(), frontier.end());
    taken.insert(frontier.begin(), frontier.end());
  }
  const size_t rest = opts_.plan_size - plan_.size();
  if (!model_.trained() && DevicePriorOn()) {
    // Nothing learnt yet: the device prior picks the plan from a random pool, best first.
    std::vector<uint64_t> pool = SampleUnvisited(space_, taken, opts_.prior_pool * rest, rng_);
    pool = OrderByDevicePrior(*tmpl_, *task_, space_, *limits_, std::move(pool));
    pool.resize(std::min(pool.size(), rest));
    plan_.insert(plan_.end(), pool.begin(), pool.end());
    last_plan_from_prior_ = !pool.empty();
    return;
  }
  std::vector<uint64_t> random = SampleUnvisited(space_, taken, rest, rng_);
  plan_.insert(plan_.end(), random.begin(), random.end());
}

std::vector<uint64_t> XgbStrategy::FrontierPicks(size_t n, const std::unordered_set<uint64_t>& taken) {
  const size_t dim = features_.dim();
  if (n == 0 || dim == 0) return {};
  // The range of every feature over the rows the model was trained on: own results and history.
  std::vector<float> lo(dim, std::numeric_limits<float>::infinity());
  std::vector<float> hi(dim, -std::numeric_limits<float>::infinity());
  auto widen = [&](const std::vector<float>& rows) {
    for (size_t i = 0; i < rows.size(); ++i) {
      lo[i % dim] = std::min(lo[i % dim], rows[i]);
      hi[i % dim] = std::max(hi[i % dim], rows[i]);
    }
  };
  widen(observed_features_);
  for (const Group& g : history_) widen(g.features);
  std::unordered_set<uint64_t> pool_taken = taken;
  const std::vector<uint64_t> pool = SampleUnvisited(space_, pool_taken, kFrontierPool, rng_);
  const std::vector<float> f = features_.ExtractIndices(pool);
  std::vector<uint64_t> beyond;
  for (size_t r = 0; r < pool.size(); ++r) {
    for (size_t d = 0; d < dim; ++d) {
      const float v = f[r * dim + d];
      if (v < lo[d] || v > hi[d]) {
        beyond.push_back(pool[r]);
        break;
      }
    }
  }
  if (beyond.empty()) return {};
  Result<std::vector<float>> scores = Score(beyond);
  if (!scores.ok()) {
    last_error_ = scores.status().ToString();
    return {};
  }
  std::vector<ScoredIndex> ranked;
  for (size_t i = 0; i < beyond.size(); ++i) ranked.push_back({beyond[i], (*scores)[i]});
  std::sort(ranked.begin(), ranked.end(), BetterScored);
  std::vector<uint64_t> out;
  for (size_t i = 0; i < ranked.size() && out.size() < n; ++i) out.push_back(ranked[i].index);
  return out;
}

std::string XgbStrategy::StatusLine() const {
  std::string s = plans_ == 0 ? std::string("xgb: no plan yet")
                              : "xgb: plan #" + std::to_string(plans_) +
                                    (last_plan_from_model_   ? " (model)"
                                     : last_plan_from_prior_ ? " (device prior)"
                                                             : " (random)");
  if (model_.trained()) {
    s += ", refit #" + std::to_string(model_.fits()) + " at " + std::to_string(observed_at_fit_) + " results";
    if (observed_at_fit_ > kMaxOwnFitRows) s += " (fitted on " + std::to_string(kMaxOwnFitRows) + " of them)";
    std::string objectives;
    for (const std::string& o : model_.objectives()) {
      objectives += (objectives.empty() ? "" : " + ") + XgbObjectiveName(o);
    }
    s += " (" + (model_.members() > 1 ? std::to_string(model_.members()) + " models, " : std::string()) +
         objectives + ")";
  } else {
    s += ", no model yet";
  }
  if (history_rows_ > 0) {
    s += ", warm start " + std::to_string(history_rows_) + " history rows";
    if (history_own_ > 0) s += " (" + std::to_string(history_own_) + " with their own task's features)";
    if (history_inexact_ > 0) s += " (" + std::to_string(history_inexact_) + " mapped to nearest)";
  }
  if (!last_corr_text_.empty()) s += ", " + last_corr_text_ + " on newest " + std::to_string(last_corr_n_);
  if (!last_error_.empty()) s += ", model error: " + last_error_;
  return s;
}

}  // namespace tunefleet
