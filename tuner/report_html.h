// The `tunefleet report` page: one self-contained HTML file (inline CSS and SVG, no scripts, no network) built
// from a small data struct, so it is tested without a database (report_data.h fills it from a tuning log).
// Thread safety: pure function over values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet {

struct ReportMeasurement {
  int status = 0;          // MeasureStatus 0..8 (0 ok)
  double mean_cost = 0;    // seconds; 0 on failure
  std::string message;     // on failure
  // Results of one config (tune --confirm) count as their lower median in the best; none: a config of its own.
  std::optional<uint64_t> config_index;
};

// The measurements of one task on one template and device, in measurement order.
struct ReportSeries {
  std::string task_spec;
  std::string op;
  std::string template_name;
  int template_version = 0;
  std::string device_name;  // unique per device of the log (its fingerprint added where names repeat)
  double flops = 0;        // of one run of the task
  int64_t count = 0;       // occurrences in the models tuned into the log; 0 when unknown
  std::map<std::string, int64_t> model_counts;  // the same by model file name (empty: not kept by model)
  std::vector<ReportMeasurement> records;
  // Seconds: the best as `best` and the exports judge it (BestInSpace: a config outside the template's space on the
  // device is passed over); 0 when none of its configs is in the space; nullopt: the series' own fastest.
  std::optional<double> best_in_space;
};

struct ReportDevice {
  std::string name;
  std::string vendor;
  std::string driver;
  std::string opencl_version;
  std::string fingerprint;
  std::vector<std::pair<std::string, std::string>> details;  // further "key: value" lines (compute units, ...)
};

struct ReportData {
  std::string title = "tunefleet tuning report";
  std::string source;      // e.g. the database path
  std::string generated;   // e.g. "2026-11-29 17:00 UTC"
  std::vector<ReportDevice> devices;
  std::vector<ReportSeries> series;
};

// "ok", "invalid config", "host generation failed", ... "unknown" (DESIGN.md's status codes).
const char* MeasureStatusName(int status);

// The complete HTML document. Each series gets a section with exactly one tuning-curve SVG (class "curve") and
// one histogram SVG (class "histogram"), its errors by status, and a row in the model summary.
std::string RenderReportHtml(const ReportData& data);

}  // namespace tunefleet
