// What the tracker accepts as an agent's result: a status the protocol defines, and for a measured kernel (OK)
// one or more costs and a mean, each a finite number of seconds above 0. A result that breaks this comes from a
// broken or hostile agent: the tracker drops the agent, and its job is measured again elsewhere, so a NaN or a
// negative time never reaches a tuning log. Thread safety: pure function.
#pragma once

#include <optional>
#include <string>

#include "proto/tunefleet.pb.h"

namespace tunefleet::tracker {

// Longest failure message accepted (the agent cuts build logs to 4 KiB).
inline constexpr size_t kMaxResultMessageBytes = 64 * 1024;

// Why `result` is not acceptable, as the end of "sent a result that ..."; nullopt when it is.
std::optional<std::string> ResultProblem(const proto::MeasureResult& result);

}  // namespace tunefleet::tracker
