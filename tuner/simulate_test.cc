#include "tuner/simulate.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <iostream>
#include <optional>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "search-spaces/template.h"
#include "tuner/strategy_test_space.h"
#include "tuner/tuning_log_testing.h"

namespace tunefleet {
namespace {

// A tuning log on disk, written and read through the storage API, holding one tiny task and template.
class SimulateTest : public testing::TuningLogTest {
 protected:
  void SetUp() override {
    TuningLogTest::SetUp();
    if (HasFatalFailure()) return;
    task_ = log_->UpsertTask("tiny:4,2", "tiny", "{}", 1e6).value();
    tmpl_ = log_->UpsertTemplate("tiny.test", 1).value();
  }

  void Record(const Space& s, uint64_t index, int status, double cost, int64_t task = 0, int64_t tmpl = 0) {
    AddRecord(s, task ? task : task_, tmpl ? tmpl : tmpl_, index, status, cost);
  }

  // The replay world of everything recorded so far, read back from the file.
  std::unique_ptr<ReplayWorld> World(const Space& s) {
    auto w = std::make_unique<ReplayWorld>();
    w->space = s;
    Result<std::vector<RecordRow>> rows = log_->Records(task_, tmpl_, device_);
    EXPECT_TRUE(rows.ok());
    w->table = BuildReplayTable(w->space, *rows);
    return w;
  }

  // Best is index 5 (1.0 ms); index 2 is within 95% of it (1.04 ms); index 1 failed to compile.
  void RecordKnownSpace(const Space& s) {
    const double costs[] = {3e-3, 0, 1.04e-3, 2e-3, 5e-3, 1e-3, 4e-3};
    for (uint64_t i = 0; i < 7; ++i) Record(s, i, i == 1 ? 3 : 0, costs[i]);
  }

  // gemm.buffer's space of gemm:16,16,16 on the fixture's device, with the template and task in the log.
  struct GemmLog {
    const Template* gemm = nullptr;
    Task task;
    std::optional<Space> space;
    int64_t tmpl = 0, task_id = 0;
  };
  void MakeGemmLog(GemmLog* g) {
    g->gemm = FindTemplate("gemm.buffer");
    ASSERT_NE(g->gemm, nullptr);
    g->task = Task::Parse("gemm:16,16,16:float32").value();
    Result<Space> space = g->gemm->MakeSpace(g->task, DeviceLimits::From(device_info_));
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    g->space = std::move(space).value();
    g->tmpl = log_->UpsertTemplate(g->gemm->name(), g->gemm->version()).value();
    g->task_id = log_->UpsertTask(g->task.ToSpec(), "gemm", "{}", g->gemm->Flops(g->task)).value();
  }

  int64_t task_ = 0, tmpl_ = 0;
};

SimulateOptions Options(const std::string& tuner, const std::string& baseline, int seeds, size_t batch) {
  SimulateOptions o;
  o.tuner = tuner;
  o.baseline = baseline;
  o.seeds = seeds;
  o.batch = batch;
  return o;
}

// a in {1,2,3,4} x b in {1,2}, (a=4, b=2) invalid: 7 valid configs, indices 0..6.
Space Tiny() {
  Space s;
  s.AddList("a", {1, 2, 3, 4}).AddList("b", {1, 2}).AddConstraint("not a=4,b=2", [](const ConfigView& v) {
    return v.Value("a") == 4 && v.Value("b") == 2 ? "too big" : "";
  });
  return s;
}

TEST_F(SimulateTest, GivenATinyRecordedSpace_GridShouldNeedTheKnownNumberOfTrials) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  auto w = World(s);
  EXPECT_EQ(w->table.by_index.size(), 7u);
  EXPECT_DOUBLE_EQ(w->table.best_cost, 1e-3);

  SimulateOptions o = Options("grid", "grid", 3, 2);
  Result<SimulationReport> r = Simulate(*w, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tuner.trials, (std::vector<uint64_t>{3, 3, 3}));
  EXPECT_EQ(SummaryLine(o, *r), "trials-to-95%: grid 3 grid 3 ratio 1.00");

  o.target = 1.0;  // only the best counts: grid reaches index 5 at its 6th trial
  r = Simulate(*w, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SummaryLine(o, *r), "trials-to-100%: grid 6 grid 6 ratio 1.00");
  o.target = 0.9995;  // said as given: it was rounded to "100%"
  r = Simulate(*w, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SummaryLine(o, *r).rfind("trials-to-99.95%: grid 6 ", 0), 0u) << SummaryLine(o, *r);
}

// A record of a config the space rejects on the device (a=4, b=2: another template version or other device limits
// recorded it) set the best, which no strategy could propose: every seed ran out of configs. It is left out, and
// counted.
TEST_F(SimulateTest, GivenARecordOfAConfigTheSpaceRejects_ItShouldBeLeftOutOfTheBest) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  ASSERT_FALSE(s.ValidIndex(7));
  Record(s, 7, 0, 0.5e-3);  // twice as fast as the best valid config
  auto w = World(s);
  EXPECT_EQ(w->table.invalid, 1u);
  EXPECT_EQ(w->table.by_index.size(), 7u);
  EXPECT_DOUBLE_EQ(w->table.best_cost, 1e-3);
  Result<SimulationReport> r = Simulate(*w, Options("grid", "grid", 2, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tuner.trials, (std::vector<uint64_t>{3, 3}));
}

// A record whose config text is not a config of the space (a value a knob does not take, an unknown knob, not JSON)
// was filed under its stored index, another config, which then stood as the best: it is left out and counted.
TEST_F(SimulateTest, GivenARecordWhoseConfigIsNoConfigOfTheSpace_ItShouldBeLeftOutNotFiledUnderItsIndex) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  std::vector<RecordRow> rows = log_->Records(task_, tmpl_, device_).value();
  for (const std::string config : {R"({"a":7,"b":1})", R"({"a":1,"b":1,"c":3})", "not json"}) {
    RecordRow edited = rows.at(0);  // index 0
    edited.config = config;
    edited.mean_cost = 0.1e-3;
    rows.push_back(edited);
  }
  const ReplayTable t = BuildReplayTable(s, rows);
  EXPECT_EQ(t.unmapped, 3u);
  EXPECT_DOUBLE_EQ(t.best_cost, 1e-3);
  EXPECT_DOUBLE_EQ(t.by_index.at(0).cost, 3e-3);
}

// A space whose every record failed has no best: refused as bad input before any seed runs (it failed at the first
// seed, after the header, as a run-time error).
TEST_F(SimulateTest, GivenASpaceWithoutASuccessfulRecord_ItShouldBeRefusedAsNothingToReplay) {
  const Space s = Tiny();
  for (uint64_t i = 0; i < 7; ++i) Record(s, i, 4, 0);
  auto w = World(s);
  w->task = Task::Parse("gemm:4,4,4").value();
  const Status st = CheckRecorded(*w, Options("grid", "random", 2, 2));
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("ran successfully in the log: there is no best to reach"), std::string::npos)
      << st.message();
}

TEST_F(SimulateTest, GivenATraceObserver_ItShouldSeeEveryTrialOfEveryRunAsTheRecordingAnsweredIt) {
  const Space s = Tiny();
  RecordKnownSpace(s);  // index 1 failed; 2 and 5 reach 95%
  auto w = World(s);
  const SimulateOptions o = Options("grid", "random", 3, 2);
  std::vector<TraceRow> rows;
  Result<SimulationReport> r = Simulate(*w, o, [&](const TraceRow& row) { rows.push_back(row); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  // The tuner's runs first, then the baseline's; in each run trials 1..n, n as reported, and only the last one
  // within 95% of the best.
  size_t at = 0;
  for (const StrategyRuns* runs : {&r->tuner, &r->baseline}) {
    for (int seed = 1; seed <= o.seeds; ++seed) {
      const uint64_t n = runs->trials[static_cast<size_t>(seed - 1)];
      for (uint64_t t = 1; t <= n; ++t, ++at) {
        ASSERT_LT(at, rows.size());
        const TraceRow& row = rows[at];
        EXPECT_EQ(row.strategy, runs->name);
        EXPECT_EQ(row.seed, seed);
        EXPECT_EQ(row.trial, t);
        const Observation& recorded = w->table.by_index.at(row.result.index);
        EXPECT_EQ(row.result.ok, recorded.ok);
        EXPECT_DOUBLE_EQ(row.result.cost, recorded.cost);
        const bool reached = row.result.ok && w->table.best_cost / row.result.cost >= o.target;
        EXPECT_EQ(reached, t == n) << runs->name << " seed " << seed << " trial " << t;
      }
    }
  }
  EXPECT_EQ(at, rows.size());
}

TEST_F(SimulateTest, GivenConfigsMeasuredInSeveralPasses_TheReplayShouldUseTheLowerMedianOfTheirResults) {
  const Space s = Tiny();
  // Index 0: one lucky pass (0.5 ms) among 2 and 2.1 ms: the median, 2 ms, is what a rerun would see.
  Record(s, 0, 0, 2.1e-3);
  Record(s, 0, 0, 0.5e-3);
  Record(s, 0, 0, 2e-3);
  // Index 3: two passes: the faster one. Index 4: a failed pass and an ok one: ok at its cost.
  Record(s, 3, 0, 1.5e-3);
  Record(s, 3, 0, 1.2e-3);
  Record(s, 4, 3, 0);
  Record(s, 4, 0, 3e-3);
  Record(s, 5, 3, 0);  // only failures: replayed as a failure
  auto w = World(s);
  ASSERT_EQ(w->table.by_index.size(), 4u);
  EXPECT_DOUBLE_EQ(w->table.by_index.at(0).cost, 2e-3);
  EXPECT_DOUBLE_EQ(w->table.by_index.at(3).cost, 1.2e-3);
  EXPECT_TRUE(w->table.by_index.at(4).ok);
  EXPECT_DOUBLE_EQ(w->table.by_index.at(4).cost, 3e-3);
  EXPECT_FALSE(w->table.by_index.at(5).ok);
  EXPECT_DOUBLE_EQ(w->table.best_cost, 1.2e-3);  // not the lucky 0.5 ms of index 0
}

// The error Simulate gives for `o` on `w`; empty (and a test failure) when it accepts them.
std::string RefusalOf(const ReplayWorld& w, const SimulateOptions& o) {
  Result<SimulationReport> r = Simulate(w, o);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.status().message();
}

// The strategy under a replay, reduced to what it proposes and what it is told: it proposes `order` one config per
// trial (repeats allowed) and keeps every result handed to Update.
class Listener final : public Strategy {
 public:
  explicit Listener(std::vector<uint64_t> order) : order_(std::move(order)) {}
  std::vector<uint64_t> NextBatch(size_t n) override {
    std::vector<uint64_t> out;
    while (out.size() < n && next_ < order_.size()) out.push_back(order_[next_++]);
    return out;
  }
  void Update(const std::vector<Observation>& results) override {
    told.insert(told.end(), results.begin(), results.end());
  }
  std::vector<Observation> told;

 private:
  std::vector<uint64_t> order_;
  size_t next_ = 0;
};

TEST_F(SimulateTest, GivenObservePass_TheStrategyShouldBeToldRecordedResultsButTheTargetJudgedByTheMedian) {
  const Space s = Tiny();
  Record(s, 0, 0, 2.1e-3);  // index 0: passes of 2.1, 0.5 and 2 ms, lower median 2 ms
  Record(s, 0, 0, 0.5e-3);
  Record(s, 0, 0, 2e-3);
  Record(s, 3, 0, 1e-3);  // the best
  auto w = World(s);
  std::vector<uint64_t> order(30, 0);
  order.push_back(3);
  std::vector<Observation> traced;
  auto trace = [&](uint64_t, const Observation& o) { traced.push_back(o); };

  Listener median_told(order);
  Result<uint64_t> t = TrialsToTarget(median_told, w->table, 0.95, 1, nullptr, trace);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, 31u);
  for (const Observation& o : median_told.told) EXPECT_DOUBLE_EQ(o.cost, 2e-3);

  traced.clear();
  std::mt19937_64 rng(7);
  Listener pass_told(order);
  ReplayDraws draws;
  draws.pass = &rng;
  t = TrialsToTarget(pass_told, w->table, 0.95, 1, nullptr, trace, draws);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Told 0.5 ms, index 0 looks twice as fast as the best, but the target is judged by its median: still trial 31.
  EXPECT_EQ(*t, 31u);
  std::set<double> seen;
  for (const Observation& o : pass_told.told) {
    EXPECT_TRUE(o.cost == 2.1e-3 || o.cost == 0.5e-3 || o.cost == 2e-3) << o.cost;
    seen.insert(o.cost);
  }
  EXPECT_EQ(seen.size(), 3u);  // 30 draws of 3 passes
  ASSERT_EQ(traced.size(), 31u);
  for (size_t i = 0; i < 30; ++i) EXPECT_DOUBLE_EQ(traced[i].cost, 2e-3);  // the trace keeps the median

  // Simulate: a random baseline ignores costs, so it needs the same trials whatever it is told; a bad choice is
  // refused with one clear error.
  RecordKnownSpace(s);
  w = World(s);
  SimulateOptions o = Options("random", "random", 5, 2);
  Result<SimulationReport> by_median = Simulate(*w, o);
  o.observe = "pass";
  Result<SimulationReport> by_pass = Simulate(*w, o);
  ASSERT_TRUE(by_median.ok() && by_pass.ok());
  EXPECT_EQ(by_median->baseline.trials, by_pass->baseline.trials);
  o.observe = "mean";
  const std::string why = RefusalOf(*w, o);
  EXPECT_NE(why.find("--observe: 'mean' is not median or pass"), std::string::npos) << why;
}

TEST_F(SimulateTest, GivenArrivalShuffled_ABatchsTrialsShouldCountInADrawnOrder) {
  const Space s = Tiny();
  RecordKnownSpace(s);  // index 5 is the best; 2 is within 95%; 0, 3, 4 and 6 are not; 1 failed
  auto w = World(s);
  // One batch of 5 whose first proposal is the best: trial 1 as proposed; as a fleet finishes them, any of 1-5.
  const std::vector<uint64_t> order = {5, 0, 3, 4, 6};
  Listener in_order(order);
  Result<uint64_t> t = TrialsToTarget(in_order, w->table, 0.95, 5, nullptr);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, 1u);
  std::set<uint64_t> positions;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    ReplayDraws draws;
    draws.arrival = &rng;
    Listener shuffled(order);
    t = TrialsToTarget(shuffled, w->table, 0.95, 5, nullptr, {}, draws);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    positions.insert(*t);
  }
  EXPECT_EQ(positions, (std::set<uint64_t>{1, 2, 3, 4, 5}));  // 40 draws of 5 places
  SimulateOptions o = Options("grid", "random", 2, 2);
  o.arrival = "last";
  const std::string why = RefusalOf(*w, o);
  EXPECT_NE(why.find("--arrival: 'last' is not plan or shuffled"), std::string::npos) << why;
}

TEST_F(SimulateTest, GivenAnUnrecordedConfig_WeShouldReplayItAsAFailedTrial) {
  const Space s = Tiny();
  for (uint64_t i = 1; i < 7; ++i) Record(s, i, 0, i == 6 ? 1e-3 : 2e-3);  // index 0 never recorded
  auto w = World(s);
  Result<SimulationReport> r = Simulate(*w, Options("grid", "random", 1, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tuner.trials, (std::vector<uint64_t>{7}));
  EXPECT_GE(r->unrecorded, 1u);
}

// Each proposal of an unrecorded config is a failed trial: over a space mostly unrecorded a replay walks nearly all
// of it for every seed (minutes, for 8 records of 196,412 configs). Such a log is refused.
TEST_F(SimulateTest, GivenASpaceMostlyUnrecorded_WeShouldRefuseToReplayIt) {
  const Space s = Tiny();
  Record(s, 2, 0, 1e-3);
  Record(s, 5, 0, 2e-3);
  auto w = World(s);
  EXPECT_NE(RefusalOf(*w, Options("grid", "random", 1, 1)).find("the log records 2 of the 7 valid configs of "),
            std::string::npos);
}

// `simulate --seeds 2147483647` ran for ever without a word: a count of seeds past the maximum is refused.
TEST_F(SimulateTest, GivenSeedsPastTheMaximum_WeShouldRefuseThemSayingTheBounds) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  auto w = World(s);
  for (int seeds : {10001, 2147483647, 0}) {
    EXPECT_EQ(CheckSimulateOptions(*w, Options("grid", "random", seeds, 1)).message(),
              "--seeds must be from 1 to 10000, not " + std::to_string(seeds));
  }
  EXPECT_TRUE(CheckSimulateOptions(*w, Options("grid", "random", 10000, 1)).ok());
}

TEST_F(SimulateTest, GivenASeedObserver_ItShouldSeeEveryRunInOrderWithItsTrials) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  auto w = World(s);
  std::vector<std::string> seen;
  SimulateControl control;
  control.on_seed = [&](const SeedDone& d) {
    seen.push_back(d.strategy + " " + std::to_string(d.seed) + " " + std::to_string(d.trials) + " " +
                   std::to_string(d.done) + "/" + std::to_string(d.total));
  };
  Result<SimulationReport> r = Simulate(*w, Options("grid", "grid", 2, 2), {}, control);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->interrupted);
  EXPECT_EQ(seen, (std::vector<std::string>{"grid 1 3 1/4", "grid 2 3 2/4", "grid 1 3 3/4", "grid 2 3 4/4"}));
}

// Ctrl-C on a long replay: it ends before the next batch, reporting the runs finished so far (it died silent).
TEST_F(SimulateTest, GivenAStopRequestedAfterTwoRuns_TheReplayShouldEndWithThoseRunsOnly) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  auto w = World(s);
  std::stop_source stop;
  SimulateControl control;
  control.stop = stop.get_token();
  int runs = 0;
  control.on_seed = [&](const SeedDone& d) {
    runs = d.done;
    if (d.done == 2) stop.request_stop();
  };
  Result<SimulationReport> r = Simulate(*w, Options("grid", "random", 5, 2), {}, control);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(r->tuner.trials, (std::vector<uint64_t>{3, 3}));
  EXPECT_TRUE(r->baseline.trials.empty());
}

TEST_F(SimulateTest, GivenAStopRequestedBeforeABatch_TrialsToTargetShouldEndWithoutProposingIt) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  auto w = World(s);
  StrategyOptions so;
  so.name = "grid";
  std::unique_ptr<Strategy> grid = MakeStrategyForSpace(so, nullptr, nullptr, w->space, nullptr).value();
  std::stop_source stop;
  stop.request_stop();
  uint64_t trials = 0;
  Result<uint64_t> t = TrialsToTarget(*grid, w->table, 0.95, 2, nullptr,
                                      [&](uint64_t, const Observation&) { ++trials; }, {}, stop.get_token());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kUnavailable) << t.status().ToString();
  EXPECT_EQ(trials, 0u);
}

TEST_F(SimulateTest, GivenAGemmLog_LoadShouldResolveTaskTemplateAndDeviceAndAskWhenAmbiguous) {
  GemmLog g;
  ASSERT_NO_FATAL_FAILURE(MakeGemmLog(&g));
  const int64_t t2 = log_->UpsertTask("gemm:32,16,16:float32", "gemm", "{}", 2.0 * 32 * 16 * 16).value();
  const std::vector<uint64_t> valid = testing::FirstValid(*g.space, 5);
  for (size_t k = 0; k < valid.size(); ++k) Record(*g.space, valid[k], 0, 1e-3 * (k + 1), g.task_id, g.tmpl);
  // The sibling: valid[0] in three passes (one lucky), valid[1] failed once and ran once.
  Record(*g.space, valid[0], 0, 1e-3, t2, g.tmpl);
  Record(*g.space, valid[0], 0, 0.2e-3, t2, g.tmpl);
  Record(*g.space, valid[0], 0, 1.1e-3, t2, g.tmpl);
  Record(*g.space, valid[1], 3, 0, t2, g.tmpl);
  Record(*g.space, valid[1], 0, 4e-3, t2, g.tmpl);

  ReplaySelection sel;
  sel.template_name = "gemm.buffer";
  Result<std::unique_ptr<ReplayWorld>> ambiguous = LoadReplayWorld(*log_, sel);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("pick one with --task"), std::string::npos);

  sel.task_spec = "gemm:16,16,16";  // canonical spec matching: float32 is the default precision
  sel.transfer_from = "gemm:32,16,16:float32";
  Result<std::unique_ptr<ReplayWorld>> w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->tmpl, g.gemm);
  EXPECT_EQ((*w)->table.by_index.size(), 5u);
  EXPECT_DOUBLE_EQ((*w)->table.best_cost, 1e-3);
  // One history row per config, at the lower median of its results, as the replayed space itself.
  ASSERT_EQ((*w)->history.size(), 2u);
  EXPECT_EQ((*w)->history[0].device_fingerprint, "fp-pocl");
  EXPECT_EQ((*w)->history[0].config_json, g.space->ToJson(g.space->FromIndex(valid[0])).dump());
  EXPECT_TRUE((*w)->history[0].ok);
  EXPECT_DOUBLE_EQ((*w)->history[0].cost, 1e-3);
  EXPECT_TRUE((*w)->history[1].ok);
  EXPECT_DOUBLE_EQ((*w)->history[1].cost, 4e-3);
}

// Records that a replay takes silently otherwise: a pass cut short leaves configs of fewer records (their lower
// median is of another count), and a config that failed in some passes is replayed at its successes. Counted, for the
// command's warnings.
TEST_F(SimulateTest, GivenUnevenPassesAndMixedResults_TheTableShouldCountThem) {
  const Space s = Tiny();
  RecordKnownSpace(s);
  RecordKnownSpace(s);  // two passes of every config
  Record(s, 2, 0, 1.0e-3);  // a third record of config 2 (an interrupted third pass)
  Record(s, 4, 0, 5e-3);
  Record(s, 3, 5, 0);      // and a failure of config 3
  auto w = World(s);
  EXPECT_EQ(w->table.usual_records, 2u);
  EXPECT_EQ(w->table.uneven, 3u);  // configs 2, 3 and 4 have three records
  EXPECT_EQ(w->table.mixed, 1u);   // config 3; config 1 only failed
}

// Two devices: the default is the one with the most configs recorded, not the most records (ten repeats of part of
// the space had been picked over all of it), and the world says which it replays and that there were others.
TEST_F(SimulateTest, GivenTwoDevices_LoadShouldReplayTheOneWithTheMostConfigsAndSaySo) {
  GemmLog g;
  ASSERT_NO_FATAL_FAILURE(MakeGemmLog(&g));
  const std::vector<uint64_t> valid = testing::FirstValid(*g.space, 5);
  for (size_t k = 0; k < valid.size(); ++k) Record(*g.space, valid[k], 0, 1e-3 * (k + 1), g.task_id, g.tmpl);
  proto::DeviceInfo other = device_info_;
  other.set_name("other-cpu");
  other.set_fingerprint("fp-other");
  const int64_t other_id = log_->UpsertDevice(other).value();
  RecordRow repeat = log_->Records(g.task_id, g.tmpl, device_).value().at(0);
  repeat.device_id = other_id;
  for (int pass = 0; pass < 10; ++pass) ASSERT_TRUE(log_->AddRecord(repeat).ok());

  ReplaySelection sel;
  sel.template_name = "gemm.buffer";
  Result<std::unique_ptr<ReplayWorld>> w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->device, "pocl-cpu [fp-pocl]");
  EXPECT_EQ((*w)->table.by_index.size(), 5u);
  ASSERT_EQ((*w)->notes.size(), 1u);
  EXPECT_NE((*w)->notes[0].find("the task's records are of 2 devices"), std::string::npos) << (*w)->notes[0];
  sel.device = "fp-other";
  w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->device, "other-cpu [fp-other]");
  EXPECT_TRUE((*w)->notes.empty());
  // A description that does not parse as a device's: replayed with a default device's limits, and said (as best
  // and export read it: a field of a newer build is no damage).
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "log.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "UPDATE devices SET info_json = '{\"maxWorkGroupSize\":\"256\",\"fieldOfLater\":1}' WHERE "
                         "fingerprint = 'fp-pocl'; UPDATE devices SET info_json = '{broken' WHERE fingerprint = "
                         "'fp-other'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  sel.device = "";
  w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ((*w)->notes.size(), 1u);  // the other devices' note alone
  sel.device = "fp-other";
  w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ((*w)->notes.size(), 1u);
  EXPECT_NE((*w)->notes[0].find("does not parse as a device description"), std::string::npos) << (*w)->notes[0];
  // The log holds two templates (the fixture's tiny.test, of no records): a --task alone picks the one with its
  // records, where it had been refused as ambiguous.
  ReplaySelection by_task;
  by_task.task_spec = "gemm:16,16,16";
  w = LoadReplayWorld(*log_, by_task);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->tmpl, g.gemm);
  EXPECT_FALSE(LoadReplayWorld(*log_, ReplaySelection{}).ok());
}

TEST_F(SimulateTest, GivenTransferTrials_TheHistoryShouldBeTheSiblingsFirstTrialsAsATunerReplayedThem) {
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  const Task task = Task::Parse("gemm:16,16,16:float32").value();
  const Task sibling = Task::Parse("gemm:32,16,16:float32").value();
  const DeviceLimits limits = DeviceLimits::From(device_info_);
  const Result<Space> space = gemm->MakeSpace(task, limits);
  const Result<Space> sibling_space = gemm->MakeSpace(sibling, limits);
  ASSERT_TRUE(space.ok() && sibling_space.ok());
  const int64_t gemm_id = log_->UpsertTemplate(gemm->name(), gemm->version()).value();
  const int64_t t1 = log_->UpsertTask(task.ToSpec(), "gemm", "{}", gemm->Flops(task)).value();
  const int64_t t2 = log_->UpsertTask(sibling.ToSpec(), "gemm", "{}", gemm->Flops(sibling)).value();
  const std::vector<uint64_t> valid = testing::FirstValid(*sibling_space, 4);
  ASSERT_EQ(valid.size(), 4u);
  Record(*space, 0, 0, 1e-3, t1, gemm_id);
  // The sibling's first 4 valid configs, the second one failed.
  for (size_t k = 0; k < valid.size(); ++k) {
    Record(*sibling_space, valid[k], k == 1 ? 3 : 0, 1e-3 * (k + 1), t2, gemm_id);
  }

  ReplaySelection sel;
  sel.template_name = "gemm.buffer";
  sel.task_spec = task.ToSpec();
  sel.transfer_from = sibling.ToSpec();
  Result<std::unique_ptr<ReplayWorld>> w = LoadReplayWorld(*log_, sel);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_NE((*w)->sibling, nullptr);
  EXPECT_EQ((*w)->sibling->task.ToSpec(), sibling.ToSpec());
  EXPECT_EQ((*w)->sibling->table.by_index.size(), 4u);

  // Grid proposes the sibling's valid configs in index order: its first 3 trials are the first 3 recorded configs,
  // told as the recording answered them (the failure as a failure).
  StrategyOptions grid;
  grid.name = "grid";
  Result<std::vector<HistoryRecord>> h = SiblingRunHistory(*(*w)->sibling, grid, 3, 2);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ((*h)[k].task_spec, sibling.ToSpec());
    EXPECT_EQ((*h)[k].config_json, sibling_space->ToJson(sibling_space->FromIndex(valid[k])).dump());
    EXPECT_EQ((*h)[k].ok, k != 1);
    EXPECT_DOUBLE_EQ((*h)[k].cost, k == 1 ? 0 : 1e-3 * (k + 1));
  }

  // Without a sibling there is nothing to replay it from: one clear error.
  (*w)->sibling = nullptr;
  SimulateOptions o = Options("xgb", "random", 1, 4);
  o.transfer_trials = 3;
  Result<SimulationReport> r = Simulate(**w, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--transfer-trials needs --transfer-from"), std::string::npos);
}

// Thousands of single-record commits are slow on disk, so this replay table is built in memory.
TEST(SimulateReplayTest, GivenAFullyRecordedTilingSpace_XgbShouldNeedFewerTrialsThanRandom) {
  auto w = std::make_unique<ReplayWorld>();
  w->space = testing::TilingSpace();
  std::vector<RecordRow> rows;
  w->space.ForEachValid([&](uint64_t i) {
    RecordRow r;
    r.config_index = i;
    r.config = w->space.ToJson(w->space.FromIndex(i)).dump();
    r.mean_cost = testing::SyntheticCost(w->space, i);
    rows.push_back(r);
    return true;
  });
  w->table = BuildReplayTable(w->space, rows);
  SimulateOptions o;
  o.seeds = 3;
  Result<SimulationReport> r = Simulate(*w, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::cout << SummaryLine(o, *r) << "\n";
  EXPECT_GT(r->ratio(), 1.5) << SummaryLine(o, *r);
}

}  // namespace
}  // namespace tunefleet
