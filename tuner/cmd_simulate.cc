// `tunefleet simulate`: replays a fully recorded space from the tuning log to compare a strategy with a
// baseline, without a device. The last line of stdout is the summary:
//   trials-to-95%: <tuner> <median> <baseline> <median> ratio <baseline median / tuner median>
// --trace FILE also writes every replayed trial as CSV (kSimulateTraceHeader), for curves and post-mortems.
// Progress goes to stderr, a line per finished run; SIGINT/SIGTERM end the replay between two batches, exit 130.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "search-spaces/template.h"
#include "storage/tuning_log.h"
#include "tuner/command.h"
#include "tuner/export_csv.h"
#include "tuner/progress.h"
#include "tuner/simulate.h"
#include "tuner/stop_signals.h"
#include "tuner/strategy.h"

namespace tunefleet {
namespace {

struct SimulateArgs {
  std::string db;
  ReplaySelection sel;
  SimulateOptions opts;
  std::string trace;  // CSV file of every trial; empty = none
};

constexpr const char* kSimulateTraceHeader = "strategy,seed,trial,config_index,config,ok,cost,share_of_best";

// One CSV line of a trace: the config as the space's JSON, the cost in seconds, best cost / cost (0 when failed).
std::string TraceLine(const ReplayWorld& w, const TraceRow& row) {
  const Observation& r = row.result;
  const std::string config = w.space.ToJson(w.space.FromIndex(r.index)).dump();
  char nums[96];
  std::snprintf(nums, sizeof nums, "%d,%.6g,%.4f", r.ok ? 1 : 0, r.ok ? r.cost : 0.0,
                r.ok && r.cost > 0 ? w.table.best_cost / r.cost : 0.0);
  return CsvField(row.strategy) + "," + std::to_string(row.seed) + "," + std::to_string(row.trial) + "," +
         std::to_string(r.index) + "," + CsvField(config) + "," + nums;
}

int RunSimulate(const SimulateArgs& a) {
  Result<std::unique_ptr<TuningLog>> log = TuningLog::OpenExisting(a.db);
  if (!log.ok()) return CommandError("simulate", log.status().message(), LogOpenExitCode(log.status()));
  // Checked with the log open: a name of one of this process's descriptors (/dev/fd/3) names the log only then.
  if (std::string over = a.trace.empty() ? "" : OutputOverLog("--trace", a.trace, a.db); !over.empty()) {
    return CommandError("simulate", over, 2);
  }
  WarnDamagedRecords("simulate", **log);
  Result<std::unique_ptr<ReplayWorld>> world = LoadReplayWorld(**log, a.sel);
  if (!world.ok()) {
    return CommandError("simulate", AboutLog(a.db, world.status().message()), LogOpenExitCode(world.status()));
  }
  const ReplayWorld& w = **world;
  // Said before anything can refuse the replay: a refusal may follow from one (another template version).
  for (const std::string& note : w.notes) std::cerr << "tunefleet simulate: warning: " << note << "\n";
  // Bad options are usage errors: said before anything is printed, like a bad --db or --task. So is a space less than
  // half recorded: its refusal comes alone, and says the space's coverage, which scripts read from the line below
  // otherwise (bench/record_spaces.sh).
  if (Status st = CheckSimulateOptions(w, a.opts); !st.ok()) return CommandError("simulate", st.message(), 2);
  if (Status st = CheckRecorded(w, a.opts); !st.ok()) return CommandError("simulate", st.message(), 2);

  // Opened before the replay, so that a trace that cannot be written ends the run before its minutes of work, and a
  // write that fails (a full disk) ends it at the next batch; the system's reason is said, and it is a failure at run
  // time (1), as an output export or report cannot write.
  std::ofstream trace;
  int trace_errno = -1;  // errno at the trace's first failed write (its cause), -1 while none failed
  std::stop_source trace_failed;
  TraceObserver on_trial;
  if (!a.trace.empty()) {
    errno = 0;
    trace.open(a.trace, std::ios::out | std::ios::trunc);
    if (!trace) {
      const int err = errno;
      return CommandError("simulate", "cannot write the trace file " + a.trace +
                                          (err != 0 ? std::string(": ") + std::strerror(err) : std::string()), 1);
    }
    trace << kSimulateTraceHeader << "\n";
    on_trial = [&](const TraceRow& row) {
      errno = 0;
      trace << TraceLine(w, row) << "\n";
      if (!trace && trace_errno < 0) {
        trace_errno = errno;
        trace_failed.request_stop();
      }
    };
  }

  // Ctrl-C ends the replay between two batches of trials; set up before the strategies start their threads, and
  // before the first line is written (SIGPIPE, ignored from here, killed a replay piped into a reader gone).
  StopOnSignals signals(std::chrono::milliseconds(1000), "the seeds finished so far are reported");
  // Printed once the replay goes ahead: a refused one says its one line alone.
  const uint64_t valid = w.space.CountValid();
  std::cout << "replaying " << w.task.ToSpec() << " on " << w.tmpl->name() << ", device " << w.device << ": "
            << w.table.by_index.size() << " recorded configs of " << valid << " valid";
  if (a.opts.transfer_trials > 0 && w.sibling != nullptr) {
    std::cout << ", warm start from the first " << a.opts.transfer_trials << " trials of a replay of "
              << w.sibling->task.ToSpec();
  } else if (!w.history.empty()) {
    std::cout << ", " << w.history.size() << " history records for warm start";
  }
  // Flushed at once: stdout is fully buffered in a pipe, and a long replay stopped by a signal lost the line.
  std::cout << std::endl;
  // Said now, with the write's cause: the progress lines on standard error would flush it again (std::cerr is tied
  // to std::cout) and leave another call's errno ("write failed" without the reason).
  if (Status out = FlushStandardOutput(); !out.ok()) return CommandError("simulate", out.message());
  if (w.table.by_index.size() < valid) {
    std::cerr << "tunefleet simulate: warning: " << valid - w.table.by_index.size()
              << " valid config(s) have no record; proposing one counts as a failed trial\n";
  }
  if (w.table.unmapped + w.table.invalid > 0) {
    std::cerr << "tunefleet simulate: warning: " << w.table.unmapped + w.table.invalid
              << " record(s) are of configs outside the space or not valid in it on this device (another template "
                 "version, other device limits, a config edited by hand): left out\n";
  }
  if (w.table.uneven > 0) {
    std::cerr << "tunefleet simulate: warning: " << w.table.uneven << " config(s) have another number of records "
              << "than the others' " << w.table.usual_records << " (an interrupted pass, or --confirm): each is "
              << "replayed at the lower median of its own results, which favours a config measured more often\n";
  }
  if (w.table.mixed > 0) {
    std::cerr << "tunefleet simulate: warning: " << w.table.mixed << " config(s) failed in some records and ran in "
              << "others: each is replayed at its successful results alone\n";
  }

  const auto start = std::chrono::steady_clock::now();
  SimulateControl control;
  // Stopped by a signal or by the trace's first failed write.
  std::stop_callback stop_on_signal(signals.token(), [&trace_failed] { trace_failed.request_stop(); });
  control.stop = trace_failed.get_token();
  // One line per finished run on stderr (stdout's last line stays the summary), so that a long replay is seen to go.
  control.on_seed = [&](const SeedDone& s) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / s.done * (s.total - s.done);
    std::cerr << "tunefleet simulate: " << s.strategy << " seed " << s.seed << "/" << a.opts.seeds
              << ": the target in " << s.trials << (s.trials == 1 ? " trial" : " trials") << " | run " << s.done
              << "/" << s.total << " | elapsed " << FormatDuration(elapsed) << " | ETA " << FormatDuration(eta)
              << "\n";
  };
  Result<SimulationReport> report = Simulate(w, a.opts, on_trial, control);
  if (!report.ok()) return CommandError("simulate", report.status().message(), 1);
  if (trace.is_open()) {
    errno = 0;
    trace.close();
    if (!trace) {
      const int cause = trace_errno >= 0 ? trace_errno : errno;
      return CommandError("simulate", "writing the trace file " + a.trace + " failed" + WriteErrorCause(cause), 1);
    }
  }
  if (report->interrupted) {
    std::cerr << "tunefleet simulate: interrupted by " << signals.signal_name() << " after "
              << report->tuner.trials.size() << " of " << a.opts.seeds << " seeds of " << report->tuner.name << " and "
              << report->baseline.trials.size() << " of " << a.opts.seeds << " of " << report->baseline.name
              << "; no summary"
              << (a.trace.empty() ? "" : " (the trace holds every trial replayed)") << "\n";
    return 130;
  }
  for (const StrategyRuns* runs : {&report->tuner, &report->baseline}) {
    std::cout << runs->name << ": trials per seed";
    for (uint64_t t : runs->trials) std::cout << " " << t;
    std::cout << "\n";
  }
  // How much the configs without a record weighed: each proposal of one counted as a failed trial.
  if (report->unrecorded > 0) {
    std::cerr << "tunefleet simulate: note: " << report->unrecorded << " proposals over all runs were of configs "
              << "without a record, each counted as a failed trial\n";
  }
  std::cout << SummaryLine(a.opts, *report) << std::endl;
  return 0;
}

}  // namespace

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  auto* sub = app.add_subcommand("simulate", "Replay a fully recorded space to compare search strategies offline");
  sub->add_option("--db", args->db,
                  "Tuning log (SQLite) holding every valid config of the space; a config recorded several times is "
                  "replayed at the lower median of its results")
      ->required();
  sub->add_option("--task", args->sel.task_spec, "Task spec to replay (default: the only one in the log)")
      ->check(cli::NotEmpty());
  sub->add_option("--template", args->sel.template_name, "Template name (default: the only one in the log)")
      ->check(cli::NotEmpty());
  sub->add_option("--device", args->sel.device, "Device fingerprint or id (default: the one with most records)")
      ->check(cli::NotEmpty());
  sub->add_option("--tuner", args->opts.tuner, "Strategy under test: xgb, ga, random, grid")
      ->capture_default_str()
      ->check(CLI::IsMember(StrategyNames()));
  sub->add_option("--baseline", args->opts.baseline, "Strategy to compare with")
      ->capture_default_str()
      ->check(CLI::IsMember(StrategyNames()));
  sub->add_option("--seeds", args->opts.seeds,
                  "Runs per strategy (seeds 1..K), at most " + std::to_string(kMaxSimulateSeeds))
      ->capture_default_str()
      ->check(cli::Between(1, kMaxSimulateSeeds, "more runs take hours and no longer move the median"));
  sub->add_option("--target", args->opts.target, "Share of the best recorded performance to reach")
      ->capture_default_str();
  sub->add_option("--batch", args->opts.batch, "Configs asked per round")
      ->capture_default_str()
      ->check(cli::Positive());
  sub->add_option("--plan-size", args->opts.plan_size, "xgb: results per model refit")
      ->capture_default_str()
      ->check(cli::Positive());
  sub->add_option("--xgb-objective", args->opts.xgb_objective,
                  "xgb: auto (ndcg without history; rank and ndcg members with --transfer-from), rank "
                  "(rank:pairwise), ndcg (rank:ndcg) or reg")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "rank", "ndcg", "reg"}));  // checked here, before the log is read
  sub->add_option("--xgb-ensemble", args->opts.xgb_ensemble,
                  "xgb: bagged models whose spread of predictions plans follow (1 = one model, AutoTVM's choice)")
      ->capture_default_str()
      ->check(cli::WholeBetween(1, kMaxXgbEnsemble));
  sub->add_option("--xgb-kappa", args->opts.xgb_kappa,
                  "xgb: plans follow mean + kappa * spread of the models' predictions (0 = the mean)")
      ->capture_default_str()
      ->check(cli::NonNegative())
      ->check(cli::Between(0, 100));
  sub->add_option("--xgb-prior-pool", args->opts.prior_pool,
                  "xgb without history: the first plan is the plan-size configs that the device prior "
                  "(work-items against what the device runs at once) ranks best of N x plan-size random ones, and "
                  "every model starts from the prior (its base margin); 0 or 1 = a random first plan and models of "
                  "the results alone, as GEMM always has")
      ->capture_default_str()
      ->check(cli::WholeBetween(0, kMaxPriorPool));
  sub->add_option("--observe", args->opts.observe,
                  "What the strategy is told of a config recorded in several passes: median (the lower median, "
                  "which the target is judged by) or pass (one recorded result drawn at random per trial, as a "
                  "live run sees one measurement)")
      ->capture_default_str()
      ->check(CLI::IsMember({"median", "pass"}));
  sub->add_option("--arrival", args->opts.arrival,
                  "In what order a batch's trials count: plan (as the strategy proposed them) or shuffled (an order "
                  "drawn per batch, as a fleet records a batch in the order its devices finish)")
      ->capture_default_str()
      ->check(CLI::IsMember({"plan", "shuffled"}));
  sub->add_option("--transfer-from", args->sel.transfer_from,
                  "Warm-start the tuner from this task's records of the same template, as tune does: one row per "
                  "config and device at the lower median of its results (failed when none ran)")
      ->check(cli::NotEmpty());
  sub->add_option("--transfer-trials", args->opts.transfer_trials,
                  "With --transfer-from: warm-start from the first N trials of the tuner's own replay on that task "
                  "(same seed), as a run's earlier task of the template leaves them, instead of all its records (0)")
      ->capture_default_str();
  sub->add_option("--trace", args->trace,
                  "Also write every replayed trial to this CSV file: strategy, seed, trial, config index and JSON, "
                  "ok, cost (s), share of the best recorded performance")
      ->check(cli::NotEmpty());
  sub->callback([args, exit_code, sub] {
    // The model's options when neither strategy is xgb: accepted and ignored, they let a user believe they took
    // effect (tune refuses them with another --tuner alike).
    if (args->opts.tuner != "xgb" && args->opts.baseline != "xgb") {
      for (const char* xgb_only :
           {"--plan-size", "--xgb-objective", "--xgb-ensemble", "--xgb-kappa", "--xgb-prior-pool"}) {
        if (sub->count(xgb_only) > 0) {
          *exit_code = CommandError("simulate", std::string(xgb_only) + " applies to --tuner or --baseline xgb (the "
                                                "cost model), not --tuner " + args->opts.tuner + " --baseline " +
                                                args->opts.baseline, 2);
          return;
        }
      }
    }
    // The history warm-starts the tuner's cost model (the baseline never gets it): with another --tuner it changed
    // nothing, while the header said it was used.
    for (const char* transfer : {"--transfer-from", "--transfer-trials"}) {
      if (args->opts.tuner != "xgb" && sub->count(transfer) > 0) {
        *exit_code = CommandError("simulate", std::string(transfer) + " warm-starts the cost model of --tuner xgb; "
                                              "--tuner " + args->opts.tuner + " has none", 2);
        return;
      }
    }
    *exit_code = RunSimulate(*args);
  });
}

}  // namespace tunefleet
