// Inline SVG charts for the HTML report: a tuning curve and a histogram. Output is a complete <svg> element
// (no scripts, no external references) sized in CSS pixels.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>


namespace tunefleet {

// Best-so-far curve over trials. `values[i]` is the GFLOPS of trial i+1, or a negative number for a failed trial
// (drawn as a red tick on the axis). The step line is the running maximum; successful trials are dots.
std::string TuningCurveSvg(const std::vector<double>& values, const std::string& y_label);

// Histogram of `values` (all >= 0) in `bins` equal bins from 0 to the maximum.
std::string HistogramSvg(const std::vector<double>& values, int bins, const std::string& x_label);

// "12.3", "0.0123", "1234": a short number for labels (3 significant digits, no exponent below 1e6).
std::string ShortNumber(double v);

}  // namespace tunefleet
