#include "tuner/report_data.h"

#include <ctime>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "tuner/best_in_space.h"
#include "tuner/task_workload.h"

namespace tunefleet {
namespace {

// Device details worth a line in the report, from the agent's DeviceInfo JSON (either field naming).
std::vector<std::pair<std::string, std::string>> DeviceDetails(const std::string& info_json) {
  static const char* const kSkip[] = {"name", "vendor", "fingerprint", "extensions", "driver_version",
                                      "driverVersion", "device_version", "deviceVersion"};
  std::vector<std::pair<std::string, std::string>> out;
  nlohmann::json j = ParseJson(info_json);
  if (!j.is_object()) return out;
  for (const auto& [key, value] : j.items()) {
    bool skip = false;
    for (const char* s : kSkip) skip = skip || key == s;
    if (skip) continue;
    out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

// The name a device goes by in the report: its name, and where another device of the log has the same name (two
// phones of one model on different drivers), its fingerprint too, so that their summaries are not merged.
std::map<int64_t, std::string> DeviceLabels(const std::vector<DeviceRow>& devices) {
  std::map<std::string, int> named;
  for (const auto& d : devices) ++named[d.name];
  std::map<int64_t, std::string> labels;
  for (const auto& d : devices) {
    labels[d.id] = named[d.name] > 1 ? d.name + " (" + d.fingerprint + ")" : d.name;
  }
  return labels;
}

std::string NowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

}  // namespace

Result<ReportData> LoadReportData(TuningLog& log, std::ostream& notes) {
  // One snapshot for every read below: `tune` or `import` may be writing the log meanwhile.
  TF_ASSIGN_OR_RETURN(ReadSnapshot snapshot, log.HoldReadSnapshot());
  TF_ASSIGN_OR_RETURN(std::vector<BestRow> best, BestInSpace(log, {}, notes));
  TF_ASSIGN_OR_RETURN(std::vector<DeviceRow> devices, log.Devices());
  TF_ASSIGN_OR_RETURN(std::vector<TaskRow> tasks, log.Tasks());
  TF_ASSIGN_OR_RETURN(std::vector<TemplateRow> templates, log.Templates());
  TF_ASSIGN_OR_RETURN(std::vector<RecordRow> records, log.Records(0, 0, 0));

  ReportData data;
  data.source = log.path();
  data.generated = NowUtc();
  const std::map<int64_t, std::string> device_labels = DeviceLabels(devices);
  for (const auto& d : devices) {
    ReportDevice rd;
    rd.name = d.name;
    rd.vendor = d.vendor;
    rd.driver = d.driver;
    rd.opencl_version = d.opencl_version;
    rd.fingerprint = d.fingerprint;
    rd.details = DeviceDetails(d.info_json);
    data.devices.push_back(std::move(rd));
  }
  std::map<int64_t, const TaskRow*> task_by_id;
  for (const auto& t : tasks) task_by_id[t.id] = &t;
  std::map<int64_t, const TemplateRow*> template_by_id;
  for (const auto& t : templates) template_by_id[t.id] = &t;

  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> series_index;
  for (const auto& r : records) {
    auto key = std::make_tuple(r.task_id, r.template_id, r.device_id);
    auto [it, added] = series_index.emplace(key, data.series.size());
    if (added) {
      ReportSeries s;
      if (auto t = task_by_id.find(r.task_id); t != task_by_id.end()) {
        s.task_spec = t->second->spec;
        s.op = t->second->op;
        s.flops = t->second->flops;
        nlohmann::json w = ParseJson(t->second->workload);
        if (w.is_object() && w.contains("count") && w["count"].is_number_integer()) s.count = w["count"];
        s.model_counts = ModelCounts(t->second->workload);
      } else {
        s.task_spec = "task #" + std::to_string(r.task_id);
      }
      if (auto t = template_by_id.find(r.template_id); t != template_by_id.end()) {
        s.template_name = t->second->name;
        s.template_version = t->second->version;
      }
      if (auto d = device_labels.find(r.device_id); d != device_labels.end()) s.device_name = d->second;
      data.series.push_back(std::move(s));
    }
    ReportMeasurement m;
    m.config_index = r.config_index;
    m.status = r.status;
    m.mean_cost = r.mean_cost;
    m.message = r.message;
    data.series[it->second].records.push_back(std::move(m));
  }
  // A series with successes and no row of BestInSpace has none in its template's space.
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> best_cost;
  for (const BestRow& b : best) {
    best_cost[{b.record.task_id, b.record.template_id, b.record.device_id}] = b.record.mean_cost;
  }
  for (const auto& [key, index] : series_index) {
    const auto b = best_cost.find(key);
    data.series[index].best_in_space = b != best_cost.end() ? b->second : 0.0;
  }
  return data;
}

}  // namespace tunefleet
