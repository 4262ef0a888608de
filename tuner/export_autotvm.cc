#include "tuner/export_autotvm.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json_parse.h"
#include "common/printable.h"
#include "search-spaces/device_limits.h"
#include "tuner/export_source.h"

namespace tunefleet {
namespace {

// AutoTVM's cost for a failed measurement.
constexpr double kErrorCost = 1e9;

// The successful records of configs measured more than once (tune --confirm, a --fresh pass) but the one each stands
// as: its lower median result (of two, the faster; ties to the earlier record), as `best` ranks it. TVM takes a
// workload's lowest cost over all lines, so every repeat written would make a config's one lucky run its pick.
std::set<int64_t> RepeatsBesideTheMedian(const ExportItems& items) {
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, std::vector<std::pair<double, int64_t>>> results;
  for (const ExportItem& it : items) {
    const RecordRow& r = it.record;
    // A result with a cost that is no time is skipped by itself: the config stands as the median of the others.
    const bool times = std::all_of(r.costs.begin(), r.costs.end(), [](double c) { return std::isfinite(c) && c > 0; });
    if (r.status != 0 || !times) continue;
    results[{r.task_id, r.template_id, r.device_id, r.config}].emplace_back(r.mean_cost, r.id);
  }
  std::set<int64_t> out;
  for (auto& [config, ok] : results) {
    if (ok.size() < 2) continue;
    std::sort(ok.begin(), ok.end());
    const int64_t median = ok[(ok.size() - 1) / 2].second;
    for (const auto& [cost, id] : ok)
      if (id != median) out.insert(id);
  }
  return out;
}

nlohmann::ordered_json AutotvmLine(const std::string& target, const TvmWorkload& workload,
                                   const nlohmann::json& entity, const RecordRow& record) {
  nlohmann::ordered_json line;
  line["input"] =
      nlohmann::ordered_json::array({target, workload.task_name, nlohmann::ordered_json::parse(workload.args.dump()),
                                     nlohmann::ordered_json::object()});
  nlohmann::ordered_json config;
  config["index"] = record.config_index;
  config["code_hash"] = nullptr;
  config["entity"] = nlohmann::ordered_json::parse(entity.dump());
  line["config"] = std::move(config);
  nlohmann::ordered_json costs = nlohmann::ordered_json::array();
  if (record.status == 0 && !record.costs.empty()) {
    for (double c : record.costs) costs.push_back(c);
  } else if (record.status == 0) {
    costs.push_back(record.mean_cost);
  } else {
    costs.push_back(kErrorCost);
  }
  line["result"] = nlohmann::ordered_json::array({costs, record.status, record.wall_time, record.timestamp});
  line["version"] = 0.2;
  line["tvm_version"] = kAutotvmTvmVersion;
  return line;
}

}  // namespace

Result<ExportCounts> ExportAutotvm(TuningLog& log, const AutotvmExportOptions& opts, std::ostream& out,
                                   std::ostream& notes) {
  TemplateLookup lookup = opts.lookup ? opts.lookup : [](const std::string& n) { return FindTemplate(n); };
  TF_ASSIGN_OR_RETURN(auto items, CollectExportItems(log, opts.best_only, lookup, notes));
  ExportCounts counts;
  const std::set<int64_t> repeats = RepeatsBesideTheMedian(items);
  std::set<std::string> noted;
  auto skip = [&](const ExportItem& it, const std::string& why) {
    ++counts.skipped;
    std::string key = it.task.spec + "|" + it.tmpl.name;
    if (noted.insert(key).second)
      notes << "skipped " << Printable(it.task.spec) << " (" << Printable(it.tmpl.name) << "): " << Printable(why)
            << "\n";
  };
  for (const ExportItem& it : items) {
    if (!MirrorsTvm(it.tmpl.name)) {
      skip(it, "template does not mirror TVM's knobs");
      continue;
    }
    auto task = Task::Parse(it.task.spec);
    if (!task.ok()) {
      skip(it, task.status().message());
      continue;
    }
    auto workload = TvmWorkloadFor(*task, it.tmpl.name);
    if (!workload.ok()) {
      skip(it, workload.status().message());
      continue;
    }
    const Template* tmpl = lookup(it.tmpl.name);
    if (!tmpl) {
      skip(it, "template is not built into this tunefleet");
      continue;
    }
    if (std::string other = OtherTemplateVersion(it, tmpl->version()); !other.empty()) {
      skip(it, other);
      continue;
    }
    if (it.record.status == 0 && !std::all_of(it.record.costs.begin(), it.record.costs.end(), [](double c) {
          return std::isfinite(c) && c > 0;
        })) {
      skip(it, "record " + std::to_string(it.record.id) + ": a cost that is not a finite time above 0");
      continue;
    }
    auto space = tmpl->MakeSpace(*task, DeviceLimits::From(it.info));
    if (!space.ok()) {
      skip(it, space.status().message());
      continue;
    }
    // Only a config of the space exports (a log edited by hand may hold others), so that TVM, and tunefleet's own
    // import, read back what ran; its index is the one of its knob values.
    std::string why;
    const nlohmann::json json = ParseJson(it.record.config, &why);
    auto config =
        json.is_discarded() ? Result<Config>(Status::InvalidArgument("config " + why)) : space->FromJson(json);
    std::string outside = config.ok() ? space->Check(*config) : config.status().message();
    if (!outside.empty()) {
      skip(it, "record " + std::to_string(it.record.id) + ": its config is not in the template's space: " + outside);
      continue;
    }
    // Last, so that a record skipped for its template, task or config is counted as skipped, as before.
    if (repeats.count(it.record.id)) {
      ++counts.repeats;
      continue;
    }
    RecordRow record = it.record;
    record.config_index = space->IndexOf(*config);
    out << AutotvmLine(TvmTarget(it.info), *workload, space->ToTvmEntity(*config), record)
               .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
        << "\n";
    ++counts.written;
  }
  if (!out) return Status::IOError("writing the AutoTVM log failed");
  return counts;
}

}  // namespace tunefleet
