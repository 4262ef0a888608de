#include "tuner/strategy.h"

#include <string>

#include "tuner/cost_model.h"
#include "tuner/strategy_ga.h"
#include "tuner/strategy_grid.h"
#include "tuner/strategy_random.h"
#include "tuner/strategy_xgb.h"

namespace tunefleet {

std::vector<std::string> XgbModelObjectives(const StrategyOptions& opts, bool warm) {
  if (opts.xgb_objective != "auto") return {opts.xgb_objective};
  if (warm) return {"rank", "ndcg"};
  return {"ndcg"};
}

const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> names = {"xgb", "ga", "random", "grid"};
  return names;
}

Result<std::unique_ptr<Strategy>> MakeStrategyForSpace(const StrategyOptions& opts, const Template* tmpl,
                                                       const Task* task, const Space& space,
                                                       const DeviceLimits* limits) {
  if (tmpl != nullptr && (task == nullptr || limits == nullptr)) {
    return Status::InvalidArgument("strategy: a template needs its task and device limits");
  }
  if (opts.name == "random") return std::unique_ptr<Strategy>(new RandomStrategy(space, opts.seed));
  if (opts.name == "grid") return std::unique_ptr<Strategy>(new GridStrategy(space));
  if (opts.name == "ga") return std::unique_ptr<Strategy>(new GaStrategy(space, opts.seed));
  if (opts.name == "xgb") {
    if (opts.xgb_objective != "auto" && XgbObjectiveName(opts.xgb_objective).empty()) {
      return Status::InvalidArgument("--xgb-objective: '" + opts.xgb_objective + "' is not auto, rank, ndcg or reg");
    }
    if (opts.plan_size == 0) return Status::InvalidArgument("strategy: plan size must be positive");
    if (opts.xgb_ensemble < 1 || opts.xgb_ensemble > kMaxXgbEnsemble) {
      return Status::InvalidArgument("--xgb-ensemble: " + std::to_string(opts.xgb_ensemble) +
                                     " is not a number of models from 1 to " + std::to_string(kMaxXgbEnsemble));
    }
    if (!(opts.xgb_kappa >= 0 && opts.xgb_kappa <= 100)) {
      return Status::InvalidArgument("--xgb-kappa: " + std::to_string(opts.xgb_kappa) + " is not from 0 to 100");
    }
    if (opts.prior_pool > kMaxPriorPool) {
      return Status::InvalidArgument("--xgb-prior-pool: " + std::to_string(opts.prior_pool) + " is not from 0 to " +
                                     std::to_string(kMaxPriorPool));
    }
    return std::unique_ptr<Strategy>(new XgbStrategy(opts, tmpl, task, space, limits));
  }
  std::string known;
  for (const std::string& n : StrategyNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("--tuner: unknown strategy '" + opts.name + "' (" + known + ")");
}

Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyOptions& opts, const Template& tmpl, const Task& task,
                                               const Space& space, const DeviceLimits& limits) {
  return MakeStrategyForSpace(opts, &tmpl, &task, space, &limits);
}

}  // namespace tunefleet
