// tunefleet-model-speed: times what the xgb strategy does between two plans on a large real space: a refit of the
// cost model on N results and one plan of simulated annealing over its predictions (the issue's target: both
// together under 2 s for a plan of 64 on a space of 10^5 points). No device: results are a synthetic cost.
//
//   tunefleet-model-speed [--task SPEC] [--template NAME] [--device h200|pocl] [--plan 64]
//                         [--results 64,128,256,512] [--history ROWS] [--repeat 3] [--ensemble 5] [--prior-pool 4]
//
// For each N it prints the median over --repeat runs of: the refit alone (features of N rows + CostModel::Fit),
// the annealing alone (Anneal keeping 2 x plan candidates, as the strategy does), and the strategy's whole step
// (XgbStrategy::NextBatch(plan) after N results: refit, annealing, diversity filter, random picks).
// --history adds that many warm-start rows (records of the same task "from another device") to every refit.
// --ensemble sets the strategy's number of bagged models (StrategyOptions::xgb_ensemble; 1 = one model, as before
// the ensemble); the refit and annealing columns always time one model, with the first objective the strategy's
// `auto` gives its members (rank:ndcg without history, rank:pairwise with it). --prior-pool sets
// StrategyOptions::prior_pool: without history the strategy's models start from the device prior as their base
// margin unless it is 0 (the step then times the models of before that, on the results alone).
// --plan is at most 4096, each --results count at most 500,000 and --ensemble from 1 to 64; each count plus the plan,
// and --history, must fit among the space's valid configs. Bad input (those, a --task that is no task, a --template
// that is unknown or does not run the task on the --device's limits) gets one error line naming the option, exit 2;
// a failure at run time (standard output that could not be written) one line, exit 1.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/cli_checks.h"

#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "tuner/annealing.h"
#include "tuner/cost_model.h"
#include "tuner/features.h"
#include "tuner/strategy.h"
#include "tuner/strategy_common.h"

namespace tunefleet {
namespace {

// The same device descriptions as tunefleet-space-count (as the agents reported them).
constexpr const char* kH200 =
    R"({"name":"NVIDIA H200","device_type":"GPU","compute_units":132,"max_work_group_size":"1024",)"
    R"("max_work_item_sizes":["1024","1024","64"],"local_mem_bytes":"49152","image_support":true,)"
    R"("image2d_max_width":"32768","image2d_max_height":"32768"})";
constexpr const char* kPocl =
    R"({"name":"pthread-skylake-avx512-AMD EPYC","device_type":"CPU","compute_units":2,"max_work_group_size":"4096",)"
    R"("max_work_item_sizes":["4096","4096","4096"],"local_mem_bytes":"1048576","image_support":true,)"
    R"("image2d_max_width":"16384","image2d_max_height":"16384"})";

constexpr const char* kTool = "tunefleet-model-speed";

// One error line; returns `code`.
int Error(const std::string& message, int code) {
  std::fflush(stdout);  // the lines printed before it go first
  std::cerr << kTool << ": error: " << message << "\n";
  return code;
}

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A smooth made-up runtime over the config's features (knob values and derived features), with a little
// multiplicative noise: enough structure for trees of realistic size. Strictly positive, in seconds.
class SyntheticCost {
 public:
  SyntheticCost(const FeatureExtractor& fx, uint64_t seed) : fx_(fx), row_(fx.dim()) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> w(0.0, 1.0), c(-1.0, 4.0);
    for (size_t i = 0; i < fx.dim(); ++i) weights_.push_back(w(rng)), centers_.push_back(c(rng));
  }
  double operator()(const Config& config, std::mt19937_64& rng) {
    fx_.Extract(config, row_.data());
    double e = 0;
    for (size_t i = 0; i < row_.size(); ++i) {
      const double x = std::log2(1.0 + std::abs(static_cast<double>(row_[i])));
      e += weights_[i] * std::abs(x - centers_[i]);
    }
    return 1e-4 * std::exp(0.3 * e) * std::uniform_real_distribution<double>(0.97, 1.03)(rng);
  }

 private:
  const FeatureExtractor& fx_;
  std::vector<float> row_;
  std::vector<double> weights_, centers_;
};

// Bounds of --plan and --results, each element of the list alike (a value past them ran for minutes, or wrapped: a
// --results of 2^64 - 1 sampled the whole space and left no config to plan). The space (--task, --template,
// --device) bounds them again once it is made: results + plan configs must be among its valid ones.
constexpr double kMaxPlan = 4096;
constexpr double kMaxResults = 500000;

struct Args {
  // 99,792 valid configs of 338,688 raw points with the H200's limits.
  std::string task = "conv2d:1,48,28,28,48,3,3,1,1";
  std::string tmpl = "conv2d_nchwc.image2d";
  std::string device = "h200";
  size_t plan = 64;
  std::vector<size_t> results = {64, 128, 256, 512};
  size_t history = 0;
  int repeat = 3;
  int ensemble = StrategyOptions{}.xgb_ensemble;
  size_t prior_pool = StrategyOptions{}.prior_pool;
};

int Run(int argc, char** argv) {
  Args a;
  CLI::App app{"tunefleet-model-speed: seconds for a refit of the cost model and one plan of annealing on a large "
               "real space (no device: the results are a synthetic cost)"};
  app.add_option("--task", a.task, "Task spec")->capture_default_str()->check(cli::NotEmpty());
  app.add_option("--template", a.tmpl, "Template")->capture_default_str()->check(cli::NotEmpty());
  app.add_option("--device", a.device, "Whose limits shape the space")
      ->capture_default_str()
      ->check(CLI::IsMember({"h200", "pocl"}));
  app.add_option("--plan", a.plan, "Configs per plan")
      ->capture_default_str()
      ->check(cli::Between(1, kMaxPlan, "AutoTVM plans 64 at a time"));
  app.add_option("--results", a.results, "Result counts to time the refit at, comma-separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(cli::Between(1, kMaxResults, "each result is a config of the space, measured once"));
  app.add_option("--history", a.history, "Warm-start rows added to every refit")
      ->capture_default_str()
      ->check(cli::NonNegative());
  app.add_option("--repeat", a.repeat, "Runs per figure (the median is printed)")
      ->capture_default_str()
      ->check(cli::Positive());
  app.add_option("--ensemble", a.ensemble, "The strategy's bagged models (1 = one model)")
      ->capture_default_str()
      // Checked up front: MakeStrategy refuses more models, but only once the space is counted, and under
      // --xgb-ensemble's name.
      ->check(cli::Between(1, kMaxXgbEnsemble, "models in the xgb strategy's ensemble"));
  app.add_option("--prior-pool", a.prior_pool, "The strategy's device prior pool (0 = no prior, no base margins)")
      ->capture_default_str()
      ->check(cli::WholeBetween(0, kMaxPriorPool));
  if (auto code = cli::ParseCommandLine(app, argc, argv, kTool)) return *code;
  proto::DeviceInfo info;
  (void)google::protobuf::util::JsonStringToMessage(a.device == "h200" ? kH200 : kPocl, &info);
  const DeviceLimits limits = DeviceLimits::From(info);
  Result<Task> task = Task::Parse(a.task);
  if (!task.ok()) return Error("--task: " + task.status().message(), 2);
  Result<const Template*> found = LookUpTemplate(a.tmpl);
  if (!found.ok()) return Error("--template: " + found.status().message(), 2);
  const Template* tmpl = *found;
  // A template of another op is --template's fault; a shape it does not run on these limits (or a float16 task
  // without cl_khr_fp16), --task's.
  if (std::string why; !tmpl->Supports(*task, limits, &why)) {
    return Error(std::string(tmpl->RunsOp(task->op) ? "--task: " : "--template: ") + "template " + tmpl->name() +
                     " cannot run " + task->ToSpec() + " on " + info.name() + " (--device " + a.device + ")" +
                     (why.empty() ? "" : ": " + why),
                 2);
  }
  Result<Space> made = tmpl->MakeSpace(*task, limits);
  if (!made.ok()) {
    const int code = made.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    return Error(task->ToSpec() + " on " + tmpl->name() + ": " + made.status().message(), code);
  }
  const Space space = std::move(made).value();
  Clock::time_point t0 = Clock::now();
  const uint64_t valid = space.CountValid();
  const double count_s = Seconds(t0);
  // Results and a plan are distinct configs (a plan proposes configs not measured yet), and so are the history
  // rows: more than the space holds would leave the plan short.
  for (size_t n : a.results) {
    if (n + a.plan > valid) {
      std::cerr << "tunefleet-model-speed: error: --results " << n << " and --plan " << a.plan << " need " << n + a.plan
                << " distinct configs, but " << task->ToSpec() << " on " << tmpl->name() << " has " << valid
                << " valid ones\n";
      return 2;
    }
  }
  if (a.history > valid) {
    std::cerr << "tunefleet-model-speed: error: --history " << a.history << " is more than the " << valid
              << " valid configs of " << task->ToSpec() << " on " << tmpl->name() << "\n";
    return 2;
  }
  const FeatureExtractor fx(space, tmpl, &*task, &limits);
  std::printf("space: %s on %s (%s limits): %llu valid configs of %llu raw points, %zu features (counted in %.2f s)\n",
              task->ToSpec().c_str(), tmpl->name().c_str(), a.device.c_str(), static_cast<unsigned long long>(valid),
              static_cast<unsigned long long>(space.RawSize()), fx.dim(), count_s);
  std::printf("plan %zu, %zu warm-start history rows, median of %d runs, 1 XGBoost thread per model, step_s with "
              "%d model(s)\n", a.plan, a.history, a.repeat, a.ensemble);
  std::printf("%8s %10s %10s %12s %10s\n", "results", "refit_s", "anneal_s", "refit+anneal", "step_s");

  for (size_t n : a.results) {
    std::vector<double> refit_s, anneal_s, step_s;
    for (int r = 0; r < a.repeat; ++r) {
      std::mt19937_64 rng(1000 + r);
      SyntheticCost cost(fx, 7);
      std::unordered_set<uint64_t> visited;
      const std::vector<uint64_t> measured = SampleUnvisited(space, visited, n, rng);
      std::vector<Observation> obs;
      for (uint64_t i : measured) obs.push_back({i, true, cost(space.FromIndex(i), rng)});
      std::vector<HistoryRecord> history;
      std::unordered_set<uint64_t> hist_seen;
      for (uint64_t i : SampleUnvisited(space, hist_seen, a.history, rng)) {
        const Config c = space.FromIndex(i);
        history.push_back({task->ToSpec(), "other-device", space.ToJson(c).dump(), true, 2 * cost(c, rng), 0});
      }

      // The refit alone, as XgbStrategy::Refit builds it (history and own results as rank groups).
      t0 = Clock::now();
      TrainingSet set;
      set.dim = fx.dim();
      if (!history.empty()) {
        double best = 0;
        for (const HistoryRecord& h : history) best = best == 0 ? h.cost : std::min(best, h.cost);
        for (const HistoryRecord& h : history) {
          set.features.resize(set.features.size() + set.dim);
          fx.Extract(space.FromJson(nlohmann::json::parse(h.config_json)).value(),
                     set.features.data() + set.features.size() - set.dim);
          set.scores.push_back(RelativeScore(true, h.cost, best));
        }
        set.group_sizes.push_back(static_cast<unsigned>(history.size()));
      }
      const std::vector<float> own = fx.ExtractIndices(measured);
      set.features.insert(set.features.end(), own.begin(), own.end());
      const double best = BestCost(obs);
      for (const Observation& o : obs) set.scores.push_back(RelativeScore(o.ok, o.cost, best));
      set.group_sizes.push_back(static_cast<unsigned>(obs.size()));
      CostModelOptions mo;
      mo.objective = XgbModelObjectives(StrategyOptions{}, /*warm=*/!history.empty()).front();
      CostModel model(mo);
      if (Status s = model.Fit(set); !s.ok()) return Error("the refit: " + s.message(), 1);
      refit_s.push_back(Seconds(t0));

      // One plan of annealing over the model (chains start at the best measured configs, as the strategy's do).
      std::vector<Observation> sorted = obs;
      std::sort(sorted.begin(), sorted.end(),
                [](const Observation& x, const Observation& y) { return x.cost < y.cost; });
      std::vector<uint64_t> starts;
      const AnnealingOptions ao;
      for (size_t i = 0; i < sorted.size() && starts.size() < static_cast<size_t>(ao.chains / 4); ++i) {
        starts.push_back(sorted[i].index);
      }
      t0 = Clock::now();
      Result<std::vector<ScoredIndex>> top = Anneal(
          space, [&](const std::vector<uint64_t>& idx) { return model.Predict(fx.ExtractIndices(idx), fx.dim()); },
          visited, starts, 2 * a.plan, ao);
      anneal_s.push_back(Seconds(t0));
      if (!top.ok()) return Error("the annealing: " + top.status().message(), 1);

      // The strategy's whole step between two plans.
      StrategyOptions so;
      so.seed = static_cast<uint64_t>(r + 1);
      so.plan_size = a.plan;
      so.xgb_ensemble = a.ensemble;
      so.prior_pool = a.prior_pool;
      Result<std::unique_ptr<Strategy>> st = MakeStrategy(so, *tmpl, *task, space, limits);
      if (!st.ok()) return Error("the strategy: " + st.status().message(), 1);
      if (!history.empty()) (*st)->WarmStart(history);
      (*st)->Update(obs);
      t0 = Clock::now();
      const std::vector<uint64_t> plan = (*st)->NextBatch(a.plan);
      step_s.push_back(Seconds(t0));
      if (plan.size() != a.plan) {
        return Error("the strategy proposed " + std::to_string(plan.size()) + " configs of " +
                         std::to_string(a.plan),
                     1);
      }
    }
    const double refit = Median(refit_s), anneal = Median(anneal_s);
    std::printf("%8zu %10.3f %10.3f %12.3f %10.3f\n", n, refit, anneal, refit + anneal, Median(step_s));
  }
  // The figures are the result: output that did not reach standard output (a full disk, a closed pipe) is a failure.
  if (Status out = FlushStandardOutput(); !out.ok()) return Error(out.message(), 1);
  return 0;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) { return tunefleet::Run(argc, argv); }
