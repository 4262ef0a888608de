#include "tuner/strategy_xgb.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "tuner/strategy_common.h"
#include "tuner/strategy_transfer.h"

namespace tunefleet {
namespace {

// Spaces up to this many raw points are scored exhaustively instead of annealed: cheaper and exact.
constexpr uint64_t kExhaustiveRawSize = 4096;
// Warm-start rows kept at most, so that every refit stays well under a second even on a large log.
constexpr size_t kMaxHistoryRows = 8192;

CostModelOptions ModelOptions(const StrategyOptions& opts) {
  CostModelOptions m;
  m.objective = opts.xgb_objective;
  m.seed = opts.seed;
  return m;
}

}  // namespace

XgbStrategy::XgbStrategy(const StrategyOptions& opts, const Template* tmpl, const Task* task, const Space& space,
                         const DeviceLimits* limits)
    : opts_(opts),
      space_(space),
      features_(space, tmpl, task, limits),
      model_(ModelOptions(opts)),
      rng_(opts.seed),
      last_corr_(std::numeric_limits<double>::quiet_NaN()) {
  annealing_.seed = opts.seed;
}

Result<std::vector<float>> XgbStrategy::Score(const std::vector<uint64_t>& indices) const {
  return model_.Predict(features_.ExtractIndices(indices), features_.dim());
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
    observed_features_.resize(observed_.size() * dim);
    features_.Extract(space_.FromIndex(r.index), observed_features_.data() + (observed_.size() - 1) * dim);
  }
  if (!results.empty()) fit_pending_ = true;
  // A full plan of new results: drop what is left of the plan so the next one comes from a refitted model.
  if (observed_.size() - observed_at_fit_ >= opts_.plan_size) plan_pos_ = plan_.size();
}

void XgbStrategy::WarmStart(const std::vector<HistoryRecord>& history) {
  std::map<std::string, size_t> group_of;
  std::vector<std::vector<const HistoryRecord*>> members;
  std::vector<std::string> keys;
  for (const auto& h : history) {
    const std::string key = h.task_spec + "@" + h.device_fingerprint;
    auto [it, inserted] = group_of.emplace(key, members.size());
    if (inserted) {
      members.emplace_back();
      keys.push_back(key);
    }
    members[it->second].push_back(&h);
  }
  const size_t dim = features_.dim();
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
    group.key = keys[g];
    for (const HistoryRecord* h : members[g]) {
      std::optional<MappedConfig> m = MapConfigJson(space_, h->config_json);
      if (!m) {
        ++history_skipped_;
        continue;
      }
      if (!m->exact) ++history_inexact_;
      group.features.resize(group.features.size() + dim);
      features_.Extract(m->config, group.features.data() + group.features.size() - dim);
      group.scores.push_back(RelativeScore(h->ok, h->cost, best));
    }
    if (group.scores.empty()) continue;
    history_rows_ += group.scores.size();
    history_.push_back(std::move(group));
  }
  if (history_rows_ > kMaxHistoryRows) ThinHistory();
  if (history_rows_ > 0) {
    fit_pending_ = true;
    plan_pos_ = plan_.size();  // the next plan comes from the warm-started model
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
      kept.features.insert(kept.features.end(), g.features.begin() + static_cast<std::ptrdiff_t>(r * dim),
                           g.features.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
    }
    g.scores = std::move(kept.scores);
    g.features = std::move(kept.features);
    history_rows_ += g.scores.size();
  }
}

void XgbStrategy::EvaluateNewestPlan() {
  if (!model_.trained() || observed_.size() <= observed_at_fit_ + 1) return;
  const size_t dim = features_.dim();
  std::vector<float> rows(observed_features_.begin() + static_cast<std::ptrdiff_t>(observed_at_fit_ * dim),
                          observed_features_.end());
  Result<std::vector<float>> pred = model_.Predict(rows, dim);
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
  last_corr_n_ = measured.size();
}

Status XgbStrategy::Refit() {
  TrainingSet set;
  set.dim = features_.dim();
  // History is worth a plan's worth of own results, less as own results accumulate.
  const float history_weight =
      1.0f / (1.0f + static_cast<float>(observed_.size()) / static_cast<float>(opts_.plan_size));
  for (const Group& g : history_) {
    set.features.insert(set.features.end(), g.features.begin(), g.features.end());
    set.scores.insert(set.scores.end(), g.scores.begin(), g.scores.end());
    set.group_sizes.push_back(static_cast<unsigned>(g.scores.size()));
    set.group_weights.push_back(history_weight);
  }
  if (!observed_.empty()) {
    const double best = BestCost(observed_);
    set.features.insert(set.features.end(), observed_features_.begin(), observed_features_.end());
    for (const auto& o : observed_) set.scores.push_back(RelativeScore(o.ok, o.cost, best));
    set.group_sizes.push_back(static_cast<unsigned>(observed_.size()));
    set.group_weights.push_back(1.0f);
  }
  TF_RETURN_IF_ERROR(model_.Fit(set));
  observed_at_fit_ = observed_.size();
  fit_pending_ = false;
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
      std::sort(v.begin(), v.end(), [](const ScoredIndex& a, const ScoredIndex& b) {
        return a.score != b.score ? a.score > b.score : a.index < b.index;
      });
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
  if (fit_pending_ && HasTrainingData() &&
      (!model_.trained() || observed_.size() - observed_at_fit_ >= opts_.plan_size)) {
    EvaluateNewestPlan();  // with the old model, on data it has not seen
    Status s = Refit();
    if (!s.ok()) last_error_ = s.ToString();
  }
  const uint64_t plan_seed = rng_();
  if (model_.trained()) {
    const size_t n_random = static_cast<size_t>(std::lround(opts_.epsilon * static_cast<double>(opts_.plan_size)));
    const size_t n_model = opts_.plan_size - std::min(n_random, opts_.plan_size);
    std::vector<ScoredIndex> ranked = RankCandidates(2 * opts_.plan_size, plan_seed);
    plan_ = PickDiverse(space_, ranked, n_model, opts_.diversity_knobs);
    last_plan_from_model_ = !plan_.empty();
  }
  std::unordered_set<uint64_t> taken = visited_;
  taken.insert(plan_.begin(), plan_.end());
  std::vector<uint64_t> random = SampleUnvisited(space_, taken, opts_.plan_size - plan_.size(), rng_);
  plan_.insert(plan_.end(), random.begin(), random.end());
}

std::string XgbStrategy::StatusLine() const {
  std::string s = "xgb: plan #" + std::to_string(plans_) + (last_plan_from_model_ ? " (model)" : " (random)");
  if (model_.trained()) {
    s += ", refit #" + std::to_string(model_.fits()) + " at " + std::to_string(observed_at_fit_) + " results";
  } else {
    s += ", no model yet";
  }
  if (history_rows_ > 0) {
    s += ", warm start " + std::to_string(history_rows_) + " history rows";
    if (history_inexact_ > 0) s += " (" + std::to_string(history_inexact_) + " mapped to nearest)";
  }
  if (!std::isnan(last_corr_)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", Spearman %.2f on newest %zu", last_corr_, last_corr_n_);
    s += buf;
  }
  if (!last_error_.empty()) s += ", model error: " + last_error_;
  return s;
}

}  // namespace tunefleet
