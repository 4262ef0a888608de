// Transfer learning support: which records of other tasks or devices warm-start the model, one row per config,
// and mapping a config recorded for another task (or space) onto this space by its JSON knob values, so its
// features can be computed with the current template.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "search-spaces/space.h"
#include "tuner/strategy.h"

namespace tunefleet {

struct MappedConfig {
  Config config;
  bool exact = false;  // every knob value exists in this space (else the nearest choice was taken)
};

// One row per (task, device, config): ok when any of its results ran, at the lower median of those, else failed
// (it enters the training set as the worst, like the task's own failures), in the order of first records. A
// config measured in several runs or passes weighs as one run of it, and `tune` and `simulate --transfer-from`
// warm-start from the same rows. A (task, device) with a single config is left out: one row ranks nothing, and as
// its own best it would only teach the model that its config is the best (a run's fallback round leaves one such
// row per task, the template's fallback config).
std::vector<HistoryRecord> CollapseHistory(const std::vector<HistoryRecord>& records);

// Maps `config_json` ({"knob": [factors] or value, ...}) onto `space`: exact when Space::FromJson accepts it;
// otherwise knob by knob, taking the choice nearest in log2 of its values (split factors compared position by
// position). Nullopt when the text is not JSON or a knob of this space is missing or has an incomparable value.
std::optional<MappedConfig> MapConfigJson(const Space& space, const std::string& config_json);

}  // namespace tunefleet
