// Renders a tracker Summary for people (aligned text tables) and for programs (JSON), as printed by
// `tunefleet query`. Pure functions; thread-safe.
#pragma once

#include <string>

#include "proto/tunefleet.pb.h"

namespace tunefleet {

// Two tables: agents (agent, key, device, state, lease holder, jobs done, last seen) and keys (free,
// leased, waiting); then, when any request waits, a third: each key's queue in serving order (place, client,
// priority, devices, waited). Empty cells are shown as "-".
std::string SummaryAsTable(const proto::SummaryReply& summary);
// {"tracker_version", "agents": [{agent_id, key, device, state, lease_holder, jobs_done, last_seen_s,
// peer}], "keys": [{key, free, leased, waiting, "queue": [{client, priority, count, min_count, waited_s}]}]},
// pretty-printed with a trailing newline.
std::string SummaryAsJson(const proto::SummaryReply& summary);

}  // namespace tunefleet
