#include "tuner/annealing.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace tunefleet {
namespace {

// The kept set: the best `cap` scored indices seen so far, ordered by (score desc, index asc) so ties resolve
// the same way in every run.
class TopK {
 public:
  explicit TopK(size_t cap) : cap_(cap) {}
  // True when the set changed.
  bool Offer(uint64_t index, float score) {
    if (cap_ == 0 || members_.count(index) != 0) return false;
    const Entry e{score, index};
    if (entries_.size() >= cap_) {
      auto worst = std::prev(entries_.end());
      if (!(e < *worst)) return false;
      members_.erase(worst->index);
      entries_.erase(worst);
    }
    entries_.insert(e);
    members_.insert(index);
    return true;
  }
  std::vector<ScoredIndex> Sorted() const {
    std::vector<ScoredIndex> out;
    for (const Entry& e : entries_) out.push_back({e.index, e.score});
    return out;
  }

 private:
  struct Entry {
    float score;
    uint64_t index;
    bool operator<(const Entry& o) const { return BetterScored({index, score}, {o.index, o.score}); }
  };
  size_t cap_;
  std::set<Entry> entries_;
  std::unordered_set<uint64_t> members_;
};

// One step of a chain: change one knob at random; a few blind tries, then the exact neighbor list.
std::optional<uint64_t> Mutate(const Space& space, uint64_t index, std::mt19937_64& rng) {
  const auto& knobs = space.knobs();
  if (knobs.empty()) return std::nullopt;
  Config c = space.FromIndex(index);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const size_t k = std::uniform_int_distribution<size_t>(0, knobs.size() - 1)(rng);
    const size_t n = knobs[k].choices.size();
    if (n < 2) continue;
    Config m = c;
    const uint32_t shift = static_cast<uint32_t>(std::uniform_int_distribution<size_t>(1, n - 1)(rng));
    m[k] = static_cast<uint32_t>((c[k] + shift) % n);
    if (space.Valid(m)) return space.IndexOf(m);
  }
  const std::vector<uint64_t> nb = space.Neighbors(index);
  if (nb.empty()) return std::nullopt;
  return nb[std::uniform_int_distribution<size_t>(0, nb.size() - 1)(rng)];
}

int KnobDiff(const Config& a, const Config& b) {
  int d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d += a[i] != b[i];
  return d;
}

}  // namespace

Result<std::vector<ScoredIndex>> Anneal(const Space& space, const BatchScoreFn& score,
                                        const std::unordered_set<uint64_t>& exclude,
                                        const std::vector<uint64_t>& starts, size_t keep,
                                        const AnnealingOptions& opts) {
  std::mt19937_64 rng(opts.seed);
  std::vector<uint64_t> points;
  for (uint64_t s : starts) {
    if (points.size() >= static_cast<size_t>(opts.chains)) break;
    points.push_back(s);
  }
  while (points.size() < static_cast<size_t>(opts.chains)) {
    std::optional<uint64_t> s = space.SampleValid(rng, 1000);
    if (!s) break;
    points.push_back(*s);
  }
  if (points.empty()) return std::vector<ScoredIndex>{};

  TopK top(keep);
  TF_ASSIGN_OR_RETURN(std::vector<float> scores, score(points));
  for (size_t i = 0; i < points.size(); ++i) {
    if (exclude.count(points[i]) == 0) top.Offer(points[i], scores[i]);
  }
  // The temperature is relative to how much scores differ, since ranking margins have no natural scale.
  double mean = 0, var = 0;
  for (float s : scores) mean += s;
  mean /= static_cast<double>(scores.size());
  for (float s : scores) var += (s - mean) * (s - mean);
  const double spread = std::max(std::sqrt(var / static_cast<double>(scores.size())), 1e-6);

  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int quiet_steps = 0;
  std::vector<uint64_t> proposals(points.size());
  for (int step = 0; step < opts.max_steps && quiet_steps < opts.early_stop; ++step) {
    const double frac = opts.max_steps > 1 ? static_cast<double>(step) / (opts.max_steps - 1) : 1.0;
    const double temp = opts.temp_start + (opts.temp_end - opts.temp_start) * frac;
    for (size_t i = 0; i < points.size(); ++i) {
      std::optional<uint64_t> m = Mutate(space, points[i], rng);
      proposals[i] = m ? *m : points[i];
    }
    TF_ASSIGN_OR_RETURN(std::vector<float> new_scores, score(proposals));
    bool changed = false;
    for (size_t i = 0; i < points.size(); ++i) {
      if (exclude.count(proposals[i]) == 0) changed |= top.Offer(proposals[i], new_scores[i]);
      const double delta = (static_cast<double>(new_scores[i]) - scores[i]) / spread;
      const double u = unit(rng);  // drawn for every chain so the stream does not depend on scores
      if (delta >= 0 || (temp > 1e-9 && u < std::exp(delta / temp))) {
        points[i] = proposals[i];
        scores[i] = new_scores[i];
      }
    }
    quiet_steps = changed ? 0 : quiet_steps + 1;
  }
  return top.Sorted();
}

std::vector<uint64_t> PickDiverse(const Space& space, const std::vector<ScoredIndex>& ranked, size_t n,
                                  int min_knob_diff) {
  std::vector<uint64_t> picked;
  std::vector<Config> picked_configs;
  std::vector<bool> used(ranked.size(), false);
  for (int threshold = min_knob_diff; threshold >= 0 && picked.size() < n; --threshold) {
    for (size_t i = 0; i < ranked.size() && picked.size() < n; ++i) {
      if (used[i]) continue;
      const Config c = space.FromIndex(ranked[i].index);
      const bool far = std::all_of(picked_configs.begin(), picked_configs.end(),
                                   [&](const Config& p) { return KnobDiff(c, p) >= threshold; });
      if (!far) continue;
      used[i] = true;
      picked.push_back(ranked[i].index);
      picked_configs.push_back(c);
    }
  }
  return picked;
}

}  // namespace tunefleet
