#include "tuner/report_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "common/html_escape.h"

namespace tunefleet {
namespace {

// The right margin holds half of the last x label ("12.5k"): at 12 px, "100000" was cut to "10000".
constexpr double kWidth = 524, kHeight = 220;
constexpr double kLeft = 56, kRight = 16, kTop = 12, kBottom = 38;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
// The grid, in pixels, that a long tuning curve's marks are snapped to (a dot's radius is 1.8).
constexpr double kSnap = 2;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string SvgOpen(const std::string& cls, const std::string& title) {
  return "<svg class=\"" + cls + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) +
         "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" role=\"img\"><title>" + HtmlEscape(title) + "</title>";
}

std::string Text(double x, double y, const std::string& s, const std::string& anchor, const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" font-size=\"11\"" + extra +
         ">" + HtmlEscape(s) + "</text>";
}

// The top of an axis from 0 that reaches `v` (> 0), in at most 5 intervals of 1, 2, 2.5 or 5 times a power of ten,
// the smallest such: 226 GFLOPS is drawn 0, 50, ..., 250 (it was 0, 56.6, 113, 170, 226). `integer`: whole steps
// only (counts of configs).
struct AxisScale {
  double top = 1;
  int intervals = 1;
};
AxisScale ScaleFor(double v, bool integer) {
  // Not finite, or so small that a power of ten under it is no normal number (a log's flops edited by hand): one
  // interval, as drawn.
  if (!std::isfinite(v) || v < 1e-290) return {std::isfinite(v) && v > 0 ? v : 1, 1};
  for (double power = std::pow(10.0, std::floor(std::log10(v / 5)));; power *= 10) {
    for (const double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * power;
      if (integer && step != std::floor(step)) continue;
      const double n = std::max(1.0, std::ceil(v / step - 1e-9));
      if (n <= 5) return {n * step, static_cast<int>(n)};
    }
  }
}

// Axes with y ticks at `y.intervals` steps (0..y.top) and x labels at `x_ticks`, in x_min..x_max. `integer_y`
// labels only the y ticks at whole numbers (counts of configs).
std::string Axes(double x_min, double x_max, const std::vector<double>& x_ticks, AxisScale y,
                 const std::string& x_label, const std::string& y_label, bool integer_y) {
  std::string s = "<g stroke=\"#444\" fill=\"none\"><line x1=\"" + Num(kLeft) + "\" y1=\"" + Num(kTop + kPlotH) +
                  "\" x2=\"" + Num(kLeft + kPlotW) + "\" y2=\"" + Num(kTop + kPlotH) + "\"/><line x1=\"" + Num(kLeft) +
                  "\" y1=\"" + Num(kTop) + "\" x2=\"" + Num(kLeft) + "\" y2=\"" + Num(kTop + kPlotH) + "\"/></g>";
  for (int i = 0; i <= y.intervals; ++i) {
    const double at = kTop + kPlotH - kPlotH * i / y.intervals;
    s += "<line x1=\"" + Num(kLeft) + "\" y1=\"" + Num(at) + "\" x2=\"" + Num(kLeft + kPlotW) + "\" y2=\"" +
         Num(at) + "\" stroke=\"#ddd\"/>";
    const double v = y.top * i / y.intervals;
    if (!integer_y || v == std::floor(v)) s += Text(kLeft - 4, at + 4, ShortNumber(v), "end");
  }
  for (const double v : x_ticks) {
    s += Text(kLeft + kPlotW * (v - x_min) / (x_max - x_min), kTop + kPlotH + 14, ShortNumber(v), "middle");
  }
  s += Text(kLeft + kPlotW / 2, kHeight - 4, x_label, "middle");
  s += Text(12, kTop + kPlotH / 2, y_label, "middle",
            " transform=\"rotate(-90 12 " + Num(kTop + kPlotH / 2) + ")\"");
  return s;
}

}  // namespace


std::string ShortNumber(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a < 0.1 || a >= 1e4)) {
    // Labels of at most 5 characters (750µ, 12.5m, 100k, 10G): "0.00075" ran into the axis's name, "100000" past
    // the chart's edge. The unit is the first whose mantissa, as printed, lies in [1, 1000).
    static constexpr std::pair<double, const char*> kUnits[] = {
        {1e-12, "p"}, {1e-9, "n"}, {1e-6, "\u00b5"}, {1e-3, "m"}, {1e3, "k"},
        {1e6, "M"},   {1e9, "G"},  {1e12, "T"},       {1e15, "P"}, {1e18, "E"}};
    for (const auto& [scale, unit] : kUnits) {
      std::snprintf(buf, sizeof buf, "%.3g", a / scale);
      const double printed = std::strtod(buf, nullptr);
      if (std::strchr(buf, 'e') == nullptr && printed >= 1 && printed < 1000) {
        return (v < 0 ? "-" : "") + std::string(buf) + unit;
      }
    }
    std::snprintf(buf, sizeof buf, "%.3g", v);  // 1e+25
    return buf;
  }
  if (a >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

std::string TuningCurveSvg(const std::vector<double>& values, const std::string& y_label) {
  const size_t n = values.size();
  double y_max = 0;
  for (double v : values) {
    if (std::isfinite(v)) y_max = std::max(y_max, v);
  }
  const AxisScale scale = ScaleFor(y_max > 0 ? y_max : 1, /*integer=*/false);
  y_max = scale.top;
  const double x_max = std::max<double>(n, 2);
  // Trial 1, then round trial numbers up to the last trial (1, 50, 100 for 130 trials; a 1-trial curve spans 1..2,
  // and its axis says 1 alone).
  std::vector<double> x_ticks{1};
  const AxisScale trials = ScaleFor(static_cast<double>(std::max<size_t>(n, 1)), /*integer=*/true);
  const double step = trials.top / trials.intervals;
  for (double t = step; t <= static_cast<double>(n); t += step) {
    if (t > 1) x_ticks.push_back(t);
  }
  auto px = [&](double trial) { return kLeft + kPlotW * (trial - 1) / (x_max - 1); };
  auto py = [&](double v) { return kTop + kPlotH - kPlotH * v / y_max; };

  std::string s =
      SvgOpen("curve", "best " + y_label + " so far over " + std::to_string(n) + (n == 1 ? " trial" : " trials"));
  s += Axes(1, x_max, x_ticks, scale, "trial", y_label, /*integer_y=*/false);
  // Past one trial per pixel of the plot's width, marks are snapped to a grid of kSnap pixels and drawn once per
  // cell: the picture is the same, and the file no longer grows with the trials (512k trials made 25 MB).
  const bool snap = static_cast<double>(n) > kPlotW;
  auto cell = [&](double v) { return snap ? std::round(v / kSnap) * kSnap : v; };
  std::set<std::pair<long, long>> dot_cells;
  std::set<long> fail_cells;
  std::string dots, fails;
  std::vector<std::pair<double, double>> line;  // the step line's points, in pixels
  // Past one trial per pixel, a step up in the same cell as the previous one extends it rather than adding two
  // points: a log whose every trial was a new best drew 120k points for 60k trials.
  auto point = [&](double x, double value) {
    const double y = py(value);
    if (snap && line.size() >= 2 && line.back().first == x && line[line.size() - 2].first == x) {
      line.back().second = y;
    } else if (line.empty() || line.back() != std::make_pair(x, y)) {
      line.emplace_back(x, y);
    }
  };
  double best = 0;
  bool started = false;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i + 1);
    const double x = cell(px(t));
    if (!std::isfinite(values[i])) continue;  // no point can stand for it (a log's flops edited by hand)
    if (values[i] < 0) {
      if (fail_cells.insert(std::lround(x * 10)).second) {
        fails += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(kTop + kPlotH) + "\" x2=\"" + Num(x) + "\" y2=\"" +
                 Num(kTop + kPlotH - 5) + "\"/>";
      }
      continue;
    }
    const double y = cell(py(values[i]));
    if (dot_cells.emplace(std::lround(x * 10), std::lround(y * 10)).second) {
      dots += "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) + "\" r=\"1.8\"/>";
    }
    if (!started) {
      best = values[i];
      started = true;
      point(x, best);
    } else if (values[i] > best) {
      point(x, best);  // horizontal step, then up
      best = values[i];
      point(x, best);
    }
  }
  if (started) point(cell(px(static_cast<double>(n))), best);  // the step line runs on to the last trial
  s += "<g stroke=\"#c0392b\" stroke-width=\"1\">" + fails + "</g>";
  s += "<g fill=\"#9ab\" fill-opacity=\"0.7\">" + dots + "</g>";
  if (!line.empty()) {
    std::string points;
    for (const auto& [x, y] : line) points += (points.empty() ? "" : " ") + Num(x) + "," + Num(y);
    s += "<polyline fill=\"none\" stroke=\"#1f6fb2\" stroke-width=\"2\" points=\"" + points + "\"/>";
  }
  return s + "</svg>";
}

std::string HistogramSvg(const std::vector<double>& all_values, int bins, const std::string& x_label) {
  bins = std::max(bins, 1);
  std::vector<double> values;  // those a bin can hold: an infinite one (flops edited by hand) fell in bin 0
  for (double v : all_values) {
    if (std::isfinite(v) && v >= 0) values.push_back(v);
  }
  double x_max = 0;
  for (double v : values) x_max = std::max(x_max, v);
  const AxisScale x_scale = ScaleFor(x_max > 0 ? x_max : 1, /*integer=*/false);  // the bins span 0..its top
  x_max = x_scale.top;
  std::vector<double> x_ticks;
  for (int i = 0; i <= x_scale.intervals; ++i) x_ticks.push_back(x_max * i / x_scale.intervals);
  std::vector<int> counts(bins, 0);
  for (double v : values) {
    int b = std::min(bins - 1, static_cast<int>(v / x_max * bins));
    ++counts[std::max(b, 0)];
  }
  const AxisScale scale = ScaleFor(std::max(1, *std::max_element(counts.begin(), counts.end())), /*integer=*/true);
  const double c_max = scale.top;
  std::string s = SvgOpen("histogram", "distribution of " + x_label + " over " + std::to_string(values.size()) +
                                           (values.size() == 1 ? " successful config" : " successful configs"));
  s += Axes(0, x_max, x_ticks, scale, x_label, "configs", /*integer_y=*/true);
  s += "<g fill=\"#5b9bd5\" stroke=\"#fff\" stroke-width=\"0.5\">";
  const double w = kPlotW / bins;
  for (int b = 0; b < bins; ++b) {
    if (counts[b] == 0) continue;
    double h = kPlotH * counts[b] / c_max;
    s += "<rect x=\"" + Num(kLeft + w * b) + "\" y=\"" + Num(kTop + kPlotH - h) + "\" width=\"" + Num(w) +
         "\" height=\"" + Num(h) + "\"><title>" + std::to_string(counts[b]) +
         (counts[b] == 1 ? " config" : " configs") + "</title></rect>";
  }
  return s + "</g></svg>";
}

}  // namespace tunefleet
