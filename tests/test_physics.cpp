// Physics of the reference propagator: the analytic point-source solution, symmetry, reciprocity,
// and the CFL limit being the real stability limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

// Homogeneous medium, point source: p(r, t) = w(t - r/v) / (4 pi r) (docs/physics.md).
// v = 2000 m/s, h = 10 m, f0 = 10 Hz: 8 points per shortest wavelength (f_max = 25 Hz).
// Receivers 35 cells away on an axis and 32 cells away off-axis. The grid (131^3, walls 66 cells
// from the source) is large enough that the first wall reflection reaches a receiver after the
// compared window ends.
TEST(Physics, PointSourceMatchesAnalyticSolution) {
  const int n = 131, c = 65;
  ModelShape shape{n, n, n, 10, 10, 10};
  const double v = 2000, f0 = 10;
  const VelocityModel model = constant_model(shape, v);
  BoundaryConfig no_layers;
  no_layers.width = 0;
  const SimulationGrid sim = make_simulation_grid(model, no_layers, 0.0);
  CpuWavefield prop(make_propagator_setup(sim));

  const double t0 = default_ricker_delay(f0);
  const double window = 0.42;
  const int nt = int(window / sim.dt) + 1;
  const Position src{c * 10.0, c * 10.0, c * 10.0};
  const std::vector<Position> recs = {{c * 10.0, c * 10.0, (c + 35) * 10.0},
                                      {(c + 10) * 10.0, (c - 20) * 10.0, (c + 24) * 10.0}};
  // The last reflection-free time for each receiver: the mirror source behind the nearest wall.
  std::vector<PointStencil> rec_points;
  for (size_t r = 0; r < recs.size(); ++r) rec_points.push_back(locate_point(sim, recs[r], "receiver"));
  const auto source_set = prop.add_points({locate_point(sim, src, "source")}, nt);
  source_set->upload_series(ricker_wavelet(nt, sim.dt, f0, t0));
  const auto receiver_set = prop.add_points(rec_points, nt);
  const std::vector<float> traces =
      model_one_shot(prop, sim.injection_scale(), *source_set, *receiver_set, int(recs.size()), nt);

  for (size_t r = 0; r < recs.size(); ++r) {
    const double dist = std::sqrt(std::pow(recs[r][0] - src[0], 2) + std::pow(recs[r][1] - src[1], 2) +
                                  std::pow(recs[r][2] - src[2], 2));
    ASSERT_GE(dist, 300.0);
    // Walls are 66 cells (660 m) from the source on every side: the first reflection travels at
    // least 2 * 660 - dist metres, and its wavelet starts ~1/f0 before its peak.
    const double reflection_time = (2 * 660.0 - dist) / v + t0 - 1.0 / f0;
    ASSERT_GT(reflection_time, window) << "window would contain a wall reflection";
    std::vector<double> modeled, exact;
    for (int t = 0; t < nt; ++t) {
      modeled.push_back(traces[r * nt + size_t(t)]);
      exact.push_back(ricker(t * sim.dt - dist / v, f0, t0) / (4 * M_PI * dist));
    }
    const double err = relative_l2(modeled, exact);
    EXPECT_LT(err, 0.05) << "receiver " << r << " at " << dist << " m";
    // The peak must be there, with the 1/(4 pi r) amplitude.
    const double peak_modeled = *std::max_element(modeled.begin(), modeled.end());
    EXPECT_NEAR(peak_modeled * 4 * M_PI * dist, 1.0, 0.05);
  }
}

// A centred source in a cube with equal spacing: the field is symmetric under x -> -x and under
// exchanging x and y (summation order differs between mirrored cells, so rounding is allowed).
TEST(Physics, WavefieldSymmetricAroundCentredSource) {
  const int n = 41, c = 20;
  ModelShape shape{n, n, n, 10, 10, 10};
  BoundaryConfig layers;
  layers.width = 8;
  const SimulationGrid sim = make_simulation_grid(constant_model(shape, 2500), layers, 0.0);
  CpuWavefield prop(make_propagator_setup(sim));
  const int nt = 90;
  const auto source_set = prop.add_points({locate_point(sim, {c * 10.0, c * 10.0, c * 10.0}, "src")}, nt);
  source_set->upload_series(ricker_wavelet(nt, sim.dt, 15, default_ricker_delay(15)));
  for (int t = 0; t < nt; ++t) {
    prop.step();
    source_set->inject(t, sim.injection_scale());
  }
  std::vector<float> prev, cur;
  prop.get_state(prev, cur);
  const GridLayout& g = sim.layout;
  const int m = g.nx - 1; // grid is a cube of odd size, centre at m/2
  float peak = 0;
  for (float v : cur) peak = std::max(peak, std::abs(v));
  ASSERT_GT(peak, 0.0f);
  double max_mirror = 0, max_swap = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const float p = cur[g.index(i, j, k)];
        max_mirror = std::max(max_mirror, double(std::abs(p - cur[g.index(m - i, j, k)])));
        max_swap = std::max(max_swap, double(std::abs(p - cur[g.index(j, i, k)])));
      }
  EXPECT_LT(max_mirror / peak, 1e-5);
  EXPECT_LT(max_swap / peak, 1e-5);
}

// Source-receiver reciprocity: the operator is symmetric (symmetric stencil, diagonal 1/v^2 and
// damping), so G(r, s) = G(s, r) even in a layered medium with absorbing layers.
TEST(Physics, ReciprocityInLayeredMedium) {
  ModelShape shape{40, 30, 36, 10, 10, 10};
  const VelocityModel model = layered_model(shape, {120, 240}, {1800, 2400, 3000});
  BoundaryConfig layers;
  layers.width = 10;
  const SimulationGrid sim = make_simulation_grid(model, layers, 0.0);
  const Position a{30.0, 150.0, 80.0}, b{300.0, 140.0, 310.0}; // different layers
  auto trace = [&](const Position& s, const Position& r) {
    CpuWavefield prop(make_propagator_setup(sim));
    const int nt = 300;
    const auto src = prop.add_points({locate_point(sim, s, "source")}, nt);
    src->upload_series(ricker_wavelet(nt, sim.dt, 12, default_ricker_delay(12)));
    const auto rec = prop.add_points({locate_point(sim, r, "receiver")}, nt);
    const std::vector<float> t = model_one_shot(prop, sim.injection_scale(), *src, *rec, 1, nt);
    return std::vector<double>(t.begin(), t.end());
  };
  const std::vector<double> ab = trace(a, b), ba = trace(b, a);
  double peak = 0;
  for (double v : ab) peak = std::max(peak, std::abs(v));
  ASSERT_GT(peak, 0.0);
  // The discrete operator (1/(v^2 dt^2)) [(1+e) p+ - 2p + (1-e) p-] - lap p is symmetric in space,
  // so the traces agree to rounding with no scaling.
  EXPECT_LT(relative_l2(ab, ba), 1e-4);
}

// Checkerboard data is the stencil's fastest mode: it must grow without bound just above the CFL
// limit and stay bounded just below it, so the limit in numerics.cpp is the real one.
TEST(Physics, CflLimitIsTheStabilityLimit) {
  auto growth = [](double fraction_of_limit) {
    const GridLayout g = make_layout(24, 20, 22);
    const double h = 10, v = 3000;
    const double dt = fraction_of_limit * cfl_dt_limit(v, h, h, h);
    PropagatorSetup s;
    s.layout = g;
    s.weights = make_laplacian_weights(h, h, h);
    s.v2dt2.assign(size_t(g.interior_cells()), float(v * v * dt * dt));
    CpuWavefield prop(s);
    std::vector<float> cur(g.size, 0.0f);
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) cur[g.index(i, j, k)] = ((i + j + k) % 2) ? 1.0f : -1.0f;
    prop.set_state(cur, cur);
    for (int t = 0; t < 400; ++t) prop.step();
    std::vector<float> prev;
    prop.get_state(prev, cur);
    double peak = 0;
    for (float x : cur) peak = std::isfinite(x) ? std::max(peak, double(std::abs(x))) : HUGE_VAL;
    return peak;
  };
  EXPECT_GT(growth(1.02), 1e6);
  EXPECT_LT(growth(0.98), 1e2);
}

} // namespace
} // namespace rtm
