// Winograd transform matrices F(2,3) and F(4,3) (Lavin & Gray) and the OpenCL C emitter of Y = L X L^T
// as straight-line code with the zero terms left out.
// Thread safety: immutable tables.
#pragma once

#include <string>
#include <vector>

namespace tunefleet {

using Matrix = std::vector<std::vector<double>>;

struct WinogradMatrices {
  int m = 0;      // output tile
  int alpha = 0;  // input tile, m + 2
  Matrix bt;      // alpha x alpha: input transform  V = B^T d B
  Matrix g;       // alpha x 3:     kernel transform U = G g G^T
  Matrix at;      // m x alpha:     output transform Y = A^T M A
};

// m is 2 or 4; any other value gives F(2,3).
const WinogradMatrices& WinogradFor(int m);

// Statements declaring `float <out>_<i>_<j>` = (L X L^T)[i][j] for i, j < rows(L), reading the scalars
// `<in>_<a>_<b>` for a, b < cols(L). Temporaries are named `<out>_t_<i>_<b>`.
std::string EmitSandwich(const Matrix& l, const std::string& in, const std::string& out);

}  // namespace tunefleet
