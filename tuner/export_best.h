// The `best` view of a tuning log: the fastest successful config per (task, template, device), as an
// aligned text table or as JSON. Pure formatting over storage's BestRow; no I/O.
// Thread safety: free functions over values.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/tuning_log.h"

namespace tunefleet {

// Columns: task, template (name@version), device, best_ms, gflops, record, config. One row per line.
// `shared_names`: device names the log holds under several fingerprints (two device models of one name); each row of
// such a device names its fingerprint. Rows of one name with two fingerprints among `rows` do so too.
std::string FormatBestTable(const std::vector<BestRow>& rows, const std::set<std::string>& shared_names = {});

// [{"task", "template", "template_version", "device", "device_fingerprint", "best_ms", "gflops",
//   "record_id", "config" (object)}...]
nlohmann::json BestToJson(const std::vector<BestRow>& rows);

}  // namespace tunefleet
