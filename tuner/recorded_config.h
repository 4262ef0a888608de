// RecordedIndex: which config of a space a tuning-log record measured. The record's config JSON is what ran; its
// stored index is trusted only when the JSON cannot be read in this space (a log edited by hand may disagree).
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
