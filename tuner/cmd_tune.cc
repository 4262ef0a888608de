// `tunefleet tune`: tune explicit tasks (--task) or every task of an ONNX model, through the tracker.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/cli_checks.h"
#include "common/pem_check.h"
#include "common/seconds.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/command.h"
#include "tuner/deferred_log.h"
#include "tuner/model_tasks.h"
#include "tuner/task_file.h"
#include "tuner/onnx_import.h"
#include "tuner/run_session.h"
#include "tuner/stop_signals.h"
#include "tuner/strategy.h"
#include "tuner/trial_budget.h"
#include "tuner/tune_run.h"

namespace tunefleet {
namespace {

struct TuneArgs {
  std::string model;
  std::vector<std::string> task_specs;
  std::string task_file;  // "-": standard input
  std::string tracker = "127.0.0.1:9190";
  std::string key;
  std::string token;
  std::string tls_ca;  // PEM roots: connect to the tracker with TLS
  std::string db = "tunefleet.db";
  std::string template_name;
  std::string trials;  // empty: see ParseTrialBudget
  double time_budget = 0;
  std::string tuner = "xgb";
  std::string xgb_objective = StrategyOptions{}.xgb_objective;
  size_t xgb_prior_pool = StrategyOptions{}.prior_pool;
  uint32_t number = 4, repeat = 3, min_repeat_ms = 0;
  double timeout = 20;
  uint64_t early_stopping = 0;
  size_t confirm = 0;
  double wait = 60, device_wait = 300;
  uint32_t devices = 1;
  int32_t priority = 0;
  size_t batch = 16;
  uint64_t seed = 1;
  bool fresh = false, no_transfer = false, transfer_once = false;
  std::string precision;  // empty: float32 (empty, so that giving it with --task alone can be refused)
  std::string mixed_ops;  // empty: conv2d,dense
  std::vector<std::string> input_shapes;
};

Result<std::vector<TuneTask>> CollectTasks(const TuneArgs& a) {
  std::vector<TuneTask> tasks;
  if (a.model.empty() && (!a.precision.empty() || !a.mixed_ops.empty())) {
    return Status::InvalidArgument("--precision and --mixed-precision-ops apply to a model's tasks; a --task spec "
                                   "names its own type (e.g. gemm:256,256,256:float16)");
  }
  if (a.model.empty() && !a.input_shapes.empty()) {
    return Status::InvalidArgument("--input-shape gives a model input's shape; a --task spec names its own sizes");
  }
  TF_ASSIGN_OR_RETURN(Precision precision, ParsePrecision(a.precision.empty() ? "float32" : a.precision));
  // As `tasks` says it: the op list first, then whether anything is lowered (fp32 and f32 are float32 too).
  TF_ASSIGN_OR_RETURN(std::set<std::string> mixed_ops,
                      ParseMixedPrecisionOps(a.mixed_ops.empty() ? "conv2d,dense" : a.mixed_ops));
  if (!a.mixed_ops.empty() && precision == Precision::kFloat32) {
    return Status::InvalidArgument(kMixedOpsWithoutPrecision);
  }
  for (const std::string& spec : a.task_specs) {
    TF_ASSIGN_OR_RETURN(Task t, Task::Parse(spec));
    tasks.push_back({t, 1, ""});
  }
  if (!a.task_file.empty()) {
    TF_ASSIGN_OR_RETURN(std::vector<ListedTask> listed, ReadTaskFile(a.task_file));
    // Recorded in the log under the file's name as a model's counts are under the model's, so that a run with an
    // edited count updates it (and the report counts the list as a model of its own).
    const std::string source =
        a.task_file == "-" ? std::string("standard input") : std::filesystem::path(a.task_file).filename().string();
    for (ListedTask& t : listed) tasks.push_back({std::move(t.task), t.count, source});
  }
  if (!a.model.empty()) {
    ImportOptions import;
    TF_ASSIGN_OR_RETURN(import.input_shapes, ParseInputShapes(a.input_shapes));
    TaskListOptions options;
    options.precision.precision = precision;
    options.precision.ops = mixed_ops;
    TF_ASSIGN_OR_RETURN(ImportedModel model, ImportOnnxFile(a.model, import));
    const std::string model_name = std::filesystem::path(a.model).filename().string();
    for (const ModelTask& mt : BuildModelTasks(model, options)) tasks.push_back({mt.task, mt.count, model_name});
  }
  if (tasks.empty())
    return Status::InvalidArgument("nothing to tune: give --task SPEC, --task-file FILE or a model file");
  // A task named twice (`gemm:8,8,8` and `gemm:8,8,8:float32`, or a --task that is also a layer of the model) is
  // one unit of the log: tuned once, with the larger of its counts.
  std::vector<TuneTask> unique;
  std::map<std::string, size_t> seen;
  for (const TuneTask& tt : tasks) {
    const std::string spec = tt.task.ToSpec();
    if (auto it = seen.find(spec); it != seen.end()) {
      spdlog::warn("task {} is named more than once: tuned once", spec);
      unique[it->second].count = std::max(unique[it->second].count, tt.count);
      if (!tt.model.empty()) unique[it->second].model = tt.model;
      continue;
    }
    seen[spec] = unique.size();
    unique.push_back(tt);
  }
  return unique;
}

int RunTuneCommand(const TuneArgs& a) {
  if (a.key.empty()) return CommandError("tune", "--rpc-key is required", 2);
  // Read now, as `query` reads it: a file that holds no certificate is bad input, said before the log is opened.
  if (!a.tls_ca.empty()) {
    if (Result<std::string> pem = ReadPemCertificates(a.tls_ca); !pem.ok())
      return CommandError("tune", pem.status().message(), 2);
  }
  Result<std::vector<TuneTask>> tasks = CollectTasks(a);
  if (!tasks.ok()) {  // bad input, but for a task file that could not be read (an I/O error)
    const bool unavailable = tasks.status().code() == Status::Code::kUnavailable;
    return CommandError("tune", tasks.status().message(), unavailable ? 1 : 2);
  }
  if (!a.template_name.empty()) {
    if (auto t = LookUpTemplate(a.template_name); !t.ok()) return CommandError("tune", t.status().message(), 2);
  }

  TuneOptions o;
  o.tasks = std::move(tasks).value();
  o.session.tracker = a.tracker;
  o.session.key = a.key;
  o.session.token = a.token;
  o.session.tls_ca_file = a.tls_ca;
  o.session.devices = a.devices;
  o.session.priority = a.priority;
  o.session.wait = a.wait;
  o.session.device_wait = a.device_wait;
  o.session.client = RunHolder("tune");
  o.db = a.db;
  o.session.lease_note = a.db;
  o.template_name = a.template_name;
  Result<TrialBudget> trials = ParseTrialBudget(a.trials, a.time_budget);
  if (!trials.ok()) return CommandError("tune", trials.status().message(), 2);
  o.trials = trials->trials;
  o.all_trials = trials->all;
  o.time_budget = a.time_budget;
  o.early_stopping = a.early_stopping;
  o.confirm = a.confirm;
  o.batch_size = a.batch;
  o.tuner.strategy.name = a.tuner;
  o.tuner.strategy.seed = a.seed;
  o.tuner.strategy.xgb_objective = a.xgb_objective;
  o.tuner.strategy.prior_pool = a.xgb_prior_pool;
  o.tuner.measure.number = a.number;
  o.tuner.measure.repeat = a.repeat;
  o.tuner.measure.min_repeat_ms = a.min_repeat_ms;
  o.tuner.measure.timeout_ms = static_cast<uint32_t>(a.timeout * 1000);
  o.tuner.fresh = a.fresh;
  o.tuner.transfer = !a.no_transfer;
  o.tuner.transfer_refresh = !a.transfer_once;
  const std::string trials_text = o.all_trials ? std::string("all") : std::to_string(o.trials);
  o.args_json = nlohmann::json{{"model", a.model}, {"tasks", a.task_specs}, {"task_file", a.task_file},
                                {"tracker", a.tracker},
                                {"key", a.key}, {"template", a.template_name}, {"trials", trials_text},
                                {"tuner", a.tuner}, {"xgb_objective", a.xgb_objective},
                                {"xgb_prior_pool", a.xgb_prior_pool}, {"number", a.number},
                                {"repeat", a.repeat}, {"min_repeat_ms", a.min_repeat_ms}, {"timeout", a.timeout},
                                {"seed", a.seed}, {"fresh", a.fresh}, {"confirm", a.confirm},
                                // The rest of what shapes a run (a log read later says why it stopped, what it
                                // tuned and how); only the token and the TLS roots are left out.
                                {"time_budget", a.time_budget}, {"early_stopping", a.early_stopping},
                                {"batch", a.batch}, {"devices", a.devices}, {"priority", a.priority},
                                {"wait", a.wait}, {"device_wait", a.device_wait}, {"input_shapes", a.input_shapes},
                                {"mixed_precision_ops", a.mixed_ops}, {"no_transfer", a.no_transfer},
                                {"transfer_once", a.transfer_once},
                                {"precision", a.precision.empty() ? "float32" : a.precision}}
                     .dump();
  // A template that cannot run a task on any device is bad input, said before the tracker is asked.
  if (Status fit = CheckSomeDeviceRuns(o.tasks, o.template_name); !fit.ok())
    return CommandError("tune", fit.message(), 2);
  // SIGINT/SIGTERM stop the run promptly: the batch in flight is abandoned, what it already returned is kept,
  // the lease is released, exit 130 (see StopOnSignals for repeats). Set up before the tracker is first asked, and
  // so before any gRPC or RunTune thread starts.
  StopOnSignals signals;
  o.stop = signals.token();
  // A log that exists is opened now (a bad one is said before the tracker is asked); a new one is created once the
  // tracker has leased a device, so that a run it refuses, or one stopped before, leaves no new, empty log.
  Result<DeferredLog> log = DeferredLog::Open(a.db);
  if (!log.ok()) return CommandError("tune", log.status().message(), LogOpenExitCode(log.status()));
  if (TuningLog* existing = log->IfOpen(); existing != nullptr) WarnDamagedRecords("tune", *existing);
  Result<TuneSummary> summary = RunTune(o, *log);
  signals.Finish();  // the run's end is said below whatever arrives now
  auto interrupted_line = [&] {
    if (log->IfOpen() == nullptr) {
      std::cerr << "tunefleet tune: interrupted by " << signals.signal_name()
                << " before the tracker leased a device; nothing was recorded\n";
      return;
    }
    if (summary.ok() && summary->lock_gave_up) {
      std::cerr << "tunefleet tune: interrupted by " << signals.signal_name() << "; " << a.db
                << " stayed locked by another process, so the results since it was locked are not in it, those "
                   "before are (run the same command again to resume)\n";
      return;
    }
    std::cerr << "tunefleet tune: interrupted by " << signals.signal_name() << "; every result so far is in "
              << a.db << " (run the same command again to resume)\n";
  };
  if (!summary.ok() && signals.stop_requested()) {
    interrupted_line();
    return 130;
  }
  // 2: the leased device can run none of the tasks (as `measure` says it), found before the log was written.
  if (!summary.ok()) {
    // A disk error on the log (full, a file-size limit) ends the run: what it recorded before stays, which the
    // line said nowhere ("database or disk is full").
    const bool log_failed = summary.status().code() == Status::Code::kIOError && log->IfOpen() != nullptr;
    return CommandError("tune",
                        summary.status().message() +
                            (log_failed ? "; every record written before is kept in " + a.db +
                                              ": run the same command again to resume once the cause is fixed"
                                        : ""),
                        summary.status().code() == Status::Code::kFailedPrecondition ? 2 : 1);
  }
  std::cout << FormatTuneSummary(*summary) << FormatBestLines(*summary);
  if (summary->interrupted) {
    interrupted_line();
    return 130;
  }
  // A run whose every trial failed (a timeout too short, a driver that fails every kernel) is no tuning: a script
  // must be able to tell it from one that found kernels. Its records are kept.
  uint64_t recorded = 0;
  bool any_success = false;
  for (const TunedTask& t : summary->tasks) {
    recorded += t.trials;
    any_success = any_success || t.best_cost > 0;
  }
  if (recorded > 0 && !any_success) {
    return CommandError("tune", "no trial succeeded: none of the " + std::to_string(recorded) +
                                    " recorded trial(s) of the run's tasks (their failures are in " + a.db +
                                    ": tunefleet report, or export --format csv, shows the messages)",
                        1);
  }
  return 0;
}

}  // namespace

void RegisterTune(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<TuneArgs>();
  auto* sub = app.add_subcommand("tune", "Tune tasks (--task) or a whole ONNX model on the devices of a key");
  sub->add_option("model", a->model, "ONNX model file (optional when --task or --task-file is given)")
      ->check(cli::NotEmpty());
  sub->add_option("--task", a->task_specs,
                  "Task spec, repeatable: gemm:M,N,K[:dtype], conv2d:N,C,H,W,K,KH,KW,stride,pad[:dtype], "
                  "dwconv2d:N,C,H,W,KH,KW,stride,pad[:dtype], ...")
      ->check(cli::NotEmpty())
      // One value each time, repeatable. A vector option otherwise takes every following word, the model path
      // included (`tasks --input-shape` is held the same way).
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  sub->add_option("--task-file", a->task_file,
                  "File of tasks, one 'SPEC [COUNT]' per line (# comments; COUNT weights the task as a model "
                  "layer's occurrences do; '-': standard input), as `tunefleet tasks MODEL --specs` writes them")
      ->check(cli::NotEmpty());
  sub->add_option("--rpc-tracker", a->tracker, "Tracker address host:port (default 127.0.0.1:9190)")
      ->check(cli::HostPort());
  sub->add_option("--rpc-key", a->key, "Device key to lease devices of")->required()->check(cli::DeviceKey());
  sub->add_option("--token", a->token, "Shared token of the tracker")
      ->envname("TUNEFLEET_TOKEN")
      ->check(cli::NotEmpty());
  sub->add_option("--tls-ca", a->tls_ca, "PEM root certificates: connect to the tracker with TLS")
      ->check(CLI::ExistingFile);
  sub->add_option("--db", a->db, "SQLite tuning log (created when missing; default tunefleet.db)");
  sub->add_option("--template", a->template_name, "Force one template (default: every template that fits)")
      ->check(cli::NotEmpty());
  sub->add_option("--trials", a->trials,
                  "Total trials over all tasks, recorded ones included (default 200), or 'all': every valid config "
                  "of each space (with --tuner grid, a whole space recorded for simulate)")
      ->check(cli::NotEmpty());
  sub->add_option("--time-budget", a->time_budget,
                  "Stop after this many seconds; without --trials, tune until then (or until every config is measured)")
      ->check(cli::PositiveAtMost(kOneYearSeconds));  // 1e300 overflowed the clock (ETA -9223372036854775808s)
  sub->add_option("--tuner", a->tuner, "xgb | ga | random | grid (default xgb)")
      ->check(CLI::IsMember(StrategyNames()));
  sub->add_option("--xgb-objective", a->xgb_objective,
                  "xgb: auto (rank:ndcg on a task's own results; rank:pairwise and rank:ndcg members while other "
                  "tasks' history warm-starts it), rank, ndcg or reg (default auto)")
      ->check(CLI::IsMember({"auto", "rank", "ndcg", "reg"}));
  sub->add_option("--xgb-prior-pool", a->xgb_prior_pool,
                  "xgb without history: the first plan is the plan-size configs that the device prior "
                  "(work-items against what the device runs at once) ranks best of N x plan-size random ones, and "
                  "every model starts from the prior (its base margin); 0 or 1 = a random first plan and models of "
                  "the results alone, as GEMM always has (default 4)")
      ->check(cli::WholeBetween(0, kMaxPriorPool));
  sub->add_option("--number", a->number, "Runs averaged into one cost (default 4)")
      ->check(cli::Positive())
      ->check(cli::Whole<uint32_t>());
  sub->add_option("--repeat", a->repeat, "Costs measured per config (default 3)")
      ->check(cli::Positive())
      ->check(cli::Whole<uint32_t>());
  sub->add_option("--min-repeat-ms", a->min_repeat_ms, "Grow --number until one repeat lasts this long")
      ->check(cli::Whole<uint32_t>());
  sub->add_option("--timeout", a->timeout, "Seconds a job may take on the agent (build + run; default 20)")
      ->check(cli::Between(0.001, 4294967, "whole milliseconds, at least 1"));
  sub->add_option("--early-stopping", a->early_stopping,
                  "Stop a task after N trials without a new best (after its first N when none of them ran); 0, the "
                  "default: never, each task runs its --trials")
      ->check(cli::Whole<uint64_t>());
  sub->add_option("--confirm", a->confirm,
                  "After tuning, measure each task's N best configs twice more (beyond --trials) and take a config's "
                  "median as its cost, so that a lucky run does not pick the kernel; for noisy devices (a phone "
                  "that throttles, a CPU); 0, the default: off")
      ->check(cli::WholeBetween(0, 256));
  sub->add_option("--wait", a->wait, "Seconds to wait for a free device of the key (default 60)")
      ->check(cli::Between(0, kOneYearSeconds, "a year at most"));
  sub->add_option("--device-wait", a->device_wait, "Seconds to wait for a lost device to come back (default 300)")
      ->check(cli::Between(0, kOneYearSeconds, "a year at most"));
  sub->add_option("--devices", a->devices, "Devices of the key to lease (default 1)")
      ->check(cli::Positive())
      ->check(cli::Whole<uint32_t>());
  sub->add_option("--priority", a->priority, "Queue priority, higher first (default 0)")
      ->check(cli::Whole<decltype(a->priority)>());
  // A batch is one message to the tracker: a million configs passed its size limit (a gRPC error after minutes of
  // generating them, or none under --time-budget).
  sub->add_option("--batch", a->batch, "Configs sent per batch, 1 to 1024 (default 16)")
      ->check(cli::WholeBetween(1, 1024));
  sub->add_option("--seed", a->seed,
                  "Seed of the search: runs with the same seed propose the same first batch; random then the same "
                  "configs throughout, xgb and ga what their measured results (which vary) lead to; grid takes none")
      ->check(cli::Whole<uint64_t>());
  sub->add_flag("--fresh", a->fresh, "Do not resume from the log: start the search over");
  CLI::Option* no_transfer =
      sub->add_flag("--no-transfer", a->no_transfer, "Do not warm-start the model from other tasks/devices");
  sub->add_flag("--transfer-once", a->transfer_once,
                "Read other tasks' records once, at a task's first batch, not again before its later plans")
      ->excludes(no_transfer);
  sub->add_option("--precision", a->precision,
                  "Model precision: float32 | float16 | float16-acc32 (the model's float16 layers stay half)")
      ->check(cli::NotEmpty());
  sub->add_option("--mixed-precision-ops", a->mixed_ops, "Op kinds that take --precision (default conv2d,dense)")
      ->check(cli::NotEmpty());
  sub->add_option("--input-shape", a->input_shapes,
                  "Shape of a graph input, name:1x3x224x224 (repeatable): gives its dynamic dims, or replaces its "
                  "static ones (the same rank)")
      ->check(cli::NotEmpty())
      ->expected(1)  // as --task
      ->allow_extra_args(false)
      ->take_all();
  sub->callback([a, exit_code, sub] {
    // The model's options with another search: accepted and ignored, they let a user believe they took effect.
    // Only the model warm-starts from other tasks' records, so the transfer options are the model's too.
    if (a->tuner != "xgb") {
      for (const char* xgb_only : {"--xgb-objective", "--xgb-prior-pool", "--no-transfer", "--transfer-once"}) {
        if (sub->count(xgb_only) > 0) {
          *exit_code = CommandError("tune", std::string(xgb_only) + " applies to --tuner xgb (the cost model), not " +
                                                "--tuner " + a->tuner, 2);
          return;
        }
      }
    }
    *exit_code = RunTuneCommand(*a);
  });
}

}  // namespace tunefleet
