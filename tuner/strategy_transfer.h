// Transfer learning support: maps a config recorded for another task (or space) onto this space by its JSON
// knob values, so its features can be computed with the current template.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "search-spaces/space.h"

namespace tunefleet {

struct MappedConfig {
  Config config;
  bool exact = false;  // every knob value exists in this space (else the nearest choice was taken)
};

// Maps `config_json` ({"knob": [factors] or value, ...}) onto `space`: exact when Space::FromJson accepts it;
// otherwise knob by knob, taking the choice nearest in log2 of its values (split factors compared position by
// position). Nullopt when the text is not JSON or a knob of this space is missing or has an incomparable value.
std::optional<MappedConfig> MapConfigJson(const Space& space, const std::string& config_json);

}  // namespace tunefleet
