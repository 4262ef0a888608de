#include "tuner/tune_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/printable.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/log_lock_wait.h"
#include "tuner/log_run_lock.h"
#include "tuner/progress.h"
#include "tuner/run_session.h"
#include "tuner/task_scheduler.h"

namespace tunefleet {
namespace {

// The TaskTuners of a run, with their place in the task list.
struct Entry {
  size_t task_index = 0;
  std::unique_ptr<TaskTuner> tuner;
  uint64_t trials_this_run = 0;
  uint64_t trials_before_run = 0;  // the unit's records in the log when the run began (a resumed run's)
  uint64_t round_trials = 0;  // trials of the run's fallback round (0 or 1), part of the unit's first batch
};

Result<std::vector<const Template*>> PickTemplates(const Task& task, const std::string& forced,
                                                   const DeviceLimits& limits, const std::string& device_name) {
  if (!forced.empty()) {
    TF_ASSIGN_OR_RETURN(const Template* t, LookUpTemplate(forced));
    std::string why;
    if (!t->Supports(task, limits, &why))
      return Status::InvalidArgument("template " + forced + " cannot run " + task.ToSpec() + " on " + device_name +
                                     (why.empty() ? "" : ": " + why));
    return std::vector<const Template*>{t};
  }
  std::vector<const Template*> fit = TemplatesFor(task, limits);
  if (fit.empty()) return NoTemplateRuns(task, limits, device_name);
  return fit;
}

// OK when a template runs some task of `tasks` on a device of `limits`; else the one task's refusal, or "no task of
// the run can be tuned on DEVICE (the first: ...)" for several.
Status SomeTaskRuns(const std::vector<TuneTask>& tasks, const std::string& template_name, const DeviceLimits& limits,
                    const std::string& device_name) {
  Status first;
  for (const TuneTask& tt : tasks) {
    Result<std::vector<const Template*>> t = PickTemplates(tt.task, template_name, limits, device_name);
    if (t.ok()) return Status::OK();
    if (first.ok()) first = t.status();
  }
  if (tasks.size() <= 1) return first;
  return Status::InvalidArgument("no task of the run can be tuned on " + device_name + " (the first: " +
                                 first.message() + ")");
}

bool Done(const Entry& e, uint64_t early_stopping) {
  const TaskTuner& t = *e.tuner;
  if (t.exhausted()) return true;
  // A unit none of whose trials ran counts from its first (as AutoTVM does): a template that fails every config on
  // a device was tuned on to the end of the budget.
  return early_stopping > 0 && t.trials_since_best() >= early_stopping;
}

// One TaskTuner per task and template that fits the device (a task no template fits is skipped with a warning,
// unless it is the run's only task).
Result<std::vector<Entry>> MakeEntries(const TuneOptions& opts, const DeviceLimits& limits,
                                       const std::string& device_name, int64_t session_id, int64_t device_id,
                                       TuningLog& log) {
  std::vector<Entry> entries;
  for (size_t i = 0; i < opts.tasks.size(); ++i) {
    const TuneTask& tt = opts.tasks[i];
    Result<std::vector<const Template*>> templates = PickTemplates(tt.task, opts.template_name, limits, device_name);
    if (!templates.ok()) {
      if (opts.tasks.size() == 1) return templates.status();
      spdlog::warn("skipping {}: {}", tt.task.ToSpec(), templates.status().message());
      continue;
    }
    for (const Template* tmpl : *templates) {
      TaskTunerOptions to = opts.tuner;
      to.session_id = session_id;
      to.device_id = device_id;
      to.count = tt.count;
      to.model = tt.model;
      to.strategy.seed = opts.tuner.strategy.seed + entries.size();
      Result<std::unique_ptr<TaskTuner>> tuner = TaskTuner::Create(tt.task, *tmpl, limits, to, &log);
      if (!tuner.ok()) return tuner.status().WithContext(tt.task.ToSpec() + " [" + tmpl->name() + "]");
      const uint64_t recorded = (*tuner)->trials();
      entries.push_back({i, std::move(tuner).value(), 0, recorded});
    }
  }
  return entries;
}

// How a run spends its budget: what is left of it, and how the units without a trial get their first batches.
struct BudgetPlan {
  uint64_t remaining = 0;         // trials this run may measure
  std::vector<size_t> untried;    // entries with no trial yet (and not done)
  bool fallback_round = false;    // measure each untried unit's fallback first
  bool order_by_latency = false;  // first batches by count x latency (after the round, or from a resumed log)
};

BudgetPlan PlanBudget(const std::vector<Entry>& entries, const TuneOptions& opts) {
  // Budget: the total counts what the log already holds, so a resumed run measures exactly the rest.
  uint64_t budget = opts.trials;
  uint64_t recorded = 0;
  for (const Entry& e : entries) recorded += e.tuner->trials();
  if (opts.all_trials) {
    budget = 0;
    for (const Entry& e : entries) budget += e.tuner->space().CountValid();
  }
  const uint64_t remaining = budget > recorded ? budget - recorded : 0;
  if (recorded > 0) {
    // A budget below what the log holds (--trials 60 after a run of 120) measures nothing: said, not left to guess.
    const std::string past = budget < recorded && !opts.all_trials && opts.trials > 0
                                 ? ", more than --trials " + std::to_string(budget) + " already"
                                 : "";
    spdlog::info("resume: {} trials already recorded, {} to go{} (--fresh starts over)", recorded, remaining, past);
    // Each resumed unit's line, the first kResumeLines of them: a model of 81 units printed 81.
    constexpr size_t kResumeLines = 8;
    size_t shown = 0, resumed = 0;
    for (const Entry& e : entries) {
      const TaskTuner& t = *e.tuner;
      if (t.resumed() == 0) continue;
      if (++resumed > kResumeLines) continue;
      ++shown;
      spdlog::info("{} [{}]: resuming after {} recorded trials{} (best {:.2f} GFLOPS)", t.task().ToSpec(),
                   t.tmpl().name(), t.resumed(),
                   t.resumed_repeats() == 0 ? "" : " and " + std::to_string(t.resumed_repeats()) + " repeated results",
                   t.best_gflops());
    }
    if (resumed > shown) {
      spdlog::info("... and {} more units resume from the log (tunefleet best lists them)", resumed - shown);
    }
    // Units the log already stops: said, or a resumed run that measures nothing ended without a word.
    const auto stopped = static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [&](const Entry& e) {
      return e.tuner->trials() > 0 && Done(e, opts.early_stopping);
    }));
    if (stopped > 0) {
      spdlog::info("{} of {} unit(s) already stopped early: the log holds {} or more trials without a new best "
                   "(--early-stopping {}); they measure nothing more",
                   stopped, entries.size(), opts.early_stopping, opts.early_stopping);
    }
  }
  // When the budget cannot give every untried unit a first batch, a round first measures each one's fallback config
  // (which its first batch would measure anyway), so that the first batches go to the layers that are slowest as
  // they stand (TaskScheduler), and the closing estimate covers the whole model. Not when the round would take more
  // than half the budget (there would be few first batches left to order), nor on a budget that reaches every unit.
  // There the first batches go by count x FLOPs, the heaviest first: on the main job's full budget, the round's
  // order was lower in only 7 of 24 seeds (bench/results/h200-pocl-2026-12-01-fallback-round.md).
  BudgetPlan plan;
  plan.remaining = remaining;
  std::vector<size_t>& untried = plan.untried;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].tuner->trials() == 0 && !Done(entries[i], opts.early_stopping)) untried.push_back(i);
  const bool short_budget = !opts.all_trials && remaining < untried.size() * opts.batch_size;
  const bool fallback_round = untried.size() > 1 && short_budget && 2 * untried.size() <= remaining;
  plan.fallback_round = fallback_round;
  // A resumed run whose log already says how fast every unit runs (its fallback or a best) orders its first batches
  // by those latencies, as after the round: the round it would need was measured by the run it resumes.
  const bool latencies_logged =
      recorded > 0 && std::all_of(entries.begin(), entries.end(), [](const Entry& e) {
        return e.tuner->fallback_recorded() || e.tuner->has_best();
      });
  plan.order_by_latency = fallback_round || latencies_logged;
  // A model's many units share one budget: say so at once when it cannot give each untried unit a first batch,
  // rather than leave the user to find most of the model untuned at the end.
  if (untried.size() > 1 && short_budget) {
    // With the round, a first batch after it costs batch - 1 more trials.
    const uint64_t left = fallback_round ? remaining - untried.size() : remaining;
    const uint64_t per_batch = fallback_round && opts.batch_size > 1 ? opts.batch_size - 1 : opts.batch_size;
    spdlog::warn("--trials {} leaves {} trials for {} task/template units without a trial: {}about {} of them "
                 "will get a first batch of {}, the {}; --trials {} gives each one batch, "
                 "--time-budget S alone tunes until S seconds", budget, remaining, untried.size(),
                 fallback_round ? "after a round that measures each one's fallback config, " : "",
                 (left + per_batch - 1) / per_batch, opts.batch_size,
                 fallback_round ? "slowest first (count x the task's latency so far)"
                                : "heaviest first (count x FLOPs)",
                 recorded + untried.size() * opts.batch_size);
  }
  return plan;
}

TunedTask Summarize(const TaskTuner& t) {
  TunedTask out;
  out.spec = t.task().ToSpec();
  out.template_name = t.tmpl().name();
  out.count = t.count();
  out.trials = t.trials();
  out.tuning_trials = t.tuning_trials();
  out.exhausted = t.exhausted();
  out.best_cost = t.best_cost();
  out.best_gflops = t.best_gflops();
  out.fallback_cost = t.fallback_cost();
  if (t.has_best()) out.best_config = t.space().ToJson(t.space().FromIndex(t.best_index())).dump();
  return out;
}

// The device models a run leases. The log's units are (task, template, device model): two runs through two keys of
// one device model would tune the same ones. So every device model the run leases is locked too, held until the run
// ends, and each records under its own row of the log: the first lease's, and a lease taken again after the devices
// were lost, which can hold another model of the key (its results must not be filed under the first model).
class RunDevices {
 public:
  RunDevices(const TuneOptions& opts, const std::vector<std::string>& specs, DeferredLog& log)
      : opts_(opts), specs_(specs), log_(log) {}

  // Locks and records each new device model of a lease (MeasureSession's on_lease); the first lease creates a new
  // log, unless its first device can run none of the run's tasks (FailedPrecondition, before anything is written).
  Status Adopt(const std::vector<proto::LeasedDevice>& leased) {
    for (const auto& d : leased) {
      const std::string& fp = d.device().fingerprint();
      if (ids_.count(fp)) continue;
      if (ids_.empty()) {
        const Status runs = SomeTaskRuns(opts_.tasks, opts_.template_name, DeviceLimits::From(d.device()),
                                         d.device().name());
        if (!runs.ok()) return refused_ = Status::FailedPrecondition(runs.message());
      }
      Result<LogRunLock> lock =
          LogRunLock::Acquire(opts_.db, RunLockScope::Device(fp, d.device().name()), specs_, opts_.session.client);
      if (!lock.ok()) return refused_ = lock.status();
      Result<TuningLog*> log = log_.Get();
      if (!log.ok()) return refused_ = log.status();
      Result<int64_t> id = (*log)->UpsertDevice(d.device());
      if (!id.ok()) return refused_ = id.status();
      locks_.push_back(std::move(lock).value());
      if (ids_.empty()) {
        first_model_ = d.device().name();
      } else {
        spdlog::warn("device '{}' (fingerprint {}) of the lease is another model than '{}', the run's first: its "
                     "results are recorded under its own model, and the search, bound by the first one's limits, "
                     "learns from both",
                     Printable(d.device().name()), Printable(fp, 64), Printable(first_model_));
      }
      ids_[fp] = *id;
    }
    return Status::OK();
  }
  // The log's device row of a fingerprint; `otherwise` for one never adopted.
  int64_t IdOf(const std::string& fingerprint, int64_t otherwise) const {
    auto it = ids_.find(fingerprint);
    return it == ids_.end() ? otherwise : it->second;
  }
  // Why Adopt refused a lease: the run's error, even when a stop came meanwhile. OK when none was refused.
  const Status& refused() const { return refused_; }

 private:

  const TuneOptions& opts_;
  const std::vector<std::string>& specs_;
  DeferredLog& log_;
  std::vector<LogRunLock> locks_;
  std::map<std::string, int64_t> ids_;  // fingerprint -> the log's device row
  std::string first_model_;             // the name of the first lease's first device
  Status refused_;
};

}  // namespace

Status NoTemplateRuns(const Task& task, const DeviceLimits& limits, const std::string& device_name) {
  // Say why the templates that could run this task on a fully capable device refused it here (fp16, images,
  // limits); when none could, why the templates of its op refuse the task itself (its shape). Templates of other
  // ops have nothing useful to say.
  DeviceLimits capable = limits;
  capable.fp16 = capable.image_support = true;
  capable.image2d_max_width = capable.image2d_max_height = uint64_t{1} << 20;
  bool some_capable = false;
  for (const auto& t : AllTemplates()) some_capable = some_capable || t->Supports(task, capable, nullptr);
  std::string why;
  for (const auto& t : AllTemplates()) {
    std::string w;
    if (!t->RunsOp(task.op) || (some_capable && !t->Supports(task, capable, nullptr)) ||
        t->Supports(task, limits, &w) || w.empty())
      continue;
    // A shape check names the task first ("SPEC: the kernel is ..."): the line names it once, before the reasons.
    if (const std::string spec = task.ToSpec() + ": "; w.rfind(spec, 0) == 0) w.erase(0, spec.size());
    if (why.find(w) != std::string::npos) continue;
    why += (why.empty() ? "" : "; ") + t->name() + ": " + w;
  }
  return Status::InvalidArgument("no template can run " + task.ToSpec() + " on " + device_name +
                                 (why.empty() ? "" : " (" + why + ")"));
}

Status CheckSomeDeviceRuns(const std::vector<TuneTask>& tasks, const std::string& template_name) {
  return SomeTaskRuns(tasks, template_name, DeviceLimits::Unbounded(), "any device");
}

Result<TuneSummary> RunTune(const TuneOptions& opts, DeferredLog& run_log) {
  if (opts.tasks.empty()) return Status::InvalidArgument("nothing to tune: give --task SPEC or a model file");
  // Another process's lock on the log (a sqlite3 shell, a VACUUM): waited for 30 s until the session begins, then
  // without end; a stop ends the wait within 3 s (LogLockWait). Set before the first write (the lease's devices).
  LogLockWait lock_wait(opts.db, opts.stop);
  run_log.SetLockWait(
      [&lock_wait](double waited) { return lock_wait.KeepWaiting(waited, LogLockWait::Clock::now()); });
  struct LockWaitReset {
    DeferredLog& log;
    ~LockWaitReset() { log.SetLockWait(nullptr); }
  } lock_wait_reset{run_log};
  // One tune per task and device of a log: the same command run twice would measure every trial twice
  // (tuner/log_run_lock.h). The tasks are locked on the key first, before the tracker is asked, so that such a run
  // is refused at once rather than after waiting for the device the first one holds.
  std::vector<std::string> specs;
  for (const TuneTask& tt : opts.tasks) specs.push_back(tt.task.ToSpec());
  TF_ASSIGN_OR_RETURN(LogRunLock key_lock,
                      LogRunLock::Acquire(opts.db, RunLockScope::Key(opts.session.key), specs, opts.session.client));
  RunDevices devices(opts, specs, run_log);
  // The session stops on a stop request and when the time budget runs out mid-batch (see below).
  std::stop_source session_stop;
  std::stop_callback forward_stop(opts.stop, [&session_stop] { session_stop.request_stop(); });
  SessionOptions session_options = opts.session;
  session_options.stop = session_stop.get_token();
  session_options.on_lease = [&devices](const std::vector<proto::LeasedDevice>& leased) {
    return devices.Adopt(leased);
  };
  TF_ASSIGN_OR_RETURN(std::unique_ptr<MeasureSession> session, MeasureSession::Open(session_options));

  // The first lease's first device: its limits bound the search spaces.
  const proto::DeviceInfo device = session->devices().front().device();
  DeviceLimits limits = DeviceLimits::From(device);
  const int64_t device_id = devices.IdOf(device.fingerprint(), 0);
  if (device_id == 0) return Status::Internal("the first device of the lease was not entered in the log");
  TF_ASSIGN_OR_RETURN(TuningLog * opened, run_log.Get());  // open since the first lease (RunDevices::Adopt)
  TuningLog& log = *opened;
  // Ends as 'failed' on every error return below; its lock tells later runs that this one still lives.
  TF_ASSIGN_OR_RETURN(RunSession run_session, RunSession::Begin(log, opts.args_json, opts.session.client));
  const int64_t session_id = run_session.id();
  lock_wait.Unbound();  // from here a record waits as long as the lock is held, rather than drop its results
  spdlog::info("tuning on {} device(s) of key '{}': {} ({}), log {}", session->devices().size(), opts.session.key,
               Printable(device.name()), Printable(device.driver_version()), opts.db);

  TF_ASSIGN_OR_RETURN(std::vector<Entry> entries, MakeEntries(opts, limits, device.name(), session_id, device_id, log));
  if (entries.empty()) return Status::InvalidArgument("no task of the run can be tuned on " + device.name());

  const BudgetPlan plan = PlanBudget(entries, opts);
  uint64_t remaining = plan.remaining;
  const std::vector<size_t>& untried = plan.untried;
  const bool fallback_round = plan.fallback_round;
  const bool order_by_latency = plan.order_by_latency;

  TuneSummary summary;
  Progress progress(remaining, opts.time_budget);
  TaskScheduler scheduler(opts.batch_size);
  auto start = std::chrono::steady_clock::now();
  // --time-budget is a wall-clock limit: when it runs out while a batch is out, the jobs still out are abandoned
  // as on a stop signal (the results that arrived are recorded; the rest are left for the next run), but the run
  // ends as done, not interrupted. A slow build (up to the job timeout) cannot stretch the run.
  std::atomic<bool> budget_spent{false};
  std::jthread budget_timer;
  if (opts.time_budget > 0) {
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(opts.time_budget));
    budget_timer = std::jthread([deadline, &budget_spent, &session_stop](std::stop_token done) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_until(lock, done, deadline, [] { return false; });
      if (done.stop_requested()) return;
      budget_spent = true;
      session_stop.request_stop();
    });
  }

  // Measures `jobs` (each with the unit it belongs to) on the fleet and records each result as it arrives.
  // A stop or the time budget's deadline ends it with what arrived recorded (summary.interrupted says which);
  // any other failure is the run's.
  bool cut = false;  // a stop or the deadline ended a measurement
  const Entry* last_recorded = nullptr;  // the unit of the result recorded last
  struct UnitJob {
    Entry* entry;
    CandidateJob job;
    bool repeat = false;  // a confirmation (--confirm): no trial
  };
  auto measure = [&](const std::vector<UnitJob>& jobs, const std::function<std::string(const Entry&)>& label,
                     Progress& shown) {
    std::vector<const proto::KernelProgram*> programs;
    for (const auto& j : jobs) programs.push_back(&j.job.program);
    if (programs.empty()) return Status::OK();
    Status st = session->Measure(programs, [&](size_t i, const proto::MeasureResult& r, const std::string& fp) {
      // Every device of every lease was adopted; a result without a known device (none) goes to the first.
      const int64_t dev = devices.IdOf(fp, device_id);
      TaskTuner& tuner = *jobs[i].entry->tuner;
      TF_RETURN_IF_ERROR(tuner.Record(jobs[i].job.index, r, dev, jobs[i].repeat));
      last_recorded = jobs[i].entry;
      shown.Trial();
      shown.Show(label(*jobs[i].entry), tuner.last_gflops(), tuner.best_gflops(), "", false);
      return Status::OK();
    });
    if (st.ok() || !session->interrupted() || !devices.refused().ok()) return st;
    // What arrived before the stop (a signal, or the budget's deadline) is recorded; the rest of the batch is
    // left for the next run.
    cut = true;
    summary.interrupted = opts.stop.stop_requested();
    if (summary.interrupted && lock_wait.gave_up()) {
      summary.lock_gave_up = true;
      spdlog::warn("{} stayed locked by another process after the stop: the results that arrived since the lock was "
                   "taken are not recorded (a later run measures those configs again)",
                   opts.db);
    } else if (summary.interrupted) {
      spdlog::info("{}", st.message());
    } else {
      spdlog::info("time budget of {} reached: {}", FormatGivenDuration(opts.time_budget), st.message());
    }
    return Status::OK();
  };
  auto unit_label = [&](const Entry& e) {
    return "task " + std::to_string(e.task_index + 1) + "/" + std::to_string(opts.tasks.size()) + " " +
           e.tuner->task().ToSpec() + " [" + e.tuner->tmpl().name() + "]";
  };
  auto fail = [&](Status st) {
    progress.Finish();
    (void)run_session.End("failed");
    return st;
  };

  if (fallback_round) {
    spdlog::info("measuring the fallback config of {} units first, to give the slowest layers their first "
                 "batches first", untried.size());
    std::vector<UnitJob> jobs;
    for (size_t i : untried) {
      Entry& e = entries[i];
      const uint64_t before = e.tuner->trials();
      TF_ASSIGN_OR_RETURN(std::vector<CandidateJob> fallback, e.tuner->ProposeFallback());
      for (uint64_t k = before; k < e.tuner->trials(); ++k) progress.Trial();  // generation failed
      for (CandidateJob& j : fallback) jobs.push_back({&e, std::move(j)});
    }
    Status st = measure(jobs, [&](const Entry& e) { return "fallback round, " + unit_label(e); }, progress);
    if (!st.ok()) return fail(st);
    // The round's trials (generation failures included; the units had none before it) count against the budget
    // and as part of each unit's first batch, which the scheduler still gives every one of them.
    uint64_t spent = 0;
    for (size_t i : untried) {
      entries[i].round_trials = entries[i].tuner->trials();
      spent += entries[i].round_trials;
    }
    remaining = remaining > spent ? remaining - spent : 0;
  }

  while (remaining > 0 && !cut) {
    if (opts.stop.stop_requested()) {
      summary.interrupted = true;
      break;
    }
    if (budget_spent) {
      spdlog::info("time budget of {} reached", FormatGivenDuration(opts.time_budget));
      break;
    }
    // Fallback latencies order the first batches only once every unit's is known (the round, or the log of a
    // resumed run); otherwise count x FLOPs.
    std::vector<TaskProgress> view;
    for (const Entry& e : entries)
      view.push_back({e.tuner->count(), e.tuner->best_cost(), e.trials_before_run + e.trials_this_run,
                      Done(e, opts.early_stopping), e.tuner->curve(), static_cast<int>(e.task_index), e.tuner->flops(),
                      order_by_latency ? e.tuner->fallback_cost() : 0});
    int pick = scheduler.Next(view);
    if (pick < 0) break;
    Entry& e = entries[pick];
    TaskTuner& tuner = *e.tuner;
    uint64_t before = tuner.trials();
    const bool was_exhausted = tuner.exhausted();
    // A first batch whose fallback the round measured is one trial shorter: the round reorders work, it adds none.
    const uint64_t credit = e.trials_this_run == 0 ? e.round_trials : 0;
    const uint64_t size = opts.batch_size > credit ? opts.batch_size - credit : 1;
    TF_ASSIGN_OR_RETURN(std::vector<CandidateJob> proposed, tuner.Propose(std::min<uint64_t>(size, remaining)));
    if (tuner.exhausted() && !was_exhausted) {  // a space smaller than the budget: said once, when found
      spdlog::info("{}: every config of its space is measured ({} configs)", unit_label(e),
                   tuner.trials() + proposed.size());
    }
    uint64_t generation_failures = tuner.trials() - before;
    for (uint64_t k = 0; k < generation_failures; ++k) progress.Trial();
    std::vector<UnitJob> jobs;
    for (CandidateJob& j : proposed) jobs.push_back({&e, std::move(j)});
    Status st = measure(jobs, unit_label, progress);
    if (!st.ok()) return fail(st);
    uint64_t measured = tuner.trials() - before;
    e.trials_this_run += std::max<uint64_t>(measured, 1) + credit;
    remaining = remaining > measured ? remaining - measured : 0;
    progress.Show(unit_label(e), tuner.last_gflops(), tuner.best_gflops(), tuner.strategy_status(), true);
    if (!tuner.exhausted() && Done(e, opts.early_stopping))  // said once: the scheduler does not pick it again
      spdlog::info("{}: {} trials without a new best{}: stopped early (--early-stopping {})", unit_label(e),
                   tuner.trials_since_best(), tuner.has_best() ? "" : ", none of them ran", opts.early_stopping);
    if (cut || budget_spent) break;
    if (tuner.exhausted() && measured == 0) continue;
  }
  progress.Finish();
  // One round of --confirm's repeats, in batches of --batch as the trials were (one call for every unit's repeats
  // could pass the message limit), with a progress line per batch naming the unit of its last result.
  auto confirm = [&](const std::vector<UnitJob>& jobs) {
    Progress confirming(jobs.size());
    confirming.SetNoun("repeat");
    for (size_t at = 0; at < jobs.size() && !cut; at += opts.batch_size) {
      const std::vector<UnitJob> batch(jobs.begin() + static_cast<std::ptrdiff_t>(at),
                                       jobs.begin() + static_cast<std::ptrdiff_t>(
                                                          std::min(jobs.size(), at + opts.batch_size)));
      auto label = [&](const Entry& e) { return "confirming, " + unit_label(e); };
      last_recorded = nullptr;  // the line below names this batch's last result, or none
      Status st = measure(batch, label, confirming);
      if (!st.ok()) {
        confirming.Finish();
        return fail(st);
      }
      if (last_recorded != nullptr) {
        confirming.Show(label(*last_recorded), last_recorded->tuner->last_gflops(),
                        last_recorded->tuner->best_gflops(), "", true);
      }
    }
    confirming.Finish();
    return Status::OK();
  };
  if (opts.confirm > 0 && budget_spent) {
    spdlog::warn("--confirm {}: not done, the time budget was spent (the best configs keep their one result)",
                 opts.confirm);
  } else if (opts.confirm > 0 && !cut && !summary.interrupted) {
    // Rounds: the first tops up each unit's N best; a later one only where a config with one result moved to the
    // top as the confirmed ones' medians rose (its one result may be the lucky one the round is there to catch). A
    // unit whose best is confirmed already is done in every round, the first included: the same command run again
    // after a run that ended 'done' measured more (a config of one result had moved into the N best, behind it).
    std::set<const Entry*> confirmed;  // units with configs to confirm
    size_t rounds = 0;
    for (size_t round = 0; round < kConfirmRounds && !cut && !opts.stop.stop_requested(); ++round) {
      std::vector<UnitJob> jobs;
      size_t units = 0;
      for (Entry& e : entries) {
        if (e.tuner->best_results() >= 1 + kConfirmRepeats) continue;
        Result<std::vector<CandidateJob>> again = e.tuner->ProposeRepeats(opts.confirm, kConfirmRepeats);
        if (!again.ok()) {  // the template can no longer generate a config that ran: its unit is not confirmed
          spdlog::warn("{}: not confirmed: {}", unit_label(e), again.status().message());
          continue;
        }
        if (!again->empty()) {
          ++units;
          confirmed.insert(&e);
        }
        for (CandidateJob& j : *again) jobs.push_back({&e, std::move(j), true});
      }
      if (jobs.empty()) {
        // Said, not silent: the guide says the log tells what --confirm did.
        if (round == 0) {
          spdlog::info("--confirm {}: nothing to confirm: no unit has two successful configs, or their best are "
                       "confirmed already",
                       opts.confirm);
        }
        break;
      }
      if (round == 0) {
        // A unit of fewer than two successful configs has nothing to choose between; one whose best have three
        // results each (a resumed run) is confirmed already.
        const std::string others = units == entries.size() ? ""
                                   : "; the other units have fewer than two successful configs or are confirmed "
                                     "already";
        spdlog::info("--confirm {}: measuring up to the {} best configs of {} of {} unit(s) {} more times ({} "
                     "jobs{}); a config's best is then the median of its results", opts.confirm, opts.confirm, units,
                     entries.size(), kConfirmRepeats, jobs.size(), others);
      } else {
        spdlog::info("--confirm {}: in {} unit(s) a config measured once is now the best: measuring up to the {} "
                     "best again ({} jobs)", opts.confirm, units, opts.confirm, jobs.size());
      }
      TF_RETURN_IF_ERROR(confirm(jobs));
      ++rounds;
    }
    for (const Entry* e : confirmed)
      if (e->tuner->best_results() < 1 + kConfirmRepeats && !cut && !opts.stop.stop_requested())
        spdlog::warn("{}: the best config has {} successful result(s) after {} round(s) of --confirm",
                     unit_label(*e), e->tuner->best_results(), rounds);
  }
  // Free the devices before the bookkeeping below, so that a stopped run hands them on at once.
  session->Release();
  Status ended = run_session.End(summary.interrupted ? "interrupted" : "done");
  if (!ended.ok() && lock_wait.gave_up()) {
    spdlog::warn("{} stayed locked by another process: the run's session stays 'running' in it (the next run on the "
                 "log marks it 'killed')",
                 opts.db);
    summary.lock_gave_up = true;
  } else {
    TF_RETURN_IF_ERROR(ended);
  }

  for (const Entry& e : entries) summary.tasks.push_back(Summarize(*e.tuner));
  return summary;
}

}  // namespace tunefleet
