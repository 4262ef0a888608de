// RecordedIndex: which config of a space a tuning-log record measured. The record's config JSON is what ran; its
// stored index is used only when the record holds no config text at all. A record whose JSON is not a config of the
// space (not JSON, an unknown knob, a value the knob does not take) names none: the stored index would file its
// result under another config (the replay took a hand-edited 0.1 us result as the space's best).
// Resume (TaskTuner) and the replay (simulate) read records this way.
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <optional>

#include "search-spaces/space.h"
#include "storage/tuning_log.h"

namespace tunefleet {

// The record's config index in `space`; nullopt when it names no config of the space.
std::optional<uint64_t> RecordedIndex(const Space& space, const RecordRow& record);

}  // namespace tunefleet
