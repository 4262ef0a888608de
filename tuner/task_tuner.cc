#include "tuner/task_tuner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/wall_clock.h"
#include "storage/tuning_log.h"
#include "tuner/recorded_config.h"
#include "tuner/strategy_transfer.h"
#include "tuner/task_workload.h"

namespace tunefleet {

namespace {

// A config's lower median result (of two, the faster) by (cost, record id), as TuningLog::Best picks its record.
std::pair<double, int64_t> MedianResult(std::vector<std::pair<double, int64_t>> results) {
  std::sort(results.begin(), results.end());
  return results[(results.size() - 1) / 2];
}

}  // namespace

TaskTuner::TaskTuner(const Task& task, const Template& tmpl, Space space, const TaskTunerOptions& opts,
                     TuningLog* log)
    : task_(task), tmpl_(tmpl), space_(std::move(space)), opts_(opts), log_(log) {}

Result<std::unique_ptr<TaskTuner>> TaskTuner::Create(const Task& task, const Template& tmpl,
                                                     const DeviceLimits& limits, const TaskTunerOptions& opts,
                                                     TuningLog* log) {
  TF_ASSIGN_OR_RETURN(Space space, tmpl.MakeSpace(task, limits));
  std::unique_ptr<TaskTuner> t(new TaskTuner(task, tmpl, std::move(space), opts, log));
  t->limits_ = limits;
  t->flops_ = tmpl.Flops(task);
  const std::string workload = LogWorkloadJson(task, opts.count, opts.model);
  TF_ASSIGN_OR_RETURN(t->task_id_, log->UpsertTask(task.ToSpec(), task.op, workload, t->flops_));
  // A task recorded before (by another model, or a --task run) counts this model's occurrences too.
  TF_RETURN_IF_ERROR(log->EditTaskWorkload(
      t->task_id_, [&](const std::string& stored) { return WithModelCount(stored, task, opts.count, opts.model); }));
  TF_ASSIGN_OR_RETURN(t->template_id_, log->UpsertTemplate(tmpl.name(), tmpl.version()));
  t->fallback_index_ = t->space_.IndexOf(tmpl.Fallback(task, t->space_));
  TF_ASSIGN_OR_RETURN(t->strategy_, MakeStrategy(opts.strategy, tmpl, t->task_, t->space_, limits));
  TF_RETURN_IF_ERROR(t->ReplayOwn());
  return t;
}

// Resume: what the log holds for (task, template, device) is never measured again and seeds the strategy.
Status TaskTuner::ReplayOwn() {
  if (opts_.fresh) return Status::OK();
  TF_ASSIGN_OR_RETURN(std::vector<RecordRow> rows, log_->Records(task_id_, template_id_, opts_.device_id));
  // A config's first result is its trial; later ones (tune --confirm, --fresh passes) are repeats, which the
  // strategy does not see again but which count in the config's median.
  std::vector<Observation> own, repeats;
  std::vector<int64_t> own_ids, repeat_ids;
  std::set<uint64_t> seen;
  size_t unmapped = 0;
  for (const RecordRow& r : rows) {
    if (const std::optional<uint64_t> index = RecordedIndex(space_, r)) {
      const bool first = seen.insert(*index).second;
      (first ? own : repeats).push_back({*index, r.status == 0, r.mean_cost});
      (first ? own_ids : repeat_ids).push_back(r.id);
    } else {
      ++unmapped;
    }
  }
  if (unmapped > 0)
    spdlog::warn("{} [{}]: {} recorded trial(s) name no config of this space; left out", task_.ToSpec(), tmpl_.name(),
                 unmapped);
  if (own.empty()) return Status::OK();
  strategy_->Update(own);
  const int64_t dev = opts_.device_id;
  for (size_t i = 0; i < own.size(); ++i) Observe(own[i].index, own[i].ok, own[i].cost, false, own_ids[i], dev);
  for (size_t i = 0; i < repeats.size(); ++i)
    Observe(repeats[i].index, repeats[i].ok, repeats[i].cost, true, repeat_ids[i], dev);
  resumed_ = own.size();
  resumed_repeats_ = repeats.size();
  last_gflops_ = std::numeric_limits<double>::quiet_NaN();  // "current" is this run's: a record of the log is not
  return Status::OK();
}

// Transfer learning: records of the same template on other tasks or devices warm-start the model. They are read
// when the unit proposes its first batch, not when the run starts, so that in a model's run each unit also learns
// from the units of its template tuned before it (AutoTVM's tune_tasks reloads its log before each task alike).
Status TaskTuner::WarmStartFromLog(bool refresh) {
  warm_start_read_ = true;
  if (!opts_.transfer || !strategy_->UsesHistory()) return Status::OK();
  const auto enough_new = [this](size_t records) {
    return records >= history_records_ + std::max<size_t>(16, history_records_ / 10);
  };
  if (refresh) {  // a count bounds what the read below could find: unless it could be enough, the read is skipped
    TF_ASSIGN_OR_RETURN(const int64_t at_most, log_->CountOthersOfTemplate(template_id_, task_id_, opts_.device_id));
    if (!enough_new(static_cast<size_t>(at_most))) return Status::OK();
  }
  std::map<int64_t, std::pair<std::string, double>> tasks;  // id -> (spec, flops)
  TF_ASSIGN_OR_RETURN(auto task_rows, log_->Tasks());
  for (const auto& t : task_rows) tasks[t.id] = {t.spec, t.flops};
  std::map<int64_t, std::string> fingerprints;
  TF_ASSIGN_OR_RETURN(auto device_rows, log_->Devices());
  for (const auto& d : device_rows) fingerprints[d.id] = d.fingerprint;
  // Collapsed as the records are read: one entry per config is held, not every record (a tune against 258,800
  // records of its template, 11,550 configs, peaked at 162 MB holding them all, 48 MB so). A record of a task or
  // device written after the two reads above (another run writes the log) is left for the next refresh.
  HistoryCollapser collapser;
  TF_RETURN_IF_ERROR(log_->VisitRecords(0, template_id_, 0, [&](RecordRow&& r) {
    if (r.task_id == task_id_ && r.device_id == opts_.device_id) return;  // own results (ReplayOwn, Record)
    const auto task = tasks.find(r.task_id);
    const auto device = fingerprints.find(r.device_id);
    if (task == tasks.end() || device == fingerprints.end()) return;
    // Failures too: they enter the model as the worst.
    collapser.Add(task->second.first, device->second, std::move(r.config), r.status == 0, r.mean_cost,
                  task->second.second);
  }));
  size_t records = 0;  // the records behind the rows (a task and device with a single config is left out)
  std::vector<HistoryRecord> history = collapser.Rows(&records);
  if (history.empty()) return Status::OK();  // nothing, or nothing that ranks configs
  const size_t grown = records;
  if (refresh && !enough_new(grown)) return Status::OK();
  if (refresh) {
    spdlog::info("{} [{}]: warm start refreshed: {} records of other tasks/devices ({} configs), {} before",
                 task_.ToSpec(), tmpl_.name(), records, history.size(), history_records_);
  } else {
    spdlog::info("{} [{}]: warm start from {} records of other tasks/devices ({} configs)", task_.ToSpec(),
                 tmpl_.name(), records, history.size());
  }
  history_records_ = grown;
  strategy_->WarmStart(history);
  return Status::OK();
}

void TaskTuner::Observe(uint64_t index, bool ok, double cost, bool repeat, int64_t record_id, int64_t device_id) {
  if (!repeat) {
    ++trials_;
    first_trial_.emplace(index, trials_);
    if (index == fallback_index_) {
      fallback_seen_ = fallback_recorded_ = true;
    }
  }
  // The progress line's "current", a repeat's too: -1 for a failure ("current failed").
  last_gflops_ = ok && cost > 0 ? flops_ / cost / 1e9 : -1;
  if (ok && cost > 0) {
    std::vector<std::pair<double, int64_t>>& costs = ok_costs_[{device_id, index}];
    costs.emplace_back(cost, record_id);
    if (costs.size() > 1) {
      RankByMedians();  // a repeat moves its config's median, up or down
    } else if (best_cost_ == 0 || cost < best_cost_) {  // on a tie the earlier result, as RankByMedians keeps it
      best_cost_ = cost;
      best_index_ = index;
      best_device_ = device_id;
      best_trial_ = first_trial_.count(index) ? first_trial_[index] : trials_;
    }
  }
  if (!repeat) curve_.push_back(best_cost_);
}

// On the best config's device model (the speed-up compares like with like), before any best on the run's first.
double TaskTuner::fallback_cost() const {
  const auto found = ok_costs_.find({has_best() ? best_device_ : opts_.device_id, fallback_index_});
  return found == ok_costs_.end() ? 0 : MedianResult(found->second).first;
}

// The best config again, by the lower median of each config's results, as TuningLog::Best ranks them.
void TaskTuner::RankByMedians() {
  std::optional<std::pair<double, int64_t>> best;
  for (const auto& [key, costs] : ok_costs_) {
    const std::pair<double, int64_t> median = MedianResult(costs);
    if (!best || median < *best) {
      best = median;
      std::tie(best_device_, best_index_) = key;
    }
  }
  best_cost_ = best ? best->first : 0;
  // Early stopping counts from the trial that found the best config, not from a repeat that moved it.
  if (auto found = first_trial_.find(best_index_); found != first_trial_.end()) best_trial_ = found->second;
}

size_t TaskTuner::best_results() const {
  const auto found = ok_costs_.find({best_device_, best_index_});
  return has_best() && found != ok_costs_.end() ? found->second.size() : 0;
}

Result<std::vector<CandidateJob>> TaskTuner::ProposeRepeats(size_t configs, size_t times) {
  std::vector<CandidateJob> jobs;
  std::set<uint64_t> ran;
  for (const auto& [key, costs] : ok_costs_) ran.insert(key.second);
  if (ran.size() < 2) return jobs;
  // (median result, (device row, index)); a config among the best on two device models is measured again once.
  std::vector<std::pair<std::pair<double, int64_t>, std::pair<int64_t, uint64_t>>> ranked;
  for (const auto& [key, costs] : ok_costs_) ranked.emplace_back(MedianResult(costs), key);
  std::sort(ranked.begin(), ranked.end());
  std::set<uint64_t> considered;  // configs, each at its best group
  for (const auto& [median, key] : ranked) {
    const uint64_t index = key.second;
    if (!considered.insert(index).second) continue;
    if (considered.size() > configs) break;
    const size_t have = ok_costs_[key].size();
    if (have >= 1 + times) continue;
    // It ran, so its program was generated before; a failure now is the template's and not a result.
    Result<proto::KernelProgram> program = tmpl_.Generate(task_, space_, space_.FromIndex(index));
    if (!program.ok()) return program.status();
    *program->mutable_timing() = Timing();
    for (size_t n = have; n < 1 + times; ++n) jobs.push_back({index, *program});
  }
  return jobs;
}

proto::TimingSpec TaskTuner::Timing() const {
  proto::TimingSpec t;
  t.set_warmup(opts_.measure.warmup);
  t.set_number(opts_.measure.number);
  t.set_repeat(opts_.measure.repeat);
  t.set_min_repeat_ms(opts_.measure.min_repeat_ms);
  t.set_timeout_ms(opts_.measure.timeout_ms);
  return t;
}

Result<std::vector<CandidateJob>> TaskTuner::Propose(size_t n) {
  if (!warm_start_read_) {
    TF_RETURN_IF_ERROR(WarmStartFromLog(/*refresh=*/false));
  } else if (opts_.transfer_refresh && strategy_->WantsHistoryRefresh()) {
    TF_RETURN_IF_ERROR(WarmStartFromLog(/*refresh=*/true));
  }
  std::vector<CandidateJob> jobs;
  // The fallback config goes first, so the end-of-run table can tell what tuning bought. The strategy learns of
  // it only when its result is recorded, so within this batch it may propose the same index: skip that one.
  bool with_fallback = false;
  if (!fallback_seen_ && space_.ValidIndex(fallback_index_) && n > 0) {
    fallback_seen_ = with_fallback = true;
    TF_RETURN_IF_ERROR(AddCandidate(fallback_index_, &jobs));
  }
  while (jobs.size() < n && !exhausted_) {
    std::vector<uint64_t> batch = strategy_->NextBatch(n - jobs.size());
    if (batch.empty()) {
      exhausted_ = true;
      break;
    }
    for (uint64_t index : batch) {
      if (with_fallback && index == fallback_index_) continue;
      TF_RETURN_IF_ERROR(AddCandidate(index, &jobs));
    }
  }
  return jobs;
}

Result<std::vector<CandidateJob>> TaskTuner::ProposeFallback() {
  std::vector<CandidateJob> jobs;
  if (fallback_seen_ || !space_.ValidIndex(fallback_index_)) return jobs;
  fallback_seen_ = true;
  TF_RETURN_IF_ERROR(AddCandidate(fallback_index_, &jobs));
  return jobs;
}

// Generates the program of one config into `jobs`; a config whose program cannot be generated is recorded at
// once as status 2 instead.
Status TaskTuner::AddCandidate(uint64_t index, std::vector<CandidateJob>* jobs) {
  Result<proto::KernelProgram> program = tmpl_.Generate(task_, space_, space_.FromIndex(index));
  if (!program.ok()) {
    proto::MeasureResult failed;
    failed.set_status(proto::HOST_GENERATION_FAILED);
    failed.set_message(program.status().ToString());
    return Record(index, failed);
  }
  *program->mutable_timing() = Timing();
  jobs->push_back({index, std::move(program).value()});
  return Status::OK();
}

Status TaskTuner::Record(uint64_t index, const proto::MeasureResult& result, int64_t device_id, bool repeat) {
  RecordRow r;
  r.session_id = opts_.session_id;
  r.task_id = task_id_;
  r.template_id = template_id_;
  r.device_id = device_id != 0 ? device_id : opts_.device_id;
  r.config_index = index;
  r.config = space_.ToJson(space_.FromIndex(index)).dump();
  r.status = static_cast<int>(result.status());
  r.costs.assign(result.costs().begin(), result.costs().end());
  r.mean_cost = result.status() == proto::OK ? result.mean_cost() : 0;
  r.compile_time = result.compile_time();
  r.wall_time = result.wall_time();
  r.message = result.message();
  r.timestamp = WallClockSeconds();
  TF_ASSIGN_OR_RETURN(int64_t record_id, log_->AddRecord(r));
  bool ok = result.status() == proto::OK && result.mean_cost() > 0;
  if (!repeat) strategy_->Update({{index, ok, result.mean_cost()}});
  Observe(index, ok, result.mean_cost(), repeat, record_id, r.device_id);
  return Status::OK();
}

}  // namespace tunefleet
