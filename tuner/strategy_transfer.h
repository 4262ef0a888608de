// Transfer learning support: which records of other tasks or devices warm-start the model, one row per config,
// and mapping a config recorded for another task (or space) onto this space by its JSON knob values, so its
// features can be computed with the current template.
// Thread safety: pure functions; a HistoryCollapser is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

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

// CollapseHistory done as the records arrive (read from a log one at a time), holding one entry per (task, device,
// config) and each task spec and device fingerprint once, not every record: a warm start against 256k records of
// its template held them all before collapsing them.
class HistoryCollapser {
 public:
  HistoryCollapser() = default;
  HistoryCollapser(const HistoryCollapser&) = delete;  // holds pointers into its own maps
  HistoryCollapser& operator=(const HistoryCollapser&) = delete;
  HistoryCollapser(HistoryCollapser&&) = default;  // a map's nodes move with it
  HistoryCollapser& operator=(HistoryCollapser&&) = default;

  void Add(const std::string& task_spec, const std::string& device_fingerprint, std::string config_json, bool ok,
           double cost, double flops);
  // The rows CollapseHistory gives for the records added so far, and (when `records` is set) how many of those
  // records are behind them (a (task, device) with a single config is left out, and its records with it).
  std::vector<HistoryRecord> Rows(size_t* records = nullptr) const;

 private:
  struct Row {
    uint32_t task = 0;    // index into specs_
    uint32_t device = 0;  // index into fingerprints_
    double flops = 0;
    size_t records = 0;
    std::vector<double> ok_costs;
  };
  static uint32_t Intern(std::map<std::string, uint32_t>& ids, std::vector<const std::string*>& names,
                         const std::string& name);

  std::map<std::string, uint32_t> spec_ids_, fingerprint_ids_;
  std::vector<const std::string*> specs_, fingerprints_;  // point into the maps' keys
  std::map<std::tuple<uint32_t, uint32_t, std::string>, size_t> row_of_;
  std::vector<Row> rows_;  // in the order of first records
  std::vector<const std::string*> configs_;  // each row's config: points into row_of_'s key
};

// Maps `config_json` ({"knob": [factors] or value, ...}) onto `space`: exact when Space::FromJson accepts it;
// otherwise knob by knob, taking the choice nearest in log2 of its values (split factors compared position by
// position). Nullopt when the text is not JSON or a knob of this space is missing or has an incomparable value.
std::optional<MappedConfig> MapConfigJson(const Space& space, const std::string& config_json);

}  // namespace tunefleet
