#include "search-spaces/space.h"

#include <algorithm>
#include <cassert>

#include <nlohmann/json.hpp>

namespace tunefleet {
namespace {

// Appends every sequence of `parts` factors (each in `allowed`, product <= limit) to `out`.
void InnerFactors(const std::vector<int64_t>& allowed, int parts, int64_t limit, std::vector<int64_t>& prefix,
                  std::vector<std::vector<int64_t>>& out) {
  if (parts == 0) {
    out.push_back(prefix);
    return;
  }
  for (int64_t f : allowed) {
    if (f > limit) break;
    prefix.push_back(f);
    InnerFactors(allowed, parts - 1, limit / f, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

int64_t ConfigView::Value(int k) const {
  const auto& f = Factors(k);
  int64_t p = 1;
  for (int64_t v : f) p *= v;
  return p;
}

const std::vector<int64_t>& ConfigView::Factors(int k) const {
  return space_.knobs()[k].choices[config_[k]];
}

int64_t ConfigView::Value(const std::string& knob) const {
  int k = space_.KnobIndex(knob);
  assert(k >= 0 && "unknown knob");
  return Value(k);
}

const std::vector<int64_t>& ConfigView::Factors(const std::string& knob) const {
  int k = space_.KnobIndex(knob);
  assert(k >= 0 && "unknown knob");
  return Factors(k);
}

Space& Space::AddSplit(const std::string& name, int64_t extent, int parts, bool pow2, int64_t max_factor) {
  assert(extent >= 1 && parts >= 1);
  int64_t cap = max_factor > 0 ? max_factor : extent;
  std::vector<int64_t> allowed;
  for (int64_t f = 1; f <= std::min(cap, extent); f = pow2 ? f * 2 : f + 1) {
    if (pow2 || extent % f == 0) allowed.push_back(f);
  }
  std::vector<std::vector<int64_t>> inner;
  std::vector<int64_t> prefix;
  InnerFactors(allowed, parts - 1, extent, prefix, inner);
  Knob knob{name, KnobKind::kSplit, {}};
  for (auto& in : inner) {
    int64_t prod = 1;
    for (int64_t f : in) prod *= f;
    if (!pow2 && extent % prod != 0) continue;  // divisor splits cover the axis exactly
    std::vector<int64_t> choice{(extent + prod - 1) / prod};
    choice.insert(choice.end(), in.begin(), in.end());
    knob.choices.push_back(std::move(choice));
  }
  return AddKnob(std::move(knob));
}

Space& Space::AddList(const std::string& name, std::vector<int64_t> values) {
  Knob knob{name, KnobKind::kList, {}};
  for (int64_t v : values) knob.choices.push_back({v});
  return AddKnob(std::move(knob));
}

Space& Space::AddBool(const std::string& name) { return AddKnob(Knob{name, KnobKind::kBool, {{0}, {1}}}); }

Space& Space::AddKnob(Knob knob) {
  assert(!knob.choices.empty() && "a knob needs at least one choice");
  assert(KnobIndex(knob.name) < 0 && "duplicate knob");
  knobs_.push_back(std::move(knob));
  return *this;
}

Space& Space::AddConstraint(std::string name, Constraint c) {
  constraints_.push_back({std::move(name), std::move(c), nullptr});
  return *this;
}

Space& Space::AddConstraint(std::string name, std::function<bool(const ConfigView&)> holds, Constraint why) {
  constraints_.push_back({std::move(name), std::move(why), std::move(holds)});
  return *this;
}

bool Space::InRange(const Config& c) const {
  if (c.size() != knobs_.size()) return false;
  for (size_t i = 0; i < knobs_.size(); ++i)
    if (c[i] >= knobs_[i].choices.size()) return false;
  return true;
}

bool Space::Valid(const Config& c) const {
  if (!InRange(c)) return false;
  ConfigView view(*this, c);
  for (const auto& e : constraints_) {
    if (e.holds ? !e.holds(view) : !e.why(view).empty()) return false;
  }
  return true;
}

int Space::KnobIndex(const std::string& name) const {
  for (size_t i = 0; i < knobs_.size(); ++i)
    if (knobs_[i].name == name) return static_cast<int>(i);
  return -1;
}

uint64_t Space::RawSize() const {
  uint64_t n = 1;
  for (const auto& k : knobs_) n *= k.choices.size();
  return n;
}

uint64_t Space::IndexOf(const Config& c) const {
  uint64_t index = 0;
  for (size_t i = knobs_.size(); i-- > 0;) index = index * knobs_[i].choices.size() + c[i];
  return index;
}

Config Space::FromIndex(uint64_t index) const {
  Config c(knobs_.size());
  for (size_t i = 0; i < knobs_.size(); ++i) {
    uint64_t n = knobs_[i].choices.size();
    c[i] = static_cast<uint32_t>(index % n);
    index /= n;
  }
  return c;
}

std::string Space::Check(const Config& c) const {
  if (c.size() != knobs_.size()) return "config has " + std::to_string(c.size()) + " knobs, space has " +
                                        std::to_string(knobs_.size());
  for (size_t i = 0; i < knobs_.size(); ++i) {
    if (c[i] >= knobs_[i].choices.size()) return "knob " + knobs_[i].name + " has no choice " + std::to_string(c[i]);
  }
  ConfigView view(*this, c);
  for (const auto& e : constraints_) {
    if (e.holds && e.holds(view)) continue;
    std::string why = e.why(view);
    if (!why.empty()) return e.name + ": " + why;
    if (e.holds) return e.name + ": rejected";  // a predicate without an explanation
  }
  return {};
}

void Space::ForEachValid(const std::function<bool(uint64_t)>& visit) const {
  const uint64_t raw = RawSize();
  Config c(knobs_.size(), 0);
  for (uint64_t index = 0; index < raw; ++index) {
    if (Valid(c) && !visit(index)) return;
    // Odometer step, knob 0 fastest: cheaper than FromIndex's divisions.
    for (size_t i = 0; i < c.size(); ++i) {
      if (++c[i] < knobs_[i].choices.size()) break;
      c[i] = 0;
    }
  }
}

uint64_t Space::CountValid() const {
  uint64_t n = 0;
  ForEachValid([&n](uint64_t) {
    ++n;
    return true;
  });
  return n;
}

std::optional<uint64_t> Space::SampleValid(std::mt19937_64& rng, int max_tries) const {
  const uint64_t raw = RawSize();
  if (raw == 0) return std::nullopt;
  std::uniform_int_distribution<uint64_t> dist(0, raw - 1);
  for (int i = 0; i < max_tries; ++i) {
    uint64_t index = dist(rng);
    if (ValidIndex(index)) return index;
  }
  return std::nullopt;
}

std::vector<uint64_t> Space::Neighbors(uint64_t index) const {
  std::vector<uint64_t> out;
  const Config base = FromIndex(index);
  Config c = base;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    for (uint32_t j = 0; j < knobs_[k].choices.size(); ++j) {
      if (j == base[k]) continue;
      c[k] = j;
      if (Valid(c)) out.push_back(IndexOf(c));
    }
    c[k] = base[k];
  }
  return out;
}

nlohmann::json Space::ToJson(const Config& c) const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const auto& choice = knobs_[i].choices[c[i]];
    if (knobs_[i].kind == KnobKind::kSplit)
      j[knobs_[i].name] = choice;
    else
      j[knobs_[i].name] = choice[0];
  }
  return j;
}

Result<Config> Space::FromJson(const nlohmann::json& j) const {
  if (!j.is_object()) return Status::InvalidArgument("config JSON is not an object: " + j.dump());
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (KnobIndex(it.key()) < 0) return Status::InvalidArgument("config JSON has unknown knob '" + it.key() + "'");
  }
  Config c(knobs_.size());
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    auto it = j.find(k.name);
    if (it == j.end()) return Status::InvalidArgument("config JSON lacks knob '" + k.name + "'");
    std::vector<int64_t> want;
    if (it->is_array()) {
      for (const auto& v : *it) {
        if (!v.is_number_integer()) return Status::InvalidArgument("knob '" + k.name + "': " + it->dump() +
                                                                   " is not a list of integers");
        want.push_back(v.get<int64_t>());
      }
    } else if (it->is_boolean()) {
      want.push_back(it->get<bool>() ? 1 : 0);
    } else if (it->is_number_integer()) {
      want.push_back(it->get<int64_t>());
    } else {
      return Status::InvalidArgument("knob '" + k.name + "': " + it->dump() + " is not an integer");
    }
    bool tvm_rest = k.kind == KnobKind::kSplit && !want.empty() && want[0] == -1;
    int found = -1;
    for (size_t ci = 0; ci < k.choices.size() && found < 0; ++ci) {
      const auto& ch = k.choices[ci];
      if (ch == want ||
          (tvm_rest && ch.size() == want.size() && std::equal(ch.begin() + 1, ch.end(), want.begin() + 1)))
        found = static_cast<int>(ci);
    }
    if (found < 0) return Status::InvalidArgument("knob '" + k.name + "' has no choice " + it->dump());
    c[i] = static_cast<uint32_t>(found);
  }
  return c;
}

nlohmann::json Space::ToTvmEntity(const Config& c) const {
  nlohmann::json e = nlohmann::json::array();
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const auto& choice = knobs_[i].choices[c[i]];
    if (knobs_[i].kind == KnobKind::kSplit) {
      std::vector<int64_t> f = choice;
      f[0] = -1;
      e.push_back({knobs_[i].name, "sp", f});
    } else {
      e.push_back({knobs_[i].name, "ot", choice[0]});
    }
  }
  return e;
}

}  // namespace tunefleet
