// The discrete Laplacian of the reference step: exact on polynomials up to degree 8 (the 8th-order
// stencil's error term is h^8 f^(10)), and visibly not exact on degree 10, so the test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"

namespace rtm {
namespace {

struct PolyCase {
  int ax, ay, az; // p = x^ax y^ay z^az
};

// Applies the reference step with p_prev = 2 p and v2dt2 = 1, which leaves exactly lap p.
double max_relative_laplacian_error(const PolyCase& c, double hx, double hy, double hz) {
  const GridLayout g = make_layout(19, 17, 21);
  const double cx = 9 * hx, cy = 8 * hy, cz = 10 * hz; // coordinates centred on the grid
  std::vector<float> p(g.size, 0.0f), prev(g.size, 0.0f), v2dt2(g.size, 1.0f);
  auto value = [&](double x, double y, double z) {
    return std::pow(x, c.ax) * std::pow(y, c.ay) * std::pow(z, c.az);
  };
  auto d2 = [](double s, int a) { return a < 2 ? 0.0 : a * (a - 1) * std::pow(s, a - 2); };
  for (int k = -kHalo; k < g.nz + kHalo; ++k)
    for (int j = -kHalo; j < g.ny + kHalo; ++j)
      for (int i = -kHalo; i < g.nx + kHalo; ++i) {
        const float v = float(value(i * hx - cx, j * hy - cy, k * hz - cz));
        p[g.index(i, j, k)] = v;
        prev[g.index(i, j, k)] = 2.0f * v;
      }
  cpu_wave_step(g, make_laplacian_weights(hx, hy, hz), v2dt2.data(), DampingProfiles{}, p.data(),
                prev.data());
  double max_err = 0, max_ref = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double x = i * hx - cx, y = j * hy - cy, z = k * hz - cz;
        const double exact = d2(x, c.ax) * std::pow(y, c.ay) * std::pow(z, c.az) +
                             std::pow(x, c.ax) * d2(y, c.ay) * std::pow(z, c.az) +
                             std::pow(x, c.ax) * std::pow(y, c.ay) * d2(z, c.az);
        max_err = std::max(max_err, std::abs(prev[g.index(i, j, k)] - exact));
        max_ref = std::max(max_ref, std::abs(exact));
      }
  return max_err / std::max(max_ref, 1e-30);
}

TEST(Laplacian, ExactOnPolynomialsUpToDegree8) {
  // Spacings differ per axis so a mix-up of axes would show. The float32 rounding of values of
  // size |x|^8 bounds what "exact" can mean: 1e-4 relative is far above rounding (~1e-6) and far
  // below the degree-10 error checked next (~1e-2).
  const double hx = 1.0, hy = 0.75, hz = 1.25;
  const std::vector<PolyCase> cases = {
      {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {5, 0, 0}, {6, 0, 0}, {7, 0, 0},
      {8, 0, 0}, {0, 8, 0}, {0, 0, 8}, {0, 6, 0}, {0, 0, 7}, {4, 4, 0}, {2, 3, 3}, {3, 0, 5},
      {0, 2, 6}};
  for (const PolyCase& c : cases) // degrees 0 and 1 (lap = 0) are checked absolutely below
    EXPECT_LT(max_relative_laplacian_error(c, hx, hy, hz), 1e-4)
        << "x^" << c.ax << " y^" << c.ay << " z^" << c.az;
}

// A plane wave sin(k x) is an eigenfunction of the discrete operator with the symbol
//   lap_h sin = (c0 + 2 sum_r c_r cos(r k h)) / h^2 * sin,
// which equals -k^2 only to O((kh)^8). Matching the symbol checks every coefficient; the gap to
// -k^2 at kh = 1.5 (about 5e-3 relative) shows the discrete operator is not exact beyond degree 8,
// and that this test has the resolution to see it.
TEST(Laplacian, PlaneWaveFollowsTheDiscreteSymbol) {
  const GridLayout g = make_layout(40, 6, 6);
  const double h = 2.0, k = 1.5 / h;
  std::vector<float> p(g.size, 0.0f), prev(g.size, 0.0f), v2dt2(g.size, 1.0f);
  for (int kk = -kHalo; kk < g.nz + kHalo; ++kk)
    for (int j = -kHalo; j < g.ny + kHalo; ++j)
      for (int i = -kHalo; i < g.nx + kHalo; ++i) {
        const float v = float(std::sin(k * i * h + 0.3));
        p[g.index(i, j, kk)] = v;
        prev[g.index(i, j, kk)] = 2.0f * v;
      }
  cpu_wave_step(g, make_laplacian_weights(h, h, h), v2dt2.data(), DampingProfiles{}, p.data(),
                prev.data());
  double symbol = kStencilC[0];
  for (int r = 1; r <= 4; ++r) symbol += 2 * kStencilC[r] * std::cos(r * k * h);
  symbol /= h * h;
  EXPECT_GT(std::abs(symbol + k * k) / (k * k), 3e-3); // not the continuous -k^2
  for (int i = 0; i < g.nx; ++i) {
    const double expected = symbol * std::sin(k * i * h + 0.3);
    EXPECT_NEAR(prev[g.index(i, 3, 3)], expected, 1e-5 * k * k) << "i = " << i;
  }
}

TEST(Laplacian, ZeroOnLinearFunctions) {
  const GridLayout g = make_layout(12, 10, 11);
  std::vector<float> p(g.size, 0.0f), prev(g.size, 0.0f), v2dt2(g.size, 1.0f);
  for (int k = -kHalo; k < g.nz + kHalo; ++k)
    for (int j = -kHalo; j < g.ny + kHalo; ++j)
      for (int i = -kHalo; i < g.nx + kHalo; ++i) {
        const float v = 3.0f + 0.5f * i - 0.25f * j + 0.125f * k;
        p[g.index(i, j, k)] = v;
        prev[g.index(i, j, k)] = 2.0f * v;
      }
  cpu_wave_step(g, make_laplacian_weights(1, 1, 1), v2dt2.data(), DampingProfiles{}, p.data(),
                prev.data());
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) EXPECT_NEAR(prev[g.index(i, j, k)], 0.0f, 1e-4f);
}

TEST(GridLayout, InteriorRowsStartOn128ByteBoundaries) {
  const GridLayout g = make_layout(67, 45, 53);
  EXPECT_EQ(g.pitch % kRowAlignFloats, 0);
  EXPECT_GE(g.pitch, 67 + 2 * kHalo);
  for (int k = -kHalo; k < g.nz + kHalo; k += 7)
    for (int j = -kHalo; j < g.ny + kHalo; j += 5) EXPECT_EQ(g.index(0, j, k) % kRowAlignFloats, 0);
  EXPECT_EQ(g.index(-kHalo, -kHalo, -kHalo), g.offset);
  EXPECT_LT(g.index(g.nx + kHalo - 1, g.ny + kHalo - 1, g.nz + kHalo - 1), g.size);
}

} // namespace
} // namespace rtm
