#include "tuner/export_csv.h"

#include <cstdio>
#include <iterator>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tuner/export_source.h"

namespace tunefleet {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// Unix seconds with microseconds (%g would round to 100 s).
std::string Stamp(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  return buf;
}

}  // namespace

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvTextField(const std::string& s) {
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos) {
    return CsvField("'" + s);
  }
  return CsvField(s);
}

Result<size_t> ExportCsv(TuningLog& log, bool best_only, std::ostream& out, std::ostream& notes) {
  TF_ASSIGN_OR_RETURN(auto items, CollectExportItems(log, best_only, {}, notes));
  out << kCsvHeader << "\n";
  for (const auto& it : items) {
    const RecordRow& r = it.record;
    const double gflops = r.status == 0 && r.mean_cost > 0 ? it.task.flops / r.mean_cost / 1e9 : 0;
    const std::string fields[] = {
        std::to_string(r.id), std::to_string(r.session_id), it.task.spec, it.task.op, it.tmpl.name,
        std::to_string(it.tmpl.version), it.device.name, it.device.fingerprint, std::to_string(r.config_index),
        r.config, std::to_string(r.status), Num(r.mean_cost), Num(gflops), nlohmann::json(r.costs).dump(),
        Num(r.compile_time), Num(r.wall_time), Stamp(r.timestamp), r.message};
    constexpr size_t kDeviceName = 6, kFingerprint = 7, kMessage = 17;  // the text an agent or a driver chose
    for (size_t i = 0; i < std::size(fields); ++i) {
      if (i > 0) out << ",";
      const bool text = i == kDeviceName || i == kFingerprint || i == kMessage;
      out << (text ? CsvTextField(fields[i]) : CsvField(fields[i]));
    }
    out << "\n";
  }
  if (!out) return Status::IOError("writing the CSV failed");
  return items.size();
}

}  // namespace tunefleet
