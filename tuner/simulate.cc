#include "tuner/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "common/printable.h"
#include "proto/tunefleet.pb.h"
#include "search-spaces/template.h"
#include "tuner/export_source.h"
#include "tuner/recorded_config.h"
#include "tuner/strategy_common.h"
#include "tuner/strategy_transfer.h"

namespace tunefleet {

ReplayTable BuildReplayTable(const Space& space, const std::vector<RecordRow>& records) {
  ReplayTable t;
  std::map<uint64_t, std::vector<double>> ok_costs;  // per config, every successful result
  std::map<uint64_t, size_t> records_of, failures_of;
  for (const RecordRow& r : records) {
    const std::optional<uint64_t> recorded = RecordedIndex(space, r);
    if (!recorded) {
      ++t.unmapped;
      continue;
    }
    const uint64_t index = *recorded;
    if (!space.ValidIndex(index)) {  // it once set a best that no strategy could reach
      ++t.invalid;
      continue;
    }
    t.by_index.emplace(index, Observation{index, false, 0});
    ++records_of[index];
    if (r.status == 0 && r.mean_cost > 0) {
      ok_costs[index].push_back(r.mean_cost);
    } else {
      ++failures_of[index];
    }
  }
  std::map<size_t, size_t> configs_with;  // number of records -> configs
  for (const auto& [index, n] : records_of) ++configs_with[n];
  size_t most_configs = 0;
  for (const auto& [n, configs] : configs_with) {
    if (configs > most_configs) most_configs = configs, t.usual_records = n;
  }
  for (const auto& [n, configs] : configs_with) {
    if (n != t.usual_records) t.uneven += configs;
  }
  for (const auto& [index, failed] : failures_of) {
    if (ok_costs.count(index) != 0) ++t.mixed;
  }
  // A config measured in several passes is replayed at the lower median of its successful results, so that one
  // outlying pass neither makes nor breaks it (with two results: the faster one).
  for (auto& [index, costs] : ok_costs) {
    const double cost = LowerMedian(costs);
    t.by_index[index] = Observation{index, true, cost};
    if (t.best_cost == 0 || cost < t.best_cost) t.best_cost = cost;
    t.ok_costs.emplace(index, std::move(costs));
  }
  return t;
}

Result<uint64_t> TrialsToTarget(Strategy& strategy, const ReplayTable& table, double target, size_t batch,
                                uint64_t* unrecorded, const TrialObserver& on_trial, const ReplayDraws& draws,
                                std::stop_token stop) {
  if (table.best_cost <= 0) return Status::InvalidArgument("no successful record to replay");
  uint64_t trials = 0;
  for (;;) {
    if (stop.stop_requested()) {
      return Status::Unavailable("stopped after " + std::to_string(trials) + " trials, before the target");
    }
    std::vector<uint64_t> proposed = strategy.NextBatch(batch);
    if (proposed.empty()) {
      return Status::NotFound("the strategy exhausted the space after " + std::to_string(trials) +
                              " trials without reaching the target");
    }
    if (draws.arrival != nullptr) std::shuffle(proposed.begin(), proposed.end(), *draws.arrival);
    std::vector<Observation> results;
    for (uint64_t idx : proposed) {
      ++trials;
      auto it = table.by_index.find(idx);
      if (it == table.by_index.end()) {
        if (unrecorded != nullptr) ++*unrecorded;
        results.push_back({idx, false, 0});  // as if the device had rejected it
        if (on_trial) on_trial(trials, results.back());
        continue;
      }
      results.push_back(it->second);
      if (draws.pass != nullptr && it->second.ok) {
        const std::vector<double>& costs = table.ok_costs.at(idx);
        results.back().cost = costs[std::uniform_int_distribution<size_t>(0, costs.size() - 1)(*draws.pass)];
      }
      if (on_trial) on_trial(trials, it->second);
      if (it->second.ok && table.best_cost / it->second.cost >= target - 1e-12) return trials;
    }
    strategy.Update(results);
  }
}

Result<std::vector<HistoryRecord>> SiblingRunHistory(const ReplayWorld& sibling, const StrategyOptions& so,
                                                     uint64_t trials, size_t batch) {
  if (batch == 0) return Status::InvalidArgument("--batch must be positive");
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Strategy> st,
                      MakeStrategyForSpace(so, sibling.tmpl, sibling.tmpl ? &sibling.task : nullptr, sibling.space,
                                           sibling.tmpl ? &sibling.limits : nullptr));
  const std::string spec = sibling.task.ToSpec();
  const double flops = sibling.tmpl ? sibling.tmpl->Flops(sibling.task) : 0;
  std::vector<HistoryRecord> out;
  while (out.size() < trials) {
    std::vector<uint64_t> proposed = st->NextBatch(std::min<uint64_t>(batch, trials - out.size()));
    if (proposed.empty()) break;  // the sibling's space is exhausted
    std::vector<Observation> results;
    for (uint64_t idx : proposed) {
      auto it = sibling.table.by_index.find(idx);
      results.push_back(it == sibling.table.by_index.end() ? Observation{idx, false, 0} : it->second);
      out.push_back({spec, "replay", sibling.space.ToJson(sibling.space.FromIndex(idx)).dump(), results.back().ok,
                     results.back().cost, flops});
    }
    st->Update(results);
  }
  return out;
}

namespace {

double Median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? static_cast<double>(v[n / 2]) : (static_cast<double>(v[n / 2 - 1]) + v[n / 2]) / 2.0;
}

// The runs of one strategy. `done` counts the finished runs of both strategies, for control.on_seed; a stop request
// ends the loop early and sets *interrupted.
Result<StrategyRuns> RunSeeds(const ReplayWorld& w, const SimulateOptions& opts, const std::string& name,
                              bool warm_start, uint64_t* unrecorded, const TraceObserver& on_trial,
                              const SimulateControl& control, int* done, bool* interrupted) {
  StrategyRuns runs;
  runs.name = name;
  for (int seed = 1; seed <= opts.seeds; ++seed) {
    if (control.stop.stop_requested()) {
      *interrupted = true;
      break;
    }
    StrategyOptions so;
    so.name = name;
    so.seed = static_cast<uint64_t>(seed);
    so.plan_size = opts.plan_size;
    so.xgb_objective = opts.xgb_objective;
    so.xgb_ensemble = opts.xgb_ensemble;
    so.xgb_kappa = opts.xgb_kappa;
    so.prior_pool = opts.prior_pool;
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Strategy> st,
                        MakeStrategyForSpace(so, w.tmpl, w.tmpl ? &w.task : nullptr, w.space,
                                             w.tmpl ? &w.limits : nullptr));
    if (warm_start && opts.transfer_trials > 0) {
      TF_ASSIGN_OR_RETURN(std::vector<HistoryRecord> history,
                          SiblingRunHistory(*w.sibling, so, opts.transfer_trials, opts.batch));
      st->WarmStart(history);
    } else if (warm_start && !w.history.empty()) {
      st->WarmStart(w.history);
    }
    TrialObserver observe;
    if (on_trial) {
      observe = [&](uint64_t trial, const Observation& result) { on_trial(TraceRow{name, seed, trial, result}); };
    }
    // The replay's draws are seeded per run, each its own stream, and do not touch the strategy's own seed.
    std::mt19937_64 pass_rng(static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull);
    std::mt19937_64 arrival_rng(static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull + 1);
    ReplayDraws draws;
    if (opts.observe == "pass") draws.pass = &pass_rng;
    if (opts.arrival == "shuffled") draws.arrival = &arrival_rng;
    Result<uint64_t> t =
        TrialsToTarget(*st, w.table, opts.target, opts.batch, unrecorded, observe, draws, control.stop);
    if (!t.ok() && control.stop.stop_requested()) {
      *interrupted = true;  // this run is not counted: it had not reached the target
      break;
    }
    if (!t.ok()) return t.status().WithContext(name + " seed " + std::to_string(seed));
    runs.trials.push_back(*t);
    ++*done;
    if (control.on_seed) control.on_seed(SeedDone{name, seed, *t, *done, 2 * opts.seeds});
  }
  runs.median = Median(runs.trials);
  return runs;
}

std::string FormatNumber(double v) {
  char buf[32];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  }
  return buf;
}

}  // namespace

Status CheckSimulateOptions(const ReplayWorld& world, const SimulateOptions& opts) {
  if (opts.seeds < 1 || opts.seeds > kMaxSimulateSeeds) {
    return Status::InvalidArgument("--seeds must be from 1 to " + std::to_string(kMaxSimulateSeeds) + ", not " +
                                   std::to_string(opts.seeds));
  }
  if (!(opts.target > 0 && opts.target <= 1)) return Status::InvalidArgument("--target must be in (0, 1]");
  if (opts.batch == 0) return Status::InvalidArgument("--batch must be positive");
  if (opts.observe != "median" && opts.observe != "pass") {
    return Status::InvalidArgument("--observe: '" + opts.observe + "' is not median or pass");
  }
  if (opts.arrival != "plan" && opts.arrival != "shuffled") {
    return Status::InvalidArgument("--arrival: '" + opts.arrival + "' is not plan or shuffled");
  }
  if (opts.transfer_trials > 0 && world.sibling == nullptr) {
    return Status::InvalidArgument("--transfer-trials needs --transfer-from naming another task recorded on the "
                                   "replayed device");
  }
  return Status::OK();
}

Status CheckRecorded(const ReplayWorld& world, const SimulateOptions& opts) {
  // A replay proposes configs until one reaches the target: over a space mostly unrecorded (each such proposal a
  // failure) that is nearly the whole space for every seed, which ran for many minutes.
  for (const ReplayWorld* w : {&world, world.sibling.get()}) {
    if (w == nullptr || (w == world.sibling.get() && opts.transfer_trials == 0)) continue;
    const uint64_t valid = w->space.CountValid(), recorded = w->table.by_index.size();
    if (recorded * 2 < valid) {
      return Status::InvalidArgument("the log records " + std::to_string(recorded) + " of the " +
                                     std::to_string(valid) + " valid configs of " + w->task.ToSpec() + " (" +
                                     (w->tmpl ? w->tmpl->name() : "?") + "): simulate replays a recorded space; "
                                     "record it whole with tune --tuner grid --trials all");
    }
    if (w->table.best_cost <= 0) {
      return Status::InvalidArgument("no config of " + w->task.ToSpec() + " (" + (w->tmpl ? w->tmpl->name() : "?") +
                                     ") ran successfully in the log: there is no best to reach");
    }
    if (w == world.sibling.get() && opts.transfer_trials > valid) {
      return Status::InvalidArgument("--transfer-trials " + std::to_string(opts.transfer_trials) + " is more than " +
                                     w->task.ToSpec() + "'s " + std::to_string(valid) + " valid configs");
    }
  }
  return Status::OK();
}

Result<SimulationReport> Simulate(const ReplayWorld& world, const SimulateOptions& opts,
                                  const TraceObserver& on_trial, const SimulateControl& control) {
  TF_RETURN_IF_ERROR(CheckSimulateOptions(world, opts));
  TF_RETURN_IF_ERROR(CheckRecorded(world, opts));
  SimulationReport report;
  int done = 0;
  // Only the tuner under test gets the history: the baseline is the plain reference point.
  TF_ASSIGN_OR_RETURN(report.tuner, RunSeeds(world, opts, opts.tuner, true, &report.unrecorded, on_trial, control,
                                             &done, &report.interrupted));
  TF_ASSIGN_OR_RETURN(report.baseline, RunSeeds(world, opts, opts.baseline, false, &report.unrecorded, on_trial,
                                                control, &done, &report.interrupted));
  return report;
}

std::string SummaryLine(const SimulateOptions& opts, const SimulationReport& report) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", report.ratio());
  char target[32];  // 95, 99.95: as precise as the target (0.9995 was called 100%)
  std::snprintf(target, sizeof target, "%.10g", opts.target * 100);
  return "trials-to-" + std::string(target) + "%: " + report.tuner.name + " " +
         FormatNumber(report.tuner.median) + " " + report.baseline.name + " " + FormatNumber(report.baseline.median) +
         " ratio " + ratio;
}

// ---- Loading from the tuning log ------------------------------------------------------------------------------

namespace {

std::string Canonical(const std::string& spec) {
  Result<Task> t = Task::Parse(spec);
  return t.ok() ? t->ToSpec() : spec;
}

Result<TaskRow> FindTaskRow(const std::vector<TaskRow>& tasks, const std::string& spec) {
  for (const TaskRow& t : tasks) {
    if (t.spec == spec || Canonical(t.spec) == Canonical(spec)) return t;
  }
  return Status::NotFound("task '" + spec + "' is not in the log");
}

template <typename Row, typename NameFn>
std::string Names(const std::vector<Row>& rows, NameFn name) {
  std::string s;
  for (const Row& r : rows) s += (s.empty() ? "" : ", ") + name(r);
  return s;
}

}  // namespace

Result<std::unique_ptr<ReplayWorld>> LoadReplayWorld(TuningLog& log, const ReplaySelection& sel) {
  auto w = std::make_unique<ReplayWorld>();
  TF_ASSIGN_OR_RETURN(std::vector<TemplateRow> templates, log.Templates());
  TF_ASSIGN_OR_RETURN(std::vector<TaskRow> tasks, log.Tasks());
  TF_ASSIGN_OR_RETURN(std::vector<DeviceRow> devices, log.Devices());

  // Template: by name, or the only name in the log; the version built into tunefleet when the log has it,
  // else the newest recorded one.
  std::vector<TemplateRow> named;
  for (const TemplateRow& t : templates) {
    if (sel.template_name.empty() || t.name == sel.template_name) named.push_back(t);
  }
  if (named.empty()) {
    return Status::NotFound(sel.template_name.empty() ? "the log holds no template"
                                                      : "template '" + sel.template_name + "' is not in the log");
  }
  // Several templates and a task named: those with records of the task.
  if (Result<TaskRow> task = FindTaskRow(tasks, sel.task_spec); sel.template_name.empty() && task.ok()) {
    std::vector<TemplateRow> with_task;
    for (const TemplateRow& t : named) {
      TF_ASSIGN_OR_RETURN(std::vector<uint64_t> idx, log.MeasuredIndices(task->id, t.id, 0));
      if (!idx.empty()) with_task.push_back(t);
    }
    if (!with_task.empty()) named = with_task;
  }
  for (const TemplateRow& t : named) {
    if (t.name != named.front().name) {
      return Status::InvalidArgument("several templates in the log: " +
                                     Names(named, [](const TemplateRow& r) { return r.name; }) +
                                     "; pick one with --template");
    }
  }
  w->tmpl = FindTemplate(named.front().name);
  if (w->tmpl == nullptr)
    return Status::NotFound("template '" + Printable(named.front().name) + "' is not built into tunefleet");
  std::optional<TemplateRow> tmpl_row;
  for (const TemplateRow& t : named) {
    if (t.version == w->tmpl->version()) tmpl_row = t;
  }
  if (!tmpl_row) {
    tmpl_row = *std::max_element(named.begin(), named.end(),
                                 [](const TemplateRow& a, const TemplateRow& b) { return a.version < b.version; });
    w->notes.push_back(w->tmpl->name() + ": replaying the records of version " + std::to_string(tmpl_row->version) +
                       "; this tunefleet builds version " + std::to_string(w->tmpl->version()) +
                       ", whose space may differ");
  }

  // Task: by spec, or the only one with records of this template.
  TaskRow task_row;
  if (!sel.task_spec.empty()) {
    TF_ASSIGN_OR_RETURN(task_row, FindTaskRow(tasks, sel.task_spec));
  } else {
    std::vector<TaskRow> with_records;
    for (const TaskRow& t : tasks) {
      TF_ASSIGN_OR_RETURN(std::vector<uint64_t> idx, log.MeasuredIndices(t.id, tmpl_row->id, 0));
      if (!idx.empty()) with_records.push_back(t);
    }
    if (with_records.size() != 1) {
      return Status::InvalidArgument(
          with_records.empty() ? "the log holds no records of template " + tmpl_row->name
                               : "several tasks in the log: " +
                                     Names(with_records, [](const TaskRow& r) { return r.spec; }) +
                                     "; pick one with --task");
    }
    task_row = with_records.front();
  }
  TF_ASSIGN_OR_RETURN(w->task, Task::Parse(task_row.spec));
  TF_ASSIGN_OR_RETURN(std::vector<RecordRow> records, log.Records(task_row.id, tmpl_row->id, 0));
  if (records.empty()) return Status::NotFound("no records of " + task_row.spec + " with " + tmpl_row->name);

  // Device: the one named, or the one with the most configs recorded (then the most records): a device with ten
  // repeats of half the space had been picked over one with all of it.
  std::map<int64_t, std::pair<size_t, size_t>> per_device;  // configs, records
  {
    std::map<int64_t, std::set<std::string>> configs;  // a record of no config text counts by its index
    for (const RecordRow& r : records) {
      configs[r.device_id].insert(r.config.empty() ? "#" + std::to_string(r.config_index) : r.config);
      ++per_device[r.device_id].second;
    }
    for (const auto& [id, c] : configs) per_device[id].first = c.size();
  }
  int64_t device_id = 0;
  for (const DeviceRow& d : devices) {
    if (!sel.device.empty() && (d.fingerprint == sel.device || std::to_string(d.id) == sel.device)) device_id = d.id;
  }
  if (!sel.device.empty() && device_id == 0) return Status::NotFound("device '" + sel.device + "' is not in the log");
  if (device_id == 0) {
    std::pair<size_t, size_t> most{0, 0};
    for (const auto& [id, n] : per_device) {
      if (n > most) most = n, device_id = id;
    }
    if (per_device.size() > 1) {
      w->notes.push_back("the task's records are of " + std::to_string(per_device.size()) +
                         " devices; replaying the one with the most configs recorded (--device ID or FINGERPRINT "
                         "picks another)");
    }
  }
  std::map<int64_t, std::string> fingerprint;
  std::string undescribed;  // the note on the replayed device's description, when it does not parse
  for (const DeviceRow& d : devices) {
    fingerprint[d.id] = d.fingerprint;
    if (d.id != device_id) continue;
    w->device = Printable(d.name, 100) + " [" + Printable(d.fingerprint, 64) + "]";
    bool parsed = false;
    const proto::DeviceInfo info = DeviceInfoOf(d, &parsed);  // as best and export read it
    if (parsed && info.max_work_group_size() > 0) {
      w->limits = DeviceLimits::From(info);
    } else {
      undescribed = "the log's description of " + w->device + " " + kUndescribedDevice +
                    ": the space is built with a default device's limits (256 work-items, 32 KiB of local memory, "
                    "no images, no fp16)";
      w->notes.push_back(undescribed);
    }
  }

  Result<Space> space = w->tmpl->MakeSpace(w->task, w->limits);
  if (!space.ok()) return undescribed.empty() ? space.status() : space.status().WithNote(undescribed);
  w->space = std::move(space).value();
  std::vector<RecordRow> mine;
  for (const RecordRow& r : records) {
    if (r.device_id == device_id) mine.push_back(r);
  }
  w->table = BuildReplayTable(w->space, mine);

  if (!sel.transfer_from.empty()) {
    TF_ASSIGN_OR_RETURN(TaskRow from, FindTaskRow(tasks, sel.transfer_from));
    TF_ASSIGN_OR_RETURN(std::vector<RecordRow> hist, log.Records(from.id, tmpl_row->id, 0));
    // The rows `tune` would warm-start from (CollapseHistory: one per config and device, at the lower median of
    // its results, like the replayed space), never the answers themselves.
    std::vector<HistoryRecord> raw;
    for (const RecordRow& r : hist) {
      if (from.id == task_row.id && r.device_id == device_id) continue;
      raw.push_back({from.spec, fingerprint[r.device_id], r.config, r.status == 0, r.mean_cost, from.flops});
    }
    w->history = CollapseHistory(raw);
    if (w->history.empty()) return Status::NotFound("no records to transfer from " + sel.transfer_from);
    if (from.id != task_row.id) {
      // The sibling as a space of its own, for --transfer-trials; a sibling not recorded on this device has none.
      ReplaySelection own{from.spec, tmpl_row->name, std::to_string(device_id), ""};
      Result<std::unique_ptr<ReplayWorld>> sibling = LoadReplayWorld(log, own);
      if (sibling.ok() && (*sibling)->table.best_cost > 0) w->sibling = std::move(sibling).value();
    }
  }
  return w;
}

}  // namespace tunefleet
