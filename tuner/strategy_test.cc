#include "tuner/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "search-spaces/template.h"
#include "tuner/strategy_test_space.h"
#include "tuner/strategy_xgb.h"

namespace tunefleet {
namespace {

std::unique_ptr<Strategy> Make(const Space& s, const std::string& name, uint64_t seed, size_t plan = 64,
                               bool early_refits = true) {
  StrategyOptions o;
  o.name = name;
  o.seed = seed;
  o.plan_size = plan;
  o.early_refits = early_refits;
  Result<std::unique_ptr<Strategy>> r = MakeStrategyForSpace(o, nullptr, nullptr, s, nullptr);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

// Runs `rounds` batches of `batch` configs measured with the synthetic cost; returns every proposal in order.
std::vector<uint64_t> Tune(Strategy& st, const Space& s, int rounds, size_t batch,
                           const std::function<double(const Space&, uint64_t)>& cost = testing::SyntheticCost) {
  std::vector<uint64_t> all;
  for (int r = 0; r < rounds; ++r) {
    const std::vector<uint64_t> b = st.NextBatch(batch);
    std::vector<Observation> obs;
    for (uint64_t i : b) obs.push_back({i, true, cost(s, i)});
    st.Update(obs);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

double MeanCost(const Space& s, const std::vector<uint64_t>& idx) {
  double sum = 0;
  for (uint64_t i : idx) sum += testing::SyntheticCost(s, i);
  return sum / static_cast<double>(idx.size());
}

// The error message MakeStrategyForSpace gives for `o`; empty (and a test failure) when it accepts them.
std::string RefusalOf(const StrategyOptions& o) {
  const Space s = testing::TilingSpace();
  Result<std::unique_ptr<Strategy>> r = MakeStrategyForSpace(o, nullptr, nullptr, s, nullptr);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.status().message();
}

TEST(StrategyTest, GivenAnUnknownName_WeShouldGetOneClearError) {
  StrategyOptions o;
  o.name = "bayes";
  EXPECT_NE(RefusalOf(o).find("unknown strategy 'bayes'"), std::string::npos);
}

TEST(StrategyTest, GivenAnEnsembleSizeKappaObjectiveOrPriorPoolOutOfRange_XgbShouldRefuseWithOneClearError) {
  const Space s = testing::TilingSpace();
  StrategyOptions o;
  o.xgb_objective = "lambdamart";
  std::string why = RefusalOf(o);
  EXPECT_NE(why.find("--xgb-objective: 'lambdamart' is not auto, rank, ndcg or reg"), std::string::npos) << why;
  o.xgb_objective = "auto";
  o.xgb_ensemble = 0;
  why = RefusalOf(o);
  EXPECT_NE(why.find("--xgb-ensemble: 0 is not"), std::string::npos) << why;
  o.xgb_ensemble = 5;
  o.xgb_kappa = -1;
  why = RefusalOf(o);
  EXPECT_NE(why.find("--xgb-kappa"), std::string::npos) << why;
  o.xgb_kappa = 0;  // the mean alone is a valid choice
  EXPECT_TRUE(MakeStrategyForSpace(o, nullptr, nullptr, s, nullptr).ok());
  o.prior_pool = 65;
  why = RefusalOf(o);
  EXPECT_NE(why.find("--xgb-prior-pool: 65 is not from 0 to 64"), std::string::npos) << why;
  o.prior_pool = 0;  // a random first plan
  EXPECT_TRUE(MakeStrategyForSpace(o, nullptr, nullptr, s, nullptr).ok());
}

TEST(StrategyTest, GivenAFixedSeed_EveryStrategyShouldProposeTheSamePlans) {
  const Space s = testing::TilingSpace();
  for (const char* name : {"xgb", "ga", "random", "grid"}) {
    auto a = Make(s, name, 42, 32);
    auto b = Make(s, name, 42, 32);
    EXPECT_EQ(Tune(*a, s, 5, 16), Tune(*b, s, 5, 16)) << name;
  }
  auto c = Make(s, "xgb", 43, 32);
  auto d = Make(s, "xgb", 42, 32);
  EXPECT_NE(Tune(*c, s, 5, 16), Tune(*d, s, 5, 16));
}

TEST(StrategyTest, GivenASmallSpace_EveryStrategyShouldProposeEachValidConfigOnceThenStop) {
  Space s;
  s.AddList("a", {1, 2, 4, 8}).AddList("b", {1, 2, 4}).AddConstraint("a*b<=16", [](const ConfigView& v) {
    return v.Value("a") * v.Value("b") <= 16 ? "" : "too big";
  });
  const uint64_t valid = s.CountValid();
  for (const char* name : {"xgb", "ga", "random", "grid"}) {
    auto st = Make(s, name, 1, 4);
    const std::vector<uint64_t> all = Tune(*st, s, 10, 3, [](const Space& sp, uint64_t i) {
      const Config c = sp.FromIndex(i);
      const ConfigView v(sp, c);
      return 1.0 + static_cast<double>(v.Value("a") * v.Value("b") % 5);
    });
    EXPECT_EQ(all.size(), valid) << name;
    EXPECT_EQ(std::set<uint64_t>(all.begin(), all.end()).size(), valid) << name;
    for (uint64_t i : all) EXPECT_TRUE(s.ValidIndex(i)) << name;
    EXPECT_TRUE(st->NextBatch(3).empty()) << name;
  }
}

TEST(StrategyTest, GivenProposalsWithoutResults_RandomsStatusShouldCountOnlyTheResults) {
  const Space s = testing::TilingSpace();
  auto st = Make(s, "random", 1);
  const std::vector<uint64_t> plan = st->NextBatch(8);
  ASSERT_EQ(plan.size(), 8u);
  // Five arrive; three were abandoned (a stop, a time budget's end): they are proposed, not measured.
  std::vector<Observation> obs;
  for (size_t i = 0; i < 5; ++i) obs.push_back({plan[i], true, 1.0});
  st->Update(obs);
  EXPECT_EQ(st->StatusLine(), "random: 5 results");
}

TEST(StrategyTest, GivenGrid_WeShouldWalkValidConfigsInIndexOrderSkippingResumedOnes) {
  Space s;
  s.AddList("a", {1, 2, 3}).AddList("b", {1, 2}).AddConstraint("not a=2", [](const ConfigView& v) {
    return v.Value("a") == 2 ? "a is 2" : "";
  });
  auto st = Make(s, "grid", 1);
  st->Update({{3, true, 1.0}});  // resumed: already in the log
  EXPECT_EQ(st->NextBatch(10), (std::vector<uint64_t>{0, 2, 5}));
}

TEST(StrategyTest, GivenXgbAfterAFullPlan_WeShouldRefitAndBeatRandomSearch) {
  const Space s = testing::TilingSpace();
  auto xgb = Make(s, "xgb", 3, 64, /*early_refits=*/false);  // AutoTVM's schedule: a random plan, then refits
  auto rnd = Make(s, "random", 3);
  const std::vector<uint64_t> x = Tune(*xgb, s, 8, 16);  // two plans of 64
  const std::vector<uint64_t> r = Tune(*rnd, s, 8, 16);
  EXPECT_NE(xgb->StatusLine().find("refit #1 at 64 results (5 models, rank:ndcg)"), std::string::npos)
      << xgb->StatusLine();
  // The second plan comes from the model: clearly faster configs than random ones.
  const std::vector<uint64_t> x2(x.begin() + 64, x.end()), r2(r.begin() + 64, r.end());
  EXPECT_LT(MeanCost(s, x2), 0.7 * MeanCost(s, r2));
  auto* typed = dynamic_cast<XgbStrategy*>(xgb.get());
  ASSERT_NE(typed, nullptr);
  Tune(*xgb, s, 4, 16);  // third plan: the quality of the first model's plan is now known
  EXPECT_GT(typed->last_rank_correlation(), 0.3) << xgb->StatusLine();
}

// Configs that all cost the same teach the model nothing: it predicts one value for every config, and the progress
// line says so rather than "Spearman 0.00", which would read as a model that ranks by chance.
TEST(StrategyTest, GivenEqualCosts_XgbShouldSayItsPredictionsAreConstantNotASpearmanOfZero) {
  const Space s = testing::TilingSpace();
  auto xgb = Make(s, "xgb", 3, 64, /*early_refits=*/false);
  Tune(*xgb, s, 12, 16, [](const Space&, uint64_t) { return 1.0; });  // a plan, a refit, then a plan from it
  EXPECT_NE(xgb->StatusLine().find("Spearman n/a (constant predictions) on newest 64"), std::string::npos)
      << xgb->StatusLine();
  EXPECT_EQ(xgb->StatusLine().find("Spearman 0.00"), std::string::npos) << xgb->StatusLine();
}

TEST(StrategyTest, GivenNoHistory_XgbShouldFitEarlyInTheFirstPlanThenEveryPlan) {
  const Space s = testing::TilingSpace();
  auto xgb = Make(s, "xgb", 3);
  auto rnd = Make(s, "random", 3);
  const std::vector<uint64_t> x = Tune(*xgb, s, 1, 16);
  EXPECT_NE(xgb->StatusLine().find("no model yet"), std::string::npos) << xgb->StatusLine();
  const std::vector<uint64_t> x2 = Tune(*xgb, s, 3, 16);  // the rest of the first 64: from models of 16 and 32
  EXPECT_NE(xgb->StatusLine().find("refit #2 at 32 results"), std::string::npos) << xgb->StatusLine();
  Tune(*xgb, s, 4, 16);
  EXPECT_NE(xgb->StatusLine().find("refit #3 at 64 results"), std::string::npos) << xgb->StatusLine();
  Tune(*xgb, s, 4, 16);
  EXPECT_NE(xgb->StatusLine().find("refit #4 at 128 results"), std::string::npos) << xgb->StatusLine();
  const std::vector<uint64_t> r = Tune(*rnd, s, 4, 16);
  const std::vector<uint64_t> r2(r.begin() + 16, r.end());
  EXPECT_LT(MeanCost(s, x2), 0.8 * MeanCost(s, r2));
}

TEST(StrategyTest, GivenFailedConfigs_XgbShouldLearnToAvoidThem) {
  const Space s = testing::TilingSpace();
  const int vec = s.KnobIndex("vec");
  // Over several seeds: one seed's plan may spend a share on configs the ensemble is unsure about.
  constexpr int kSeeds = 5;
  size_t failed_in_second_plans = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    auto xgb = Make(s, "xgb", seed);
    for (int r = 0; r < 8; ++r) {
      const std::vector<uint64_t> b = xgb->NextBatch(16);
      std::vector<Observation> obs;
      for (uint64_t i : b) {
        const bool fails = s.FromIndex(i)[vec] == 1;  // every vectorized kernel "fails to compile"
        if (r >= 4) failed_in_second_plans += fails;
        obs.push_back({i, !fails, fails ? 0.0 : testing::SyntheticCost(s, i)});
      }
      xgb->Update(obs);
    }
  }
  EXPECT_LT(failed_in_second_plans, 12u * kSeeds);  // of 64 per seed; random search would fail about half
}

TEST(StrategyTest, GivenResultsThatNeverShowAnExtreme_XgbShouldExploreItWithItsEpsilonShare) {
  // The results show middle tile_x factors of 2 and more, the fastest at 4; none shows tile_x[1] = 1. A tree
  // model predicts that extreme like tile_x[1] = 2, a slow one, so its own picks seldom try it; the epsilon share
  // should, since those configs extend a feature beyond the range the model was trained on.
  const Space s = testing::TilingSpace();
  const int tx = s.KnobIndex("tile_x");
  auto middle = [&](uint64_t i) { return s.knobs()[tx].choices[s.FromIndex(i)[tx]][1]; };
  auto cost = [&](uint64_t i) { return 1e-3 * (1.0 + std::abs(std::log2(static_cast<double>(middle(i))) - 2)); };
  auto extremes_in_next_plan = [&](bool frontier) {
    StrategyOptions o;
    o.name = "xgb";
    o.seed = 3;
    o.frontier_picks = frontier;
    Result<std::unique_ptr<Strategy>> st = MakeStrategyForSpace(o, nullptr, nullptr, s, nullptr);
    EXPECT_TRUE(st.ok());
    std::vector<Observation> obs;
    s.ForEachValid([&](uint64_t i) {
      if (middle(i) > 1 && i % 5 == 0) obs.push_back({i, true, cost(i)});
      return obs.size() < 512;
    });
    (*st)->Update(obs);
    size_t extremes = 0;
    for (uint64_t i : (*st)->NextBatch(64)) extremes += middle(i) == 1;
    return extremes;
  };
  const size_t with = extremes_in_next_plan(true), without = extremes_in_next_plan(false);
  // The epsilon share of a plan of 64 is 3 configs: all of them try the extreme; random ones seldom do.
  EXPECT_EQ(with, 3u) << "without frontier picks: " << without;
  EXPECT_LT(without, with);
}

std::vector<HistoryRecord> HistoryOfAnotherDevice(const Space& s) {
  // Every valid config, measured on a device twice as slow: the ranking is the same as here.
  std::vector<HistoryRecord> h;
  s.ForEachValid([&](uint64_t i) {
    if (i % 3 == 0) h.push_back({"tiling:64,64", "other-device", s.ToJson(s.FromIndex(i)).dump(), true,
                                  2 * testing::SyntheticCost(s, i), 1e9});
    return true;
  });
  return h;
}

TEST(StrategyTest, GivenHistoryOfTheSameTemplate_WarmStartShouldChangeAndImproveTheFirstPlan) {
  const Space s = testing::TilingSpace();
  auto cold = Make(s, "xgb", 9);
  auto warm = Make(s, "xgb", 9);
  warm->WarmStart(HistoryOfAnotherDevice(s));
  const std::vector<uint64_t> c = cold->NextBatch(64), w = warm->NextBatch(64);
  EXPECT_NE(c, w);
  EXPECT_LT(MeanCost(s, w), 0.7 * MeanCost(s, c));
  EXPECT_NE(warm->StatusLine().find("warm start"), std::string::npos) << warm->StatusLine();
  // auto: an ensemble warm-started from another task's history alternates pairwise and ndcg members; one on own
  // results alone ranks by ndcg.
  EXPECT_NE(warm->StatusLine().find("(5 models, rank:pairwise + rank:ndcg)"), std::string::npos) << warm->StatusLine();
  Tune(*cold, s, 4, 16);
  EXPECT_NE(cold->StatusLine().find("(5 models, rank:ndcg)"), std::string::npos) << cold->StatusLine();
}

// A run's other tasks record more while a unit tunes. The strategy asks for fresher history only when its next plan
// is due; a later WarmStart replaces the history (it holds all the log holds), and a unit that started without any
// turns into a warm-started model.
TEST(StrategyTest, GivenFresherHistoryBeforeALaterPlan_ItShouldReplaceTheOldOneAndTheModelBecomeWarm) {
  const Space s = testing::TilingSpace();
  const std::vector<HistoryRecord> all = HistoryOfAnotherDevice(s);
  ASSERT_GT(all.size(), 40u);
  const std::vector<HistoryRecord> first(all.begin(), all.begin() + 10);

  auto warm = Make(s, "xgb", 5, /*plan=*/16, /*early_refits=*/false);
  EXPECT_FALSE(warm->WantsHistoryRefresh());  // no plan yet
  warm->WarmStart(first);
  Tune(*warm, s, 1, 8);
  EXPECT_FALSE(warm->WantsHistoryRefresh()) << "half of the plan is left";
  Tune(*warm, s, 1, 8);
  EXPECT_TRUE(warm->WantsHistoryRefresh()) << "the next plan is due";
  EXPECT_NE(warm->StatusLine().find("warm start 10 history rows"), std::string::npos) << warm->StatusLine();
  warm->WarmStart(all);
  warm->NextBatch(8);
  EXPECT_NE(warm->StatusLine().find("warm start " + std::to_string(all.size()) + " history rows"), std::string::npos)
      << warm->StatusLine();  // replaced, not added to the 10

  auto cold = Make(s, "xgb", 5, /*plan=*/16, /*early_refits=*/false);
  Tune(*cold, s, 2, 8);
  cold->NextBatch(8);
  EXPECT_NE(cold->StatusLine().find("(5 models, rank:ndcg)"), std::string::npos) << cold->StatusLine();
  Tune(*cold, s, 1, 8);  // the rest of the second plan
  ASSERT_TRUE(cold->WantsHistoryRefresh());
  cold->WarmStart(all);
  cold->NextBatch(8);
  EXPECT_NE(cold->StatusLine().find("(5 models, rank:pairwise + rank:ndcg)"), std::string::npos)
      << cold->StatusLine();
  EXPECT_NE(cold->StatusLine().find("warm start"), std::string::npos) << cold->StatusLine();
}

TEST(StrategyTest, GivenHistoryFromASpaceWithOtherFactors_WarmStartShouldMapConfigsToTheNearestChoices) {
  const Space s = testing::TilingSpace();
  Space other;  // an axis of 128: some factors (e.g. 128) do not exist in this space
  other.AddSplit("tile_x", 128, 3).AddSplit("tile_y", 128, 3).AddList("unroll", {1, 2, 4, 8}).AddBool("vec");
  std::vector<HistoryRecord> h;
  other.ForEachValid([&](uint64_t i) {
    // The synthetic cost reads knobs by name, so it prices configs of the other space the same way.
    if (i % 4 == 0) {
      h.push_back({"tiling:128,128", "dev", other.ToJson(other.FromIndex(i)).dump(), true,
                   testing::SyntheticCost(other, i), 1e9});
    }
    return true;
  });
  auto cold = Make(s, "xgb", 11);
  auto warm = Make(s, "xgb", 11);
  warm->WarmStart(h);
  EXPECT_NE(warm->StatusLine().find("mapped to nearest"), std::string::npos) << warm->StatusLine();
  EXPECT_LT(MeanCost(s, warm->NextBatch(64)), MeanCost(s, cold->NextBatch(64)));
}

TEST(StrategyTest, GivenHistoryOfASiblingTask_WarmStartShouldFeatureEachRecordInItsOwnTask) {
  const Template* gemm = FindTemplate("gemm.buffer");
  ASSERT_NE(gemm, nullptr);
  const DeviceLimits limits;
  const Task task = Task::Parse("gemm:64,64,64").value();
  const Task sibling = Task::Parse("gemm:128,64,64").value();
  const Space space = gemm->MakeSpace(task, limits).value();
  const Space sibling_space = gemm->MakeSpace(sibling, limits).value();
  std::vector<HistoryRecord> h;
  sibling_space.ForEachValid([&](uint64_t i) {
    h.push_back({sibling.ToSpec(), "fp", sibling_space.ToJson(sibling_space.FromIndex(i)).dump(), true,
                 1e-3 * static_cast<double>(1 + h.size() % 7), gemm->Flops(sibling)});
    return h.size() < 40;
  });
  StrategyOptions o;
  Result<std::unique_ptr<Strategy>> st = MakeStrategy(o, *gemm, task, space, limits);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  (*st)->WarmStart(h);
  EXPECT_NE((*st)->StatusLine().find("warm start 40 history rows (40 with their own task's features)"),
            std::string::npos)
      << (*st)->StatusLine();
  EXPECT_EQ((*st)->NextBatch(16).size(), 16u);
}

// A task resumed from a large log: its refits train on at most kMaxOwnFitRows of its results (tuner/fit_rows.h).
TEST(StrategyTest, GivenMoreOwnResultsThanARefitTakes_XgbShouldFitOnABoundedShareAndSaySo) {
  const Space s = testing::TilingSpace();
  std::vector<Observation> resumed;
  for (int pass = 0; pass < 3; ++pass) {  // every valid config measured three times: a config's repeats
    s.ForEachValid([&](uint64_t i) {
      resumed.push_back({i, true, testing::SyntheticCost(s, i) * (1.0 + 0.01 * pass)});
      return true;
    });
  }
  ASSERT_GT(resumed.size(), 8192u);
  auto xgb = Make(s, "xgb", 5);
  xgb->Update(resumed);
  xgb->NextBatch(16);
  EXPECT_NE(xgb->StatusLine().find("at " + std::to_string(resumed.size()) + " results (fitted on 8192 of them)"),
            std::string::npos)
      << xgb->StatusLine();
}

TEST(StrategyTest, GivenAVeryLargeHistory_WarmStartShouldThinItAndStillHelp) {
  const Space s = testing::TilingSpace();
  std::vector<HistoryRecord> h;
  for (const char* device : {"dev-a", "dev-b", "dev-c"}) {
    s.ForEachValid([&](uint64_t i) {
      h.push_back({"tiling:64,64", device, s.ToJson(s.FromIndex(i)).dump(), true, testing::SyntheticCost(s, i), 1e9});
      return true;
    });
  }
  ASSERT_GT(h.size(), 8192u);
  auto cold = Make(s, "xgb", 13);
  auto warm = Make(s, "xgb", 13);
  warm->WarmStart(h);
  const std::string line = warm->StatusLine();
  const size_t at = line.find("warm start ");
  ASSERT_NE(at, std::string::npos) << line;
  EXPECT_LE(std::stoul(line.substr(at + 11)), 8192u + 3u) << line;
  EXPECT_LT(MeanCost(s, warm->NextBatch(64)), 0.7 * MeanCost(s, cold->NextBatch(64)));
}

}  // namespace
}  // namespace tunefleet
