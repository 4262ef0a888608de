// The Winograd matrices: in one dimension, A^T [(G g) .* (B^T d)] must equal the correlation of d with g.
#include "search-spaces/winograd_transform.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

std::vector<double> Mul(const Matrix& m, const std::vector<double>& v) {
  std::vector<double> out(m.size(), 0.0);
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < v.size(); ++j) out[i] += m[i][j] * v[j];
  return out;
}

void ExpectCorrelation(int m) {
  const WinogradMatrices& w = WinogradFor(m);
  ASSERT_EQ(w.m, m);
  std::vector<double> d(w.alpha), g = {0.3, -1.25, 0.7};
  for (int i = 0; i < w.alpha; ++i) d[i] = 0.5 * i - 1.1 + (i % 2 ? 0.37 : -0.2);
  std::vector<double> u = Mul(w.g, g), v = Mul(w.bt, d), uv(w.alpha);
  for (int i = 0; i < w.alpha; ++i) uv[i] = u[i] * v[i];
  const std::vector<double> y = Mul(w.at, uv);
  for (int i = 0; i < m; ++i) EXPECT_NEAR(y[i], d[i] * g[0] + d[i + 1] * g[1] + d[i + 2] * g[2], 1e-12) << i;
}

TEST(WinogradTransform, GivenF23TheTransformsShouldComputeA3TapCorrelation) { ExpectCorrelation(2); }
TEST(WinogradTransform, GivenF43TheTransformsShouldComputeA3TapCorrelation) { ExpectCorrelation(4); }

TEST(WinogradTransform, GivenTheSandwichEmitterWeShouldLeaveZeroTermsOut) {
  const std::string code = EmitSandwich(WinogradFor(2).at, "m", "y");
  EXPECT_NE(code.find("const float y_t_0_0 = m_0_0 + m_1_0 + m_2_0;"), std::string::npos) << code;
  EXPECT_NE(code.find("const float y_1_1 = y_t_1_1 - y_t_1_2 - y_t_1_3;"), std::string::npos) << code;
}

}  // namespace
}  // namespace tunefleet
