#include "tuner/report_html.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "common/html_escape.h"
#include "common/utf8.h"
#include "tuner/milliseconds.h"
#include "tuner/report_svg.h"
#include "tuner/strategy_common.h"

namespace tunefleet {
namespace {

constexpr const char* kStyle = R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px;margin:0 0 6px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;font-size:13px}
th{background:#f3f5f7;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}.task{border:1px solid #ddd;border-radius:6px;padding:12px;margin:14px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}.muted{color:#777}.err{color:#b03a2e})";

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct SeriesStats {
  int ok = 0;
  size_t repeats = 0;    // records of a config already measured (tune --confirm, --fresh passes): not trials
  std::vector<bool> is_repeat;  // per record of the series
  double best_cost = 0;  // seconds, 0 when no success; the lowest lower median of a config's results, as `best`
  bool passed_over = false;  // faster configs not in the template's space were passed over for best_cost
  std::map<uint64_t, double> config_cost;  // config index -> the lower median of its successful results
  std::map<int, int> by_status;
  std::map<int, std::string> first_message;
};

SeriesStats Stats(const ReportSeries& s) {
  SeriesStats st;
  std::map<uint64_t, std::vector<double>> ok_costs;  // config index -> its successful results
  std::vector<double> singles;                       // results without an index: each a config of its own
  std::set<uint64_t> seen;
  for (const auto& r : s.records) {
    ++st.by_status[r.status];
    st.is_repeat.push_back(r.config_index && !seen.insert(*r.config_index).second);
    if (st.is_repeat.back()) ++st.repeats;
    if (r.status == 0 && r.mean_cost > 0) {
      ++st.ok;
      if (r.config_index) {
        ok_costs[*r.config_index].push_back(r.mean_cost);
      } else {
        singles.push_back(r.mean_cost);
      }
    } else if (r.status != 0 && !st.first_message.count(r.status)) {
      st.first_message[r.status] = r.message;
    }
  }
  for (const auto& [index, costs] : ok_costs) {
    st.config_cost[index] = LowerMedian(costs);
    singles.push_back(st.config_cost[index]);
  }
  for (double cost : singles) {
    if (st.best_cost == 0 || cost < st.best_cost) st.best_cost = cost;
  }
  if (s.best_in_space && *s.best_in_space != st.best_cost) {
    st.passed_over = st.best_cost > 0 && (*s.best_in_space == 0 || *s.best_in_space > st.best_cost);
    st.best_cost = *s.best_in_space;
  }
  return st;
}

// A failure's message in the page: its first 300 bytes, cut between characters.
std::string FirstMessage(const std::string& message) {
  const std::string_view head = Utf8Head(message, 300);
  return HtmlEscape(std::string(head)) + (head.size() < message.size() ? "&hellip;" : "");
}

double Gflops(double flops, double seconds) { return seconds > 0 && flops > 0 ? flops / seconds / 1e9 : 0; }

void Devices(const ReportData& d, std::ostringstream& out) {
  out << "<h2>Devices</h2>";
  if (d.devices.empty()) {
    out << "<p class=\"muted\">No device recorded.</p>";
    return;
  }
  out << "<table><tr><th>name</th><th>vendor</th><th>driver</th><th>OpenCL</th><th>fingerprint</th>"
         "<th>details</th></tr>";
  for (const auto& dev : d.devices) {
    out << "<tr><td>" << HtmlEscape(dev.name) << "</td><td>" << HtmlEscape(dev.vendor) << "</td><td>"
        << HtmlEscape(dev.driver) << "</td><td>" << HtmlEscape(dev.opencl_version) << "</td><td><code>"
        << HtmlEscape(dev.fingerprint) << "</code></td><td>";
    for (const auto& [k, v] : dev.details) out << HtmlEscape(k) << ": " << HtmlEscape(v) << "<br>";
    out << "</td></tr>";
  }
  out << "</table>";
}

// One table per device: the best of each task over its templates, and sum of count x latency.
void Summary(const ReportData& d, const std::vector<SeriesStats>& stats, std::ostringstream& out) {
  out << "<h2>Model summary</h2>";
  if (d.series.empty()) out << "<p class=\"muted\">No task tuned.</p>";
  std::map<std::string, std::map<std::string, size_t>> best;  // device -> task -> series index
  std::map<std::string, std::vector<std::string>> order;      // device -> tasks in first-seen order
  for (size_t i = 0; i < d.series.size(); ++i) {
    const auto& s = d.series[i];
    auto& per_task = best[s.device_name];
    auto it = per_task.find(s.task_spec);
    if (it == per_task.end()) {
      per_task[s.task_spec] = i;
      order[s.device_name].push_back(s.task_spec);
    } else {
      double cur = stats[it->second].best_cost, mine = stats[i].best_cost;
      if (mine > 0 && (cur == 0 || mine < cur)) it->second = i;
    }
  }
  for (const auto& [device, tasks] : order) {
    out << "<h3>" << HtmlEscape(device.empty() ? "(unknown device)" : device) << "</h3>"
        << "<table><tr><th>task</th><th>count</th><th>best latency (ms)</th><th>GFLOPS</th><th>template</th>"
           "<th>count &times; latency (ms)</th></tr>";
    double total = 0;
    size_t counted = 0, no_count = 0, no_latency = 0;
    for (const auto& spec : tasks) {
      size_t i = best[device][spec];
      const auto& s = d.series[i];
      const double ms = stats[i].best_cost * 1e3;
      out << "<tr><td><code>" << HtmlEscape(spec) << "</code></td><td class=\"n\">"
          << (s.count > 0 ? std::to_string(s.count) : "?") << "</td><td class=\"n\">"
          << (ms > 0 ? FormatMilliseconds(ms) : "&mdash;") << "</td><td class=\"n\">"
          << (ms > 0 ? Fixed(Gflops(s.flops, stats[i].best_cost), 2) : "&mdash;") << "</td><td>"
          << HtmlEscape(s.template_name) << "</td><td class=\"n\">";
      if (s.count > 0 && ms > 0) {
        out << Fixed(s.count * ms, 4);
        total += s.count * ms;
        ++counted;
      } else {
        out << "&mdash;";
        ++(ms > 0 ? no_count : no_latency);
      }
      out << "</td></tr>";
    }
    // What the sum leaves out, in words: a task without a known count, or without a successful result.
    std::string left_out;
    for (const auto& [n, why] : {std::pair<size_t, const char*>{no_count, "without a known count"},
                                 {no_latency, "without a successful result"}}) {
      if (n == 0) continue;
      left_out += std::string(left_out.empty() ? " (leaves out " : ", ") + std::to_string(n) +
                  (n == 1 ? " task " : " tasks ") + why;
    }
    if (!left_out.empty()) left_out += ")";
    out << "<tr><th colspan=\"5\">&Sigma; count &times; latency" << left_out << "</th><td class=\"n\"><b>"
        << (counted > 0 ? Fixed(total, 4) : "&mdash;") << "</b></td></tr></table>";
  }
}

void Section(const ReportSeries& s, const SeriesStats& st, size_t index, std::ostringstream& out) {
  // Numbered from 1, as `tasks` and `tune` number tasks.
  out << "<div class=\"task\" id=\"task-" << index + 1 << "\"><h3>" << index + 1 << ". <code>"
      << HtmlEscape(s.task_spec)
      << "</code></h3><p>template <code>" << HtmlEscape(s.template_name) << " v" << s.template_version
      << "</code> on <b>" << HtmlEscape(s.device_name) << "</b> &middot; " << s.records.size() - st.repeats
      << (s.records.size() - st.repeats == 1 ? " trial" : " trials");
  if (st.repeats > 0) {  // ok counts results, repeats included
    out << " (+" << st.repeats << (st.repeats == 1 ? " repeat); " : " repeats); ") << st.ok << " of "
        << s.records.size() << (s.records.size() == 1 ? " result ok" : " results ok");
  } else {
    out << ", " << st.ok << " ok";
  }
  if (st.best_cost > 0) {
    out << " &middot; best " << FormatMilliseconds(st.best_cost * 1e3) << " ms = "
        << Fixed(Gflops(s.flops, st.best_cost), 2) << " GFLOPS";
  }
  if (st.passed_over) {
    out << " <span class=\"muted\">(" << (st.best_cost > 0 ? "faster configs" : "its configs")
        << " passed over: not in the template's space on this device, as <code>tunefleet best</code> and the exports "
           "judge them)</span>";
  }
  // A task given by --task has no model: its count (1) is said only when it is more.
  if (s.count > 1 || (s.count == 1 && !s.model_counts.empty())) {
    out << " &middot; occurs " << s.count << "&times;" << (s.model_counts.empty() ? "" : " in ");
    if (s.model_counts.size() == 1 && s.model_counts.begin()->second == s.count) {
      out << "<code>" << HtmlEscape(s.model_counts.begin()->first) << "</code>";
    } else if (!s.model_counts.empty()) {
      out << "the models (";
      bool first = true;
      for (const auto& [model, n] : s.model_counts) {
        out << (first ? "" : ", ") << "<code>" << HtmlEscape(model) << "</code> " << n << "&times;";
        first = false;
      }
      out << ")";
    }
  }
  out << "</p><div class=\"charts\">";
  // One point per trial: a config measured more than once stands at its median, where its first result was, and its
  // repeats add no point, so the curve ends at the header's best.
  std::vector<double> curve, ok;
  for (size_t i = 0; i < s.records.size(); ++i) {
    const ReportMeasurement& r = s.records[i];
    if (st.is_repeat[i]) continue;
    double cost = r.status == 0 ? r.mean_cost : 0;
    if (r.config_index) {
      const auto median = st.config_cost.find(*r.config_index);
      cost = median != st.config_cost.end() ? median->second : 0;
    }
    const double g = cost > 0 ? (s.flops > 0 ? Gflops(s.flops, cost) : 1e-3 / cost) : -1;
    curve.push_back(g);
    if (g >= 0) ok.push_back(g);
  }
  const std::string unit = s.flops > 0 ? "GFLOPS" : "runs/ms";
  out << TuningCurveSvg(curve, unit) << HistogramSvg(ok, 20, unit) << "</div>";
  out << "<table><tr><th>status</th><th>results</th><th>first message</th></tr>";
  for (const auto& [status, n] : st.by_status) {
    auto msg = st.first_message.find(status);
    out << "<tr><td" << (status != 0 ? " class=\"err\"" : "") << ">" << status << " " << MeasureStatusName(status)
        << "</td><td class=\"n\">" << n << "</td><td><code>"
        << FirstMessage(msg == st.first_message.end() ? "" : msg->second) << "</code></td></tr>";
  }
  out << "</table></div>";
}

}  // namespace

const char* MeasureStatusName(int status) {
  static const char* const kNames[] = {"ok",           "invalid config",  "host generation failed",
                                       "device compile failed", "runtime error", "wrong answer",
                                       "build timeout", "run timeout",     "unknown"};
  return status >= 0 && status <= 8 ? kNames[status] : "unknown";
}

std::string RenderReportHtml(const ReportData& d) {
  std::vector<SeriesStats> stats;
  for (const auto& s : d.series) stats.push_back(Stats(s));
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << HtmlEscape(d.title)
      << "</title><style>" << kStyle << "</style></head><body><h1>" << HtmlEscape(d.title) << "</h1><p class=\"muted\">"
      << HtmlEscape(d.source) << (d.generated.empty() ? "" : " &middot; generated " + HtmlEscape(d.generated))
      << " &middot; " << d.series.size() << " tuned (task, template, device) series</p>";
  Summary(d, stats, out);
  Devices(d, out);
  out << "<h2>Tasks</h2>";
  if (d.series.empty()) out << "<p class=\"muted\">No measurement recorded.</p>";
  for (size_t i = 0; i < d.series.size(); ++i) Section(d.series[i], stats[i], i, out);
  out << "</body></html>\n";
  return out.str();
}

}  // namespace tunefleet
