#include "tuner/report_html.h"

#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <set>
#include <vector>

#include "common/utf8.h"
#include "tuner/report_svg.h"

namespace tunefleet {
namespace {

size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// Checks that every element is closed in order (HTML void elements and self-closed SVG elements excepted), that no
// raw '<' or '&' stands in text, and that nothing refers to the network. Returns the first problem, or "".
std::string CheckWellFormed(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "br", "!DOCTYPE"};
  std::vector<std::string> stack;
  for (size_t i = 0; i < html.size(); ++i) {
    if (html[i] == '&') {
      size_t semi = html.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return "bare '&' at " + std::to_string(i);
      continue;
    }
    if (html[i] != '<') continue;
    size_t end = html.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end;
    const bool closing = !tag.empty() && tag[0] == '/';
    const bool self_closed = !tag.empty() && tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" /", closing ? 1 : 0) - (closing ? 1 : 0));
    if (name.empty() || (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '!')) {
      return "raw '<' at " + std::to_string(i);
    }
    if (closing) {
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> closes <" + (stack.empty() ? "" : stack.back()) + ">";
      stack.pop_back();
    } else if (!self_closed && !kVoid.count(name)) {
      stack.push_back(name);
    }
  }
  if (!stack.empty()) return "<" + stack.back() + "> never closed";
  if (html.find("http://") != std::string::npos &&
      CountOf(html, "http://") != CountOf(html, "xmlns=\"http://www.w3.org/2000/svg\"")) {
    return "refers to the network";
  }
  if (html.find("https://") != std::string::npos || html.find("<script") != std::string::npos) return "script or URL";
  return "";
}

ReportSeries Series(const std::string& spec, const std::string& device, int64_t count,
                    const std::vector<std::pair<int, double>>& status_and_ms) {
  ReportSeries s;
  s.task_spec = spec;
  s.op = spec.substr(0, spec.find(':'));
  s.template_name = "gemm.buffer";
  s.template_version = 1;
  s.device_name = device;
  s.flops = 2e6;
  s.count = count;
  for (auto [status, ms] : status_and_ms) {
    s.records.push_back({status, status == 0 ? ms * 1e-3 : 0, status == 0 ? "" : "clBuildProgram: error <42>",
                         std::nullopt});
  }
  return s;
}

ReportData TwoTasksOnOneDevice() {
  ReportData d;
  d.source = "tune.db";
  d.devices.push_back({"pthread-cpu", "GenuineIntel", "PoCL 3.1", "OpenCL 3.0", "ab12", {{"compute_units", "2"}}});
  d.series.push_back(Series("gemm:64,64,64:float32", "pthread-cpu", 4, {{0, 2.0}, {3, 0}, {0, 1.0}, {5, 0}, {0, 1.5}}));
  d.series.push_back(Series("conv2d:1,16,32,32,16,3,3,1,1:float32", "pthread-cpu", 1, {{0, 2.0}, {4, 0}}));
  return d;
}

TEST(ReportHtmlTest, GivenTwoTasks_WeShouldWriteWellFormedHtmlWithOneCurveAndOneHistogramPerTask) {
  std::string html = RenderReportHtml(TwoTasksOnOneDevice());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(CheckWellFormed(html), "");
  EXPECT_EQ(CountOf(html, "<svg class=\"curve\""), 2u);
  EXPECT_EQ(CountOf(html, "<svg class=\"histogram\""), 2u);
}

TEST(ReportHtmlTest, GivenCountsAndBestLatencies_WeShouldSumCountTimesLatency) {
  std::string html = RenderReportHtml(TwoTasksOnOneDevice());
  // gemm: best 1.0 ms x 4 + conv: 2.0 ms x 1 = 6 ms.
  EXPECT_NE(html.find("<b>6.0000</b>"), std::string::npos);
  EXPECT_NE(html.find("best 1.0000 ms = 2.00 GFLOPS"), std::string::npos);
}

// tune --confirm: config 7's lucky 1.0 ms is measured again at 3.0 and 4.0 ms, so its median 3.0 ms loses to config 8's
// single 1.5 ms, as `tunefleet best` ranks them; the failure of config 9 is no result.
TEST(ReportHtmlTest, GivenAConfigMeasuredSeveralTimes_TheBestShouldBeTheLowestMedian) {
  ReportData d = TwoTasksOnOneDevice();
  ReportSeries& gemm = d.series[0];
  gemm.records = {{0, 1.0e-3, "", 7}, {0, 1.5e-3, "", 8}, {0, 3.0e-3, "", 7}, {0, 4.0e-3, "", 7}, {4, 0, "x", 9}};
  const std::string html = RenderReportHtml(d);
  EXPECT_NE(html.find("best 1.5000 ms = 1.33 GFLOPS"), std::string::npos);
  EXPECT_EQ(html.find("best 1.0000 ms"), std::string::npos);
  // Three configs were tried; the two later results of config 7 are repeats, not trials, and add no point to its
  // curve, where config 7 stands at its median (0.67 GFLOPS), so the curve ends at the header's best.
  EXPECT_NE(html.find("3 trials (+2 repeats); 4 of 5 results ok"), std::string::npos);
  const size_t section = html.find("id=\"task-1\"");
  ASSERT_NE(section, std::string::npos);
  const std::string curve = html.substr(html.find("<svg class=\"curve\"", section));
  EXPECT_NE(curve.find("over 3 trials"), std::string::npos);
  EXPECT_EQ(CountOf(curve.substr(0, curve.find("</svg>")), "<circle"), 2u);
}

TEST(ReportHtmlTest, GivenFailures_WeShouldCountThemByStatusAndEscapeTheirMessages) {
  std::string html = RenderReportHtml(TwoTasksOnOneDevice());
  EXPECT_NE(html.find("3 device compile failed"), std::string::npos);
  EXPECT_NE(html.find("5 wrong answer"), std::string::npos);
  EXPECT_NE(html.find("error &lt;42&gt;"), std::string::npos);
  EXPECT_EQ(html.find("error <42>"), std::string::npos);
}

// A title or device name with a control character (`report --title $'x\x01'`) put the byte itself in the page.
TEST(ReportHtmlTest, GivenControlCharactersInTheTitleAndADeviceName_WeShouldShowThemEscaped) {
  ReportData d = TwoTasksOnOneDevice();
  d.title = "run\x01<b>";
  d.devices[0].name = "cpu\x1b[31m";
  const std::string html = RenderReportHtml(d);
  EXPECT_NE(html.find("run\\x01&lt;b&gt;"), std::string::npos);
  EXPECT_NE(html.find("cpu\\x1b[31m"), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(CheckWellFormed(html), "");
}

TEST(ReportHtmlTest, GivenAnUnknownCount_WeShouldMarkTheSumAsPartial) {
  ReportData d = TwoTasksOnOneDevice();
  d.series[1].count = 0;
  std::string html = RenderReportHtml(d);
  EXPECT_NE(html.find("(leaves out 1 task without a known count)"), std::string::npos) << html;
  EXPECT_NE(html.find("<b>4.0000</b>"), std::string::npos);
}

// A task whose every result failed has a count but no latency: the sum's note said "tasks with known count only",
// and a sum of none read 0.0000.
TEST(ReportHtmlTest, GivenATaskWithoutASuccessfulResult_TheSumShouldSayItLeavesItOut) {
  ReportData d = TwoTasksOnOneDevice();
  for (auto& r : d.series[1].records) r = {4, 0, "clEnqueueNDRangeKernel failed", std::nullopt};
  std::string html = RenderReportHtml(d);
  EXPECT_NE(html.find("(leaves out 1 task without a successful result)"), std::string::npos) << html;
  EXPECT_NE(html.find("<b>4.0000</b>"), std::string::npos) << html;
  for (auto& r : d.series[0].records) r = {4, 0, "clEnqueueNDRangeKernel failed", std::nullopt};
  html = RenderReportHtml(d);
  EXPECT_NE(html.find("(leaves out 2 tasks without a successful result)</th><td class=\"n\"><b>&mdash;</b>"),
            std::string::npos)
      << html;
  EXPECT_EQ(CheckWellFormed(html), "");
}

TEST(ReportHtmlTest, GivenATaskOfTwoModels_WeShouldNameEachModelsCount) {
  ReportData d = TwoTasksOnOneDevice();
  d.series[0].count = 5;
  d.series[0].model_counts = {{"a<1>.onnx", 3}, {"b.onnx", 2}};
  d.series[1].model_counts = {{"b.onnx", d.series[1].count}};
  std::string html = RenderReportHtml(d);
  EXPECT_EQ(CheckWellFormed(html), "");
  EXPECT_NE(html.find("occurs 5&times; in the models (<code>a&lt;1&gt;.onnx</code> 3&times;, "
                      "<code>b.onnx</code> 2&times;)"),
            std::string::npos);
  EXPECT_NE(html.find("&times; in <code>b.onnx</code>"), std::string::npos);
}

// A task given by --task (no model, count 1) was said to occur "1x in the model".
TEST(ReportHtmlTest, GivenTasksOfNoModel_WeShouldNameNoModel) {
  ReportData d = TwoTasksOnOneDevice();
  d.series[0].count = 1;
  d.series[0].model_counts.clear();
  d.series[1].count = 4;
  d.series[1].model_counts.clear();
  const std::string html = RenderReportHtml(d);
  EXPECT_EQ(CheckWellFormed(html), "");
  EXPECT_EQ(html.find("in the model"), std::string::npos);
  EXPECT_EQ(html.find("occurs 1&times;"), std::string::npos);
  EXPECT_NE(html.find("occurs 4&times;</p>"), std::string::npos);
}

TEST(ReportHtmlTest, GivenAnEmptyLog_WeShouldStillWriteAValidPage) {
  std::string html = RenderReportHtml(ReportData{});
  EXPECT_EQ(CheckWellFormed(html), "");
  EXPECT_NE(html.find("No measurement recorded."), std::string::npos);
  EXPECT_EQ(CountOf(html, "<svg"), 0u);
}

// A failure's message is cut at 300 bytes between characters (the page is UTF-8); bytes that are not UTF-8 are shown
// as \xNN.
TEST(ReportHtmlTest, GivenALongMessageOfTwoByteCharacters_TheCutShouldKeepThePageUtf8) {
  ReportData d = TwoTasksOnOneDevice();
  d.series[0].records[1].message = "x" + std::string(150 * 2, 'a');
  for (size_t i = 1; i < d.series[0].records[1].message.size(); i += 2) {
    d.series[0].records[1].message.replace(i, 2, "\xc3\xa9");  // "é"
  }
  d.devices[0].name = "gpu\x9f";
  const std::string html = RenderReportHtml(d);
  EXPECT_TRUE(IsUtf8(html));
  EXPECT_NE(html.find("x" + [] {
              std::string e;
              for (int i = 0; i < 149; ++i) e += "\xc3\xa9";
              return e;
            }() + "&hellip;</code>"),
            std::string::npos);
  EXPECT_NE(html.find("gpu\\x9f"), std::string::npos);
}

// Sections are numbered from 1, as `tasks` and `tune` number tasks; one trial is "1 trial", and its curve's x axis
// names that trial alone (it said 1 and 2).
TEST(ReportHtmlTest, GivenOneTrial_TheSectionShouldBeNumberedFromOneAndSayItInTheSingular) {
  ReportData d;
  d.series.push_back(Series("gemm:64,64,64:float32", "pthread-cpu", 1, {{0, 2.0}}));
  const std::string html = RenderReportHtml(d);
  EXPECT_NE(html.find("<h3>1. <code>gemm:64,64,64:float32</code>"), std::string::npos);
  EXPECT_EQ(html.find("<h3>0. "), std::string::npos);
  EXPECT_NE(html.find("1 trial, 1 ok"), std::string::npos);
  EXPECT_NE(html.find("so far over 1 trial</title>"), std::string::npos);
  const std::string curve = html.substr(html.find("<svg class=\"curve\""));
  const std::string axes = curve.substr(0, curve.find("</svg>"));  // x labels: anchored in the middle
  EXPECT_EQ(CountOf(axes, "text-anchor=\"middle\" font-size=\"11\">1</text>"), 1u);
  EXPECT_EQ(CountOf(axes, "text-anchor=\"middle\" font-size=\"11\">2</text>"), 0u);
  EXPECT_EQ(CheckWellFormed(html), "");
}

// A resumed task of 200k trials: marks are drawn once per 2-pixel cell, so the chart's size does not grow with the
// trials, while the step line still reaches the best and the last trial.
TEST(ReportSvgTest, GivenFarMoreTrialsThanPixels_TheCurveShouldStaySmallAndEndAtTheBest) {
  std::vector<double> values;
  for (int i = 0; i < 200000; ++i) values.push_back(i % 97 == 0 ? -1.0 : 1.0 + (i * 7919 % 1000) / 100.0);
  values[150000] = 20.0;  // the best, late
  const std::string svg = TuningCurveSvg(values, "GFLOPS");
  EXPECT_EQ(CheckWellFormed(svg), "");
  EXPECT_LT(svg.size(), 600000u);  // one mark per trial: over 9 MB
  EXPECT_LE(CountOf(svg, "<circle"), 226u * 86u);  // at most one per cell of the 452 x 170 plot
  EXPECT_GT(CountOf(svg, "<circle"), 1000u);
  EXPECT_LE(CountOf(svg, "<line x1"), 226u + 20u);  // failure ticks: one per column (and the axes' lines)
  const std::string points = svg.substr(svg.find("points=\"") + 8);
  const std::string last = points.substr(0, points.find('"'));
  EXPECT_EQ(last.substr(last.rfind(' ') + 1), "508.0,12.0");  // the right edge of the plot, at the top: the best
  EXPECT_EQ(TuningCurveSvg(std::vector<double>(10, -1.0), "GFLOPS").find("<polyline"), std::string::npos);
  // Every trial a new best: the step line is bounded as well (two points per trial before).
  std::vector<double> rising;
  for (int i = 0; i < 200000; ++i) rising.push_back(1.0 + i);
  const std::string up = TuningCurveSvg(rising, "GFLOPS");
  EXPECT_EQ(CheckWellFormed(up), "");
  EXPECT_LT(up.size(), 200000u);
  const std::string up_points = up.substr(up.find("points=\"") + 8);
  const std::string up_line = up_points.substr(0, up_points.find('"'));
  EXPECT_EQ(up_line.substr(up_line.rfind(' ') + 1), "508.0,12.0");
}

// Axes are labelled at round steps that reach the largest value: 226 GFLOPS in steps of 50 up to 250 (it was 56.6,
// 113, 170, 226); counts of configs in whole steps; trials from 1, then at round numbers.
std::vector<std::string> AxisLabels(const std::string& svg, const std::string& anchor) {
  std::vector<std::string> out;
  const std::string mark = "text-anchor=\"" + anchor + "\" font-size=\"11\">";
  for (size_t at = svg.find(mark); at != std::string::npos; at = svg.find(mark, at + 1)) {
    const size_t from = at + mark.size();
    const std::string label = svg.substr(from, svg.find('<', from) - from);
    if (!label.empty() && (std::isdigit(static_cast<unsigned char>(label[0])) != 0)) out.push_back(label);
  }
  return out;
}

TEST(ReportSvgTest, GivenValuesOfNoRoundSize_TheAxesShouldBeLabelledAtRoundSteps) {
  auto y_labels = [](const std::string& svg) { return AxisLabels(svg, "end"); };
  auto x_labels = [](const std::string& svg) { return AxisLabels(svg, "middle"); };
  EXPECT_EQ(x_labels(TuningCurveSvg(std::vector<double>(130, 1.0), "GFLOPS")),
            (std::vector<std::string>{"1", "50", "100"}));
  EXPECT_EQ(x_labels(TuningCurveSvg(std::vector<double>(4, 1.0), "GFLOPS")),
            (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(x_labels(HistogramSvg({10, 226}, 20, "GFLOPS")),
            (std::vector<std::string>{"0", "50", "100", "150", "200", "250"}));
  EXPECT_EQ(y_labels(TuningCurveSvg({100.0, 226.0}, "GFLOPS")),
            (std::vector<std::string>{"0", "50", "100", "150", "200", "250"}));
  EXPECT_EQ(y_labels(TuningCurveSvg({0.3}, "GFLOPS")), (std::vector<std::string>{"0", "0.1", "0.2", "0.3"}));
  EXPECT_EQ(y_labels(HistogramSvg({1, 1, 1, 1, 1, 1, 1, 2}, 4, "GFLOPS")),  // 7 configs in the top bin
            (std::vector<std::string>{"0", "2", "4", "6", "8"}));
  EXPECT_EQ(y_labels(HistogramSvg({1}, 4, "GFLOPS")), (std::vector<std::string>{"0", "1"}));
  // Large labels stay short enough for the margins ("100000" at the right edge was cut to "10000").
  EXPECT_EQ(x_labels(TuningCurveSvg(std::vector<double>(100000, 1.0), "GFLOPS")),
            (std::vector<std::string>{"1", "20k", "40k", "60k", "80k", "100k"}));
  EXPECT_EQ(ShortNumber(9999), "9999");
  EXPECT_EQ(ShortNumber(12500), "12.5k");
  EXPECT_EQ(ShortNumber(1e10), "10G");
  EXPECT_EQ(ShortNumber(2.5e17), "250P");
  EXPECT_EQ(ShortNumber(999700), "1M");  // not "1e+03k"
  EXPECT_EQ(ShortNumber(1.25e19), "12.5E");  // it printed "1e+19" for 1e19 and 1.25e19 alike
  EXPECT_EQ(ShortNumber(1e25), "1e+25");
  EXPECT_EQ(ShortNumber(0.25), "0.25");
  EXPECT_EQ(ShortNumber(0.0125), "12.5m");
  EXPECT_EQ(ShortNumber(0.00075), "750\u00b5");  // "0.00075" ran into the axis's name
  EXPECT_EQ(ShortNumber(-2e-9), "-2n");
  EXPECT_EQ(ShortNumber(0), "0");
  // Values no tune writes (a log edited by hand) still give a chart, and in finite time; an infinite one is not
  // drawn (its marks stood at y = -inf, and the histogram put it in bin 0 through an undefined cast).
  for (const double odd : {5e-324, 1e-300, 1e300, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(CheckWellFormed(TuningCurveSvg({odd}, "GFLOPS")), "") << odd;
    EXPECT_EQ(CheckWellFormed(HistogramSvg({odd}, 4, "GFLOPS")), "") << odd;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::string curve = TuningCurveSvg({1.0, inf, 2.0}, "GFLOPS");
  EXPECT_EQ(curve.find("inf"), std::string::npos) << curve;
  EXPECT_EQ(CountOf(curve, "<circle"), 2u);
  EXPECT_EQ(y_labels(curve), (std::vector<std::string>{"0", "0.5", "1", "1.5", "2"}));
  const std::string histogram = HistogramSvg({1.0, inf}, 4, "GFLOPS");
  EXPECT_EQ(CountOf(histogram, "<rect"), 1u);
  EXPECT_NE(histogram.find("over 1 successful config<"), std::string::npos) << histogram;
}

TEST(ReportSvgTest, GivenTrials_WeShouldDrawTheRunningBestAsAStepLine) {
  std::string svg = TuningCurveSvg({-1, 1.0, 0.5, 2.0}, "GFLOPS");
  EXPECT_EQ(CheckWellFormed(svg), "");
  EXPECT_EQ(CountOf(svg, "<circle"), 3u);  // the three successful trials
  EXPECT_EQ(CountOf(svg, "<polyline"), 1u);
  std::string hist = HistogramSvg({1, 1, 2, 10}, 10, "GFLOPS");
  EXPECT_EQ(CheckWellFormed(hist), "");
  EXPECT_EQ(CountOf(hist, "<rect"), 3u);  // bins of 1, 2 and 10
}

}  // namespace
}  // namespace tunefleet
