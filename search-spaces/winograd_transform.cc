#include "search-spaces/winograd_transform.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace tunefleet {
namespace {

WinogradMatrices F23() {
  WinogradMatrices w;
  w.m = 2;
  w.alpha = 4;
  w.bt = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  w.g = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  w.at = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  return w;
}

WinogradMatrices F43() {
  WinogradMatrices w;
  w.m = 4;
  w.alpha = 6;
  w.bt = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
          {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  w.g = {{1.0 / 4, 0, 0},
         {-1.0 / 6, -1.0 / 6, -1.0 / 6},
         {-1.0 / 6, 1.0 / 6, -1.0 / 6},
         {1.0 / 24, 1.0 / 12, 1.0 / 6},
         {1.0 / 24, -1.0 / 12, 1.0 / 6},
         {0, 0, 1}};
  w.at = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  return w;
}

// "a*x" terms joined with signs; "0.0f" when all coefficients are zero.
std::string Combination(const std::vector<double>& coef, const std::vector<std::string>& names) {
  std::ostringstream o;
  bool first = true;
  for (size_t i = 0; i < coef.size(); ++i) {
    const double c = coef[i];
    if (c == 0) continue;
    const double a = std::abs(c);
    o << (c < 0 ? (first ? "-" : " - ") : (first ? "" : " + "));
    if (a != 1) {
      // A float literal needs a decimal point ("4.0f", not "4f").
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", a);
      std::string lit = buf;
      if (lit.find_first_of(".e") == std::string::npos) lit += ".0";
      o << lit << "f * ";
    }
    o << names[i];
    first = false;
  }
  return first ? "0.0f" : o.str();
}

}  // namespace

const WinogradMatrices& WinogradFor(int m) {
  static const WinogradMatrices k23 = F23();
  static const WinogradMatrices k43 = F43();
  return m == 4 ? k43 : k23;
}

std::string EmitSandwich(const Matrix& l, const std::string& in, const std::string& out) {
  const size_t rows = l.size(), cols = l[0].size();
  std::ostringstream o;
  auto name = [](const std::string& p, size_t i, size_t j) {
    return p + "_" + std::to_string(i) + "_" + std::to_string(j);
  };
  // tmp = L X: rows x cols.
  for (size_t i = 0; i < rows; ++i)
    for (size_t b = 0; b < cols; ++b) {
      std::vector<std::string> names;
      for (size_t a = 0; a < cols; ++a) names.push_back(name(in, a, b));
      o << "  const float " << name(out + "_t", i, b) << " = " << Combination(l[i], names) << ";\n";
    }
  // out = tmp L^T: rows x rows.
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < rows; ++j) {
      std::vector<std::string> names;
      for (size_t b = 0; b < cols; ++b) names.push_back(name(out + "_t", i, b));
      o << "  const float " << name(out, i, j) << " = " << Combination(l[j], names) << ";\n";
    }
  return o.str();
}

}  // namespace tunefleet
