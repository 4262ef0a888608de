#include "tuner/tune_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "tuner/milliseconds.h"

namespace tunefleet {
namespace {

std::string Fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string FormatTuneSummary(const TuneSummary& s) {
  // One row of cells per unit; the header is row 0. Columns 0 and 2 are text (left-aligned), the rest numbers.
  std::vector<std::vector<std::string>> rows = {
      {"task", "count", "template", "trials", "best (ms)", "GFLOPS", "speed-up"}};
  std::map<std::string, std::pair<double, double>> per_task;  // spec -> (best, fallback) over templates
  std::map<std::string, int64_t> counts;
  size_t untried = 0, unmeasured = 0;  // no tuning trial; of those, not even the fallback config
  for (const TunedTask& t : s.tasks) {
    const bool ok = t.best_cost > 0;
    rows.push_back({t.spec, std::to_string(t.count), t.template_name, std::to_string(t.trials),
                    ok ? FormatMilliseconds(t.best_cost * 1e3) : "-", ok ? Fixed(t.best_gflops, "%.2f") : "-",
                    ok && t.fallback_cost > 0 ? Fixed(t.fallback_cost / t.best_cost, "%.2fx") : "-"});
    if (t.tuning_trials == 0 && !t.exhausted) ++untried;  // a space of one config is done with its fallback
    if (t.tuning_trials == 0 && !t.exhausted && t.trials == 0) ++unmeasured;
    auto& [b, f] = per_task[t.spec];
    if (ok && (b == 0 || t.best_cost < b)) b = t.best_cost;
    if (t.fallback_cost > 0 && (f == 0 || t.fallback_cost < f)) f = t.fallback_cost;
    counts[t.spec] = t.count;
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const bool text = c == 0 || c == 2;
      line += text && c + 1 < row.size() ? PadRight(row[c], width[c]) : PadLeft(row[c], width[c]);
    }
    out += line + "\n";
  }
  if (!counts.empty() && (per_task.size() > 1 || counts.begin()->second > 1)) {
    // Both sums over the same tasks: those with a tuned latency and a measured fallback.
    double before = 0, after = 0;
    size_t summed = 0;
    for (const auto& [spec, bf] : per_task) {
      if (bf.first <= 0 || bf.second <= 0) continue;
      ++summed;
      before += counts[spec] * bf.second;
      after += counts[spec] * bf.first;
    }
    const size_t total = per_task.size();
    if (summed == total) {
      out += "estimated model latency (sum of count x latency): fallback " + Fixed(before * 1e3, "%.3f") +
             " ms -> tuned " + Fixed(after * 1e3, "%.3f") + " ms\n";
    } else if (summed > 0) {
      out += "estimated latency of " + std::to_string(summed) + " of " + std::to_string(total) +
             " tasks (sum of count x latency): fallback " + Fixed(before * 1e3, "%.3f") + " ms -> tuned " +
             Fixed(after * 1e3, "%.3f") + " ms; " + std::to_string(total - summed) +
             (total - summed == 1 ? " task is" : " tasks are") +
             " not counted (not tried yet, or without a successful fallback and tuned config)\n";
    }
  }
  if (untried > 0) {
    const std::string fallback =
        unmeasured == untried ? ""
        : unmeasured == 0     ? " beyond their fallback config"
                              : " (" + std::to_string(unmeasured) +
                                    (unmeasured == 1 ? " not even its" : " not even their") + " fallback config)";
    out += std::to_string(untried) + " of " + std::to_string(s.tasks.size()) +
           " task/template units have no trial yet" + fallback + ": " +
           (s.interrupted ? "the run was stopped before them (the same command continues"
                          : "the budget ended before them (the same command with a larger --trials or --time-budget "
                            "continues") +
           ", keeping every record)\n";
  }
  return out;
}

std::string FormatBestLines(const TuneSummary& s) {
  std::string out;
  for (const TunedTask& t : s.tasks) {
    if (t.trials == 0) continue;
    out += "best " + t.spec + " [" + t.template_name + "]: ";
    if (t.best_cost > 0)
      out += Fixed(t.best_gflops, "%.2f") + " GFLOPS, " + FormatMilliseconds(t.best_cost * 1e3) + " ms, config " +
             t.best_config + "\n";
    else
      out += "no successful measurement in " + std::to_string(t.trials) + " trial" + (t.trials == 1 ? "" : "s") +
             "\n";
  }
  return out;
}

}  // namespace tunefleet
