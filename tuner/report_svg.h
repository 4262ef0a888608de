// Inline SVG charts for the HTML report: a tuning curve and a histogram. Output is a complete <svg> element
// (no scripts, no external references) sized in CSS pixels.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>


namespace tunefleet {

// Best-so-far curve over trials. `values[i]` is the GFLOPS of trial i+1, or a negative number for a failed trial
// (drawn as a red tick on the axis); one not finite is not drawn. The step line is the running maximum; successful
// trials are dots. Axes are labelled at round steps (0, 50, ..., 250; trials 1, 50, 100).
std::string TuningCurveSvg(const std::vector<double>& values, const std::string& y_label);

// Histogram of `values` (those not finite or negative are left out) in `bins` equal bins from 0 to the top of the
// axis: the maximum, rounded up to a round step.
std::string HistogramSvg(const std::vector<double>& values, int bins, const std::string& x_label);

// "12.3", "0.25", "1234", "12.5k", "750µ": a short number for labels (3 significant digits; under 0.1 and from
// 10,000 in SI units p to E, beyond them with an exponent).
std::string ShortNumber(double v);

}  // namespace tunefleet
