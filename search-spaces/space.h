// The knob engine: a search space is a list of knobs plus constraints; a config picks one choice per knob.
// Configs are addressed by a stable mixed-radix index (knob 0 varies fastest, as in AutoTVM's ConfigSpace),
// so an index means the same config in every run and on every machine.
// Thread safety: a Space is built by one thread (the Add* calls); once built, its const methods are safe to
// call from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/status.h"

namespace tunefleet {

enum class KnobKind {
  kSplit,  // an axis split into N factors ("sp" in AutoTVM), choice = vector of factors
  kList,   // one value out of a list ("ot" in AutoTVM), choice = {value}
  kBool,   // {0} or {1}
};

struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kList;
  // Each: split factors (outermost first), or one value. A split's outermost factor is the "rest" of the axis,
  // ceil(extent / product of the inner ones); AutoTVM writes it as -1 (see Space::ToTvmEntity).
  std::vector<std::vector<int64_t>> choices;
};

// A config: the index of the chosen option of each knob, in knob order.
using Config = std::vector<uint32_t>;

class Space;

// Read access to one config's values by knob name, used by constraints and templates.
class ConfigView {
 public:
  ConfigView(const Space& space, const Config& config) : space_(space), config_(config) {}
  // The single value of a list/bool knob; for a split knob, the product of its factors.
  int64_t Value(const std::string& knob) const;
  // The factors of a split knob (or the one value of a list knob).
  const std::vector<int64_t>& Factors(const std::string& knob) const;
  int64_t Value(int knob_index) const;
  const std::vector<int64_t>& Factors(int knob_index) const;

 private:
  const Space& space_;
  const Config& config_;
};

// Returns an empty string when the config is acceptable, else the reason it is not.
using Constraint = std::function<std::string(const ConfigView&)>;

class Space {
 public:
  Space() = default;

  // Builders (call before sharing the space). Split: all ordered factorizations of `extent` into `parts` factors; with
  // `pow2` only powers of two (then the product may be less than extent: the kernel guards the tail); `max_factor` caps
  // the inner parts (0 = no cap).
  Space& AddSplit(const std::string& name, int64_t extent, int parts, bool pow2 = false, int64_t max_factor = 0);
  Space& AddList(const std::string& name, std::vector<int64_t> values);
  Space& AddBool(const std::string& name);
  Space& AddKnob(Knob knob);
  Space& AddConstraint(std::string name, Constraint c);
  // The same with a fast predicate: `holds` decides validity (Valid, CountValid, sampling: no strings built);
  // `why` is called only to explain a config that `holds` rejected.
  Space& AddConstraint(std::string name, std::function<bool(const ConfigView&)> holds, Constraint why);

  const std::vector<Knob>& knobs() const { return knobs_; }
  int KnobIndex(const std::string& name) const;  // -1 when absent
  uint64_t RawSize() const;                      // product of choice counts

  uint64_t IndexOf(const Config& c) const;
  Config FromIndex(uint64_t index) const;  // index < RawSize()

  // Empty string when every constraint holds, else the first failing constraint's reason.
  std::string Check(const Config& c) const;
  bool Valid(const Config& c) const;  // same verdict as Check(c).empty(), without building the reason
  bool ValidIndex(uint64_t index) const { return Valid(FromIndex(index)); }

  // Exact count of valid configs (enumerates lazily; spaces of ~10^6-10^7 raw points are fine: gemm.buffer's
  // 3.3·10^6 raw points take about a second, so callers should count once per task, not per batch).
  uint64_t CountValid() const;
  // Uniform sample among valid configs by rejection (nullopt after max_tries rejections).
  std::optional<uint64_t> SampleValid(std::mt19937_64& rng, int max_tries = 100000) const;
  // Lazily visits valid configs in index order; the visitor returns false to stop.
  void ForEachValid(const std::function<bool(uint64_t index)>& visit) const;
  // Valid configs that differ from `index` in exactly one knob.
  std::vector<uint64_t> Neighbors(uint64_t index) const;

  // {"knob": [factors] or value, ...} (an object: nlohmann::json keeps keys sorted, so the text is canonical).
  // FromJson rejects unknown knobs, missing knobs and unknown choices; a split written AutoTVM-style with a
  // leading -1 matches the choice with the same inner factors.
  nlohmann::json ToJson(const Config& c) const;
  Result<Config> FromJson(const nlohmann::json& j) const;
  // AutoTVM's config entity: [[name, "sp", [-1, inner...]], [name, "ot", value], ...] in knob order.
  nlohmann::json ToTvmEntity(const Config& c) const;

 private:
  std::vector<Knob> knobs_;
  struct ConstraintEntry {
    std::string name;
    Constraint why;
    std::function<bool(const ConfigView&)> holds;  // may be empty: then `why` decides
  };
  bool InRange(const Config& c) const;
  std::vector<ConstraintEntry> constraints_;
};

}  // namespace tunefleet
