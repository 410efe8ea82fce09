// The pseudo-acoustic TTI step on the CPU (docs/physics.md, "TTI"): the isotropic limit, VTI
// arrival times along and across the axis, a tilted axis rotating them, a long run in a smooth
// anisotropic model, the CFL limit, the Born/migration dot-product test, and model checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cpu/tti_propagator.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/tti_ring.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/tti_setup.h"
#include "solvers/drivers/wavelet.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/anisotropic_model.h"
#include "tests/support/boundary_saving.h"
#include "tests/support/max_difference.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

constexpr double kPi = 3.14159265358979323846;

using test::set_anisotropy;
using test::sponge;

// Traces [receiver][t] of one shot with a Ricker source, on the backend's wavefield for `sim`.
std::vector<float> shoot(Wavefield& field, const SimulationGrid& sim, const Position& source,
                         const std::vector<Position>& receivers, int nt, double f0) {
  auto src = field.add_points({locate_point(sim, source, "source")}, nt);
  src->upload_series(ricker_wavelet(nt, sim.dt, f0, default_ricker_delay(f0)));
  std::vector<PointStencil> points;
  for (const Position& r : receivers) points.push_back(locate_point(sim, r, "receiver"));
  auto rec = field.add_points(points, nt);
  field.zero_state();
  return model_one_shot(field, sim.injection_scale(), *src, *rec, int(receivers.size()), nt);
}

// Time of a trace's largest value at or before step `last`, refined by the parabola through it and
// its neighbours.
double peak_time(const std::vector<float>& traces, int r, int nt, double dt, int last) {
  const float* t = traces.data() + size_t(r) * nt;
  int best = 1;
  for (int i = 1; i < std::min(last + 1, nt - 1); ++i)
    if (t[i] > t[best]) best = i;
  const double a = t[best - 1], b = t[best], c = t[best + 1];
  const double shift = 0.5 * (a - c) / (a - 2 * b + c);
  return (best + shift) * dt;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += double(a[i] - b[i]) * (a[i] - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

// epsilon = delta = 0 with a tilted axis: the TTI step is the isotropic one (H1 + H2 = lap; the
// mixed derivatives enter p's update and cancel against q's, which equals p). Layered vp, sponge
// layers, off-grid source and receivers.
// With the free surface too (source 4.3 and receivers 2.1 cells below it: their sinc weights fold
// across it): the image of p and q is the isotropic step's image.
TEST(TtiPhysics, IsotropicLimitMatchesTheIsotropicPropagator) {
  for (bool free_surface : {false, true}) {
    const ModelShape shape{36, 28, 34, 10, 10, 10};
    VelocityModel model = layered_model(shape, {120, 230}, {1800, 2400, 2900});
    BoundaryConfig boundary = sponge(8);
    boundary.free_surface = free_surface;
    const SimulationGrid iso = make_simulation_grid(model, boundary, 0.0);
    set_anisotropy(model, 0.0, 0.0, 35.0, 40.0);
    const SimulationGrid tti = make_simulation_grid(model, boundary, 0.0);
    ASSERT_EQ(iso.dt, tti.dt);
    const int nt = 260;
    const double f0 = 18;
    const Position src{43.0, 133.0, 171.0};
    std::vector<Position> recs;
    for (double x = 15; x <= 340; x += 25) recs.push_back({21.0, 140.0, x});
    recs.push_back({300.0, 100.0, 50.0});
    CpuWavefield iso_field(make_propagator_setup(iso));
    CpuTtiWavefield tti_field(make_propagator_setup(tti));
    const std::vector<float> a = shoot(iso_field, iso, src, recs, nt, f0);
    const std::vector<float> b = shoot(tti_field, tti, src, recs, nt, f0);
    const double err = rel_l2(b, a);
    std::printf("epsilon = delta = 0, tilt 35/40 degrees%s: relative L2 of the traces TTI vs isotropic = %.3g\n",
                free_surface ? ", free surface" : "", err);
    EXPECT_LT(err, 1e-5);
  }
}

struct ArrivalRun {
  SimulationGrid sim;
  std::vector<float> traces;
  int nt = 0;
};

// A homogeneous TTI medium (vp 2000, epsilon 0.25, delta 0.1), a source at the centre of a 61^3
// model and receivers at 10 and 24 cells along each unit vector of `directions`. The velocity
// along a direction is (24 - 10) h / (t24 - t10) from the traces' first-arrival peaks: source
// wavelet, near field and rounding of the peak pick cancel in the difference. The first arrival's
// peak is the largest value up to half a period after the slowest qP wave (vp) would arrive: the
// pseudo-acoustic system's slow shear artefact (docs/physics.md, TTI), excited by a point source
// where epsilon > delta, reaches the near receivers later and there outgrows the qP wave.
constexpr double kVp = 2000, kEps = 0.25, kDelta = 0.1, kH = 10, kF0 = 20;
constexpr int kR1 = 10, kR2 = 24;

std::vector<double> measured_velocities(double theta, double phi,
                                        const std::vector<std::array<double, 3>>& directions) {
  const int n = 61, c = 30;
  const ModelShape shape{n, n, n, kH, kH, kH};
  VelocityModel model = constant_model(shape, kVp);
  set_anisotropy(model, kEps, kDelta, theta, phi);
  const SimulationGrid sim = make_simulation_grid(model, sponge(10), 0.0);
  const Position src{c * kH, c * kH, c * kH};
  std::vector<Position> recs;
  for (const auto& u : directions) // u = (x, y, z); positions are (z, y, x)
    for (int r : {kR1, kR2}) recs.push_back({src[0] + r * kH * u[2], src[1] + r * kH * u[1], src[2] + r * kH * u[0]});
  // Long enough for the slower arrival's peak at kR2 plus the wavelet's delay.
  const int nt = int((default_ricker_delay(kF0) + kR2 * kH / kVp + 0.03) / sim.dt) + 1;
  CpuTtiWavefield field(make_propagator_setup(sim));
  const std::vector<float> traces = shoot(field, sim, src, recs, nt, kF0);
  std::vector<double> v;
  for (size_t d = 0; d < directions.size(); ++d) {
    auto last_step = [&](int r) { return int((default_ricker_delay(kF0) + r * kH / kVp + 0.5 / kF0) / sim.dt); };
    const double t1 = peak_time(traces, int(2 * d), nt, sim.dt, last_step(kR1));
    const double t2 = peak_time(traces, int(2 * d + 1), nt, sim.dt, last_step(kR2));
    v.push_back((kR2 - kR1) * kH / (t2 - t1));
  }
  return v;
}

// VTI: along the axis (z) vp, across it (x and y) vp sqrt(1 + 2 epsilon), within 1%.
TEST(TtiPhysics, VtiArrivalsTravelAtVpAlongTheAxisAndVpSqrt1Plus2EpsilonAcross) {
  const std::vector<double> v = measured_velocities(0, 0, {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}});
  const double vh = kVp * std::sqrt(1 + 2 * kEps);
  std::printf("VTI: along the axis %.1f m/s (vp %.1f), across %.1f and %.1f m/s (vp sqrt(1+2eps) %.1f)\n",
              v[0], kVp, v[1], v[2], vh);
  EXPECT_NEAR(v[0] / kVp, 1.0, 0.01);
  EXPECT_NEAR(v[1] / vh, 1.0, 0.01);
  EXPECT_NEAR(v[2] / vh, 1.0, 0.01);
}

// The same medium with the axis tilted by 40 degrees at azimuth 30: the two velocities move with
// the axis (measured along n and along a direction perpendicular to it), and along z the wave is
// no longer at vp (the tilt changed something the test can see).
TEST(TtiPhysics, ATiltedAxisRotatesTheWavefrontByTheTilt) {
  const double theta = 40 * kPi / 180, phi = 30 * kPi / 180;
  const std::array<double, 3> n = {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi),
                                   std::cos(theta)};
  // Perpendicular to n, in the plane of n and z.
  const std::array<double, 3> m = {std::cos(theta) * std::cos(phi), std::cos(theta) * std::sin(phi),
                                   -std::sin(theta)};
  const std::vector<double> v = measured_velocities(40, 30, {n, m, {0, 0, 1}});
  const double vh = kVp * std::sqrt(1 + 2 * kEps);
  std::printf("tilt 40 degrees, azimuth 30: along n %.1f m/s (vp %.1f), perpendicular %.1f m/s (%.1f), "
              "along z %.1f m/s\n",
              v[0], kVp, v[1], vh, v[2]);
  EXPECT_NEAR(v[0] / kVp, 1.0, 0.01);
  EXPECT_NEAR(v[1] / vh, 1.0, 0.01);
  EXPECT_GT(v[2] / kVp, 1.03);
}

// The symbols of the 1-D stencils for unit spacing: L(k) of the Laplacian's second derivative
// (positive), D(k) of the centred first derivative.
double second_symbol(double k) {
  double l = -kStencilC[0];
  for (int m = 1; m <= 4; ++m) l -= 2 * kStencilC[m] * std::cos(m * k);
  return l;
}
double first_symbol(double k) {
  double d = 0;
  for (int m = 1; m <= 4; ++m) d += 2 * kFirstDerivC[m] * std::sin(m * k);
  return d;
}

// kTtiAxisFactor is what D misses of L along an axis: |R(k)|^2 + D(k)^2 = L(k) for all k, so H1
// along an axis is the Laplacian's second derivative, Nyquist included (L(pi) = 6.50, D(pi) = 0).
TEST(TtiOperator, AxisFactorCompletesTheLaplacian) {
  double worst = 0;
  for (int s = 0; s <= 1000; ++s) {
    const double k = kPi * s / 1000;
    double re = 0, im = 0;
    for (int m = 0; m < 9; ++m) {
      re += kTtiAxisFactor[m] * std::cos(m * k);
      im += kTtiAxisFactor[m] * std::sin(m * k);
    }
    worst = std::max(worst, std::abs(re * re + im * im + first_symbol(k) * first_symbol(k) - second_symbol(k)));
  }
  std::printf("max over k of | |R|^2 + D^2 - L | = %.3g\n", worst);
  EXPECT_LT(worst, 1e-13);
}

// H1 of the step on plane waves cos(k . x), for a constant tilted axis n: -((n . D(k))^2 +
// sum_a n_a^2 (L(k_a) - D(k_a)^2)) per unit spacing (docs/physics.md, TTI), read at a cell at least
// 8 cells from the grid's edges (the two passes reach 8), through one step with v2dt2 = 1, E = S = 1,
// p = 0 and q = the wave: q[n+1] = 2 q + H1 q.
TEST(TtiOperator, PlaneWavesSeeTheSymbol) {
  const int n = 20, c = 10;
  const GridLayout g = make_layout(n, n, n);
  const GridLayout t = tti_layout(g);
  const double theta = 30 * kPi / 180, phi = 20 * kPi / 180;
  const double axis[3] = {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)};
  TtiCoefficients coef;
  const size_t cells = size_t(n) * n * n;
  coef.e.assign(cells, 1.0f);
  coef.s.assign(cells, 1.0f);
  coef.nx.assign(cells, float(axis[0]));
  coef.ny.assign(cells, float(axis[1]));
  coef.nz.assign(cells, float(axis[2]));
  const TtiPaddedCoefficients padded(g, std::vector<float>(cells, 1.0f), coef);
  const TtiWeights w = make_tti_weights(1, 1, 1);
  const double waves[][3] = {{kPi, 0, 0}, {0, 0, kPi}, {kPi, kPi, kPi}, {0.3, 0.2, 0.1}, {1.0, 0.5, 2.0}, {2.5, -1.2, 0.7}};
  for (const auto& k : waves) {
    std::vector<float> cur(size_t(t.size), 0.0f), next(size_t(t.size), 0.0f);
    std::vector<float> scratch(size_t(kTtiScratchArrays) * size_t(t.size), 0.0f);
    for (int z = 0; z < n; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          cur[size_t(t.index(x, y, z) + tti_q_offset(t))] =
              float(std::cos(k[0] * (x - c) + k[1] * (y - c) + k[2] * (z - c)));
    cpu_tti_step(g, w, padded, DampingProfiles{}, cur.data(), next.data(), scratch.data());
    const int64_t f = t.index(c, c, c) + tti_q_offset(t);
    const double h1 = double(next[size_t(f)]) - 2.0 * double(cur[size_t(f)]);
    double nd = 0, pure = 0;
    for (int a = 0; a < 3; ++a) {
      nd += axis[a] * first_symbol(k[a]);
      pure += axis[a] * axis[a] * (second_symbol(k[a]) - first_symbol(k[a]) * first_symbol(k[a]));
    }
    const double expected = -(nd * nd + pure);
    EXPECT_NEAR(h1, expected, 1e-5 * (1 + std::abs(expected))) << "k = " << k[0] << ", " << k[1] << ", " << k[2];
  }
}

// Nothing outruns the qP wave. The first TTI operator (H1 = -D_n^T D_n alone) was blind to the
// Nyquist mode along the symmetry axis: wavenumbers near it had the dispersion of long waves on
// the slow (shear-artefact) branch and travelled along the axis at vp sqrt(2 (epsilon - delta) / E)
// |D'(pi)| = 2660 m/s here, faster than the qP wave's vp, as grid-scale noise (docs/physics.md,
// TTI). VTI medium, a receiver on the axis 40 cells from the source: up to one period (1/f0)
// before the qP wave's peak, where the Ricker wavelet itself is below 1e-3 of its peak, the trace
// holds at most 1% of its largest value. Measured: 3.5e-4 with the pure-axis factors, 2.5e-2 with
// the first operator.
TEST(TtiPhysics, NothingOutrunsTheQpWaveAlongTheAxis) {
  const int nxy = 30, nz = 100, r = 40;
  const double h = 10, f0 = 15, vp = 2000;
  const ModelShape shape{nxy, nxy, nz, h, h, h};
  VelocityModel model = constant_model(shape, vp);
  set_anisotropy(model, 0.3, 0.1, 0, 0);
  const SimulationGrid sim = make_simulation_grid(model, sponge(10), 0.0);
  CpuTtiWavefield field(make_propagator_setup(sim));
  const double delay = default_ricker_delay(f0);
  const int nt = int((delay + r * h / vp + 0.05) / sim.dt);
  const Position src{25 * h, 15 * h, 15 * h}, rec{(25 + r) * h, 15 * h, 15 * h};
  const std::vector<float> trace = shoot(field, sim, src, {rec}, nt, f0);
  const int qp_peak = int((delay + r * h / vp) / sim.dt), early_end = int((delay + r * h / vp - 1.0 / f0) / sim.dt);
  double early = 0, peak = 0;
  for (int t = 0; t < nt; ++t) {
    peak = std::max(peak, double(std::abs(trace[size_t(t)])));
    if (t < early_end) early = std::max(early, double(std::abs(trace[size_t(t)])));
  }
  std::printf("VTI (epsilon 0.3, delta 0.1), receiver on the axis %d cells away: largest |p| up to 1/f0 before the qP "
              "peak %.3g of the trace's largest (qP peak at step %d)\n",
              r, early / peak, qp_peak);
  EXPECT_LT(early, 0.01 * peak);
}

// A smooth anisotropic model (vp, epsilon, delta, tilt and azimuth all varying), no absorbing
// layers (the energy stays in the grid), 5000 steps at the default dt: the field stays bounded.
// With the free surface on top as well: its image (solvers/contracts/tti_free_surface.h) keeps the
// operator's energy bounded where the tilt varies with depth.
TEST(TtiPhysics, LongRunInASmoothAnisotropicModelStaysBounded) {
  for (bool free_surface : {false, true}) {
    const int n = 18;
    const ModelShape shape{n, n, n, 10, 10, 10};
    VelocityModel model = constant_model(shape, 2000);
    set_anisotropy(model, 0, 0, 0, 0);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const size_t c = (size_t(k) * n + j) * n + i;
          const double x = double(i) / n, y = double(j) / n, z = double(k) / n;
          model.vp[c] = float(1800 + 600 * z + 100 * std::sin(2 * kPi * x));
          model.anisotropy.epsilon[c] = float(0.15 + 0.1 * y);
          model.anisotropy.delta[c] = float(0.05 + 0.05 * std::cos(2 * kPi * x));
          model.anisotropy.theta[c] = float(50 * x - 20 + 10 * z);
          model.anisotropy.phi[c] = float(90 * y);
        }
    BoundaryConfig walls;
    walls.width = 0;
    walls.absorber = Absorber::sponge;
    walls.free_surface = free_surface;
    const SimulationGrid sim = make_simulation_grid(model, walls, 0.0);
    CpuTtiWavefield field(make_propagator_setup(sim));
    const int nt = 5000;
    auto src = field.add_points({locate_point(sim, {85.0, 85.0, 85.0}, "source")}, nt);
    src->upload_series(ricker_wavelet(nt, sim.dt, 25, default_ricker_delay(25)));
    field.zero_state();
    double early = 0, late = 0;
    for (int t = 0; t < nt; ++t) {
      field.step();
      src->inject(t, sim.injection_scale());
      if (t % 50 == 49) {
        const FieldHealth h = field.check_health();
        ASSERT_TRUE(h.finite) << "step " << t;
        (t < 500 ? early : late) = std::max(t < 500 ? early : late, double(std::abs(h.worst_value)));
      }
    }
    std::printf("5000 steps, no absorbing layers%s: max |p or q| in steps 0-500 %.3g, 500-5000 %.3g\n",
                free_surface ? ", free surface" : "", early, late);
    ASSERT_GT(early, 0.0);
    EXPECT_LT(late, 3 * early);
  }
}

// Random state in a tilted anisotropic medium: bounded at 0.98 x the CFL limit over 400 steps
// (every mode, the checkerboard included, is in a random state); with epsilon = delta = 0 the
// limit is the isotropic one and 1.02 x it grows past 1e6, so the limit is the real one there.
TEST(TtiPhysics, CflLimitIsStableAndSharpInTheIsotropicLimit) {
  auto run = [](double eps, double delta, double fraction) {
    const ModelShape shape{20, 18, 16, 10, 10, 10};
    VelocityModel model = constant_model(shape, 2000);
    set_anisotropy(model, eps, delta, 30, 60);
    BoundaryConfig walls;
    walls.width = 0;
    walls.absorber = Absorber::sponge;
    const double limit = cfl_dt_limit(fastest_velocity(model), 10, 10, 10);
    // Beyond the limit make_simulation_grid refuses the dt: scale v2dt2 to it instead.
    const SimulationGrid sim = make_simulation_grid(model, walls, 0.5 * limit);
    PropagatorSetup setup = make_propagator_setup(sim);
    for (float& v : setup.v2dt2) v = float(v * (2 * fraction) * (2 * fraction));
    CpuTtiWavefield field(setup);
    std::vector<float> state = test::random_values(size_t(field.layout().size), 5);
    // Only interior cells: halo cells must stay zero.
    std::vector<float> a(state.size(), 0.0f), b(state.size(), 0.0f);
    const GridLayout& t = field.layout();
    for (int k = 0; k < t.nz; ++k)
      for (int j = 0; j < t.ny; ++j)
        for (int i = 0; i < t.nx; ++i)
          for (int64_t f : {t.index(i, j, k), t.index(i, j, k) + tti_q_offset(t)}) a[f] = b[f] = state[f];
    field.set_state(a, b);
    double peak = 0;
    for (int s = 0; s < 400; ++s) field.step();
    const FieldHealth h = field.check_health();
    peak = h.finite ? std::abs(h.worst_value) : std::numeric_limits<double>::infinity();
    return peak;
  };
  const double stable = run(0.3, 0.1, 0.98);
  const double iso_stable = run(0.0, 0.0, 0.98);
  const double iso_unstable = run(0.0, 0.0, 1.02);
  std::printf("400 steps from a random state: eps 0.3 at 0.98 x limit %.3g; eps 0 at 0.98 x %.3g, 1.02 x %.3g\n",
              stable, iso_stable, iso_unstable);
  EXPECT_LT(stable, 100.0);
  EXPECT_LT(iso_stable, 100.0);
  EXPECT_GT(iso_unstable, 1e6);
}

// A --dt above the TTI limit is refused, the limit coming from vp sqrt(1 + 2 epsilon).
TEST(TtiPhysics, DtAboveTheTtiLimitIsRefused) {
  const ModelShape shape{10, 10, 10, 10, 10, 10};
  VelocityModel model = constant_model(shape, 2000);
  set_anisotropy(model, 0.3, 0.1, 0, 0);
  const double iso_limit = cfl_dt_limit(2000, 10, 10, 10);
  const double limit = cfl_dt_limit(2000 * std::sqrt(1.6), 10, 10, 10);
  EXPECT_NO_THROW(make_simulation_grid(model, sponge(4), 0.99 * limit));
  try {
    make_simulation_grid(model, sponge(4), 0.5 * (limit + iso_limit));
    FAIL() << "a dt between the TTI and the isotropic limit was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("CFL"), std::string::npos) << e.what();
  }
}

TEST(TtiPhysics, CpmlIsRefusedForTti) {
  const ModelShape shape{10, 10, 10, 10, 10, 10};
  VelocityModel model = constant_model(shape, 2000);
  set_anisotropy(model, 0.1, 0.05, 10, 0);
  BoundaryConfig cpml;
  cpml.width = 5;
  try {
    make_simulation_grid(model, cpml, 0.0);
    FAIL() << "the C-PML was accepted for TTI";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--absorber sponge"), std::string::npos) << e.what();
  }
}

// The dot-product test for the pair migration uses (docs/rtm.md, section 8): Born modeling with the
// source C (m S_p, 0) and the raw image S_p R_p with data injected through C. Layered vp, epsilon
// and delta, a constant or a varying tilt (K symmetric either way): exact to rounding.
test::RtmProblem tti_problem(double tilt_spread, int nx = 26, int ny = 18, int nz = 24,
                             bool free_surface = false) {
  test::RtmProblem p = test::layered_problem(nx, ny, nz, 6, 130, free_surface, Absorber::sponge);
  VelocityModel model = p.sim.model;
  set_anisotropy(model, 0, 0, 0, 0);
  for (int k = 0; k < model.nz; ++k)
    for (int j = 0; j < model.ny; ++j)
      for (int i = 0; i < model.nx; ++i) {
        const size_t c = (size_t(k) * model.ny + j) * model.nx + i;
        model.anisotropy.epsilon[c] = k < 12 ? 0.1f : 0.25f;
        model.anisotropy.delta[c] = k < 12 ? 0.05f : 0.1f;
        model.anisotropy.theta[c] = float(30 + tilt_spread * std::sin(0.3 * i + 0.2 * k));
        model.anisotropy.phi[c] = float(20 + tilt_spread * std::cos(0.25 * j));
      }
  p.sim = make_simulation_grid(model, p.sim.boundary, 0.0);
  p.wavelet = ricker_wavelet(p.nt, p.sim.dt, p.f0, default_ricker_delay(p.f0));
  p.receiver_points.clear();
  for (const Position& r : p.receivers) p.receiver_points.push_back(locate_point(p.sim, r, "receiver"));
  return p;
}

double dot_product_error(const test::RtmProblem& p, unsigned seed) {
  test::ShotPair pair = test::make_shot_pair(p, "cpu");
  const std::vector<float> m = test::random_values(size_t(p.box.cells()), 100 + seed);
  const std::vector<float> d = test::random_values(p.receivers.size() * size_t(p.nt), 200 + seed);
  const int nrec = int(p.receivers.size());
  const std::vector<float> bm = born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
  pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
  pair.fields->allocate_image(p.box);
  pair.make_boundary_store(p.box, p.nt - 1);
  migrate_one_shot(*pair.fields, pair.sets, p.box, Reconstruction::boundary, 1);
  const std::vector<float> btd = pair.fields->download_image();
  const double lhs = test::dot(bm, d), rhs = test::dot(m, btd);
  EXPECT_GT(std::abs(lhs), 0.0);
  // Relative to the largest either side could be (Cauchy-Schwarz): random d makes <Bm, d> a sum of
  // terms of both signs, so |lhs| alone would measure cancellation as much as the operators.
  const double scale = std::max(std::sqrt(test::dot(bm, bm) * test::dot(d, d)),
                                std::sqrt(test::dot(m, m) * test::dot(btd, btd)));
  std::printf("  <Bm,d> = %.9g, <m,B'd> = %.9g: relative to each other %.3g, to ||Bm|| ||d|| %.3g\n", lhs,
              rhs, std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs)), std::abs(lhs - rhs) / scale);
  return std::abs(lhs - rhs) / scale;
}

TEST(TtiAdjoint, BornAndMigrationPassTheDotProductTest) {
  const test::RtmProblem p = tti_problem(0.0);
  ASSERT_EQ(test::make_shot_pair(p, "cpu").fields->name(), "cpu/tti");
  const double constant = dot_product_error(p, 1);
  // A tilt varying by +-20 degrees over a few cells: H1 = div(n n . D) stays symmetric (the
  // non-divergence form n n : D D would not be, and blew up in the long run above).
  const double varying = dot_product_error(tti_problem(20.0), 2);
  std::printf("TTI dot-product test (relative to ||Bm|| ||d||): constant tilt %.3g, tilt varying +-20 degrees %.3g\n",
              constant, varying);
  // float32 rounding: ~1e-8 measured over seeds 1-4 (relative to each other 3e-7 .. 6e-5, where
  // the two sides happen to be small).
  EXPECT_LT(constant, 1e-6);
  EXPECT_LT(varying, 1e-6);
}

// Two-sweep migration for TTI (docs/rtm.md, section 4): the source field's p kept at the imaging
// steps and restored there while the receiver field alone steps back, against boundary saving's
// reconstruction of (p, q). Imaging needs p only, and boundary saving rebuilds p exactly inside
// the box, so with float32 snapshots (the store migrate_one_shot makes when none is given) the
// images agree to rounding, here imaging every 3rd step (both). A p restored one step off, or
// one restored from the wrong slot, is off by O(1).
TEST(TtiReconstruction, SnapshotImageIsBoundarySavingsImage) {
  const test::RtmProblem p = tti_problem(20.0);
  const int nrec = int(p.receivers.size());
  const std::vector<float> d = test::random_values(size_t(nrec) * size_t(p.nt), 31);
  auto image = [&](Reconstruction r, int interval) {
    test::ShotPair pair = test::make_shot_pair(p, "cpu");
    pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
    pair.fields->allocate_image(p.box);
    if (r == Reconstruction::boundary) pair.make_boundary_store(p.box, p.nt - 1);
    BackwardSweep backward;
    backward.imaging_interval = interval; // boundary saving images every interval-th step too
    migrate_one_shot(*pair.fields, pair.sets, p.box, r, interval, backward);
    return pair.fields->download_image();
  };
  for (const int interval : {3}) {
    const std::vector<float> boundary = image(Reconstruction::boundary, interval);
    const std::vector<float> snapshots = image(Reconstruction::snapshots, interval);
    const double e = relative_l2(snapshots, boundary);
    std::printf("TTI image, snapshots every %d step(s) against boundary saving: relative L2 %.3g\n",
                interval, e);
    EXPECT_GT(test::max_abs(boundary), 0.0);
    EXPECT_LT(e, 1e-5);
  }
}

// The free surface of the TTI step is the image method exactly where the tilt is constant: a grid
// with the surface steps as a twin grid twice as tall (plus the surface plane) that holds the
// field and its negative image, the axis reflected in the image half (n_z negated) and (0, 0, n_z)
// on the surface plane (solvers/contracts/tti_free_surface.h). A tilt of 35 degrees at azimuth 40:
// every pass-1 array meets the surface. Random p and q, 3 steps.
TEST(TtiOperator, FreeSurfaceIsTheImageOfAConstantTilt) {
  const int nx = 11, ny = 9, nz = 12, tz = 2 * nz + 1; // twin plane nz is the surface
  const double theta = 35 * kPi / 180, phi = 40 * kPi / 180;
  const float n[3] = {float(std::sin(theta) * std::cos(phi)), float(std::sin(theta) * std::sin(phi)),
                      float(std::cos(theta))};
  auto setup_of = [&](int planes, bool twin) {
    PropagatorSetup s;
    s.layout = make_layout(nx, ny, planes);
    s.weights = make_laplacian_weights(10, 12, 9);
    const size_t cells = size_t(s.layout.interior_cells()), plane = size_t(nx) * ny;
    s.v2dt2.assign(cells, 0.03f);
    s.tti.hx = 10;
    s.tti.hy = 12;
    s.tti.hz = 9;
    s.tti.e.assign(cells, 1.4f);
    s.tti.s.assign(cells, 1.1f);
    s.tti.nx.assign(cells, n[0]);
    s.tti.ny.assign(cells, n[1]);
    s.tti.nz.assign(cells, n[2]);
    if (twin)
      for (size_t c = 0; c < size_t(nz + 1) * plane; ++c) { // the image half and the surface plane
        const bool surface = c >= size_t(nz) * plane;
        s.tti.nx[c] = surface ? 0.0f : n[0];
        s.tti.ny[c] = surface ? 0.0f : n[1];
        s.tti.nz[c] = surface ? n[2] : -n[2];
      }
    s.free_surface = !twin;
    return s;
  };
  const PropagatorSetup half_setup = setup_of(nz, false), twin_setup = setup_of(tz, true);
  const GridLayout h = tti_layout(half_setup.layout), t = tti_layout(twin_setup.layout);
  std::vector<float> prev(size_t(h.size), 0.0f), cur = prev, twin_prev(size_t(t.size), 0.0f), twin_cur = twin_prev;
  uint32_t seed = 777;
  auto random = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1u << 24) - 0.5f;
  };
  for (int64_t field : {int64_t(0), int64_t(1)})
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const float a = random(), b = random();
          prev[size_t(h.index(i, j, k) + field * tti_q_offset(h))] = a;
          cur[size_t(h.index(i, j, k) + field * tti_q_offset(h))] = b;
          for (int side : {1, -1}) { // half plane k is twin plane nz + 1 + k, its image nz - 1 - k
            const int64_t c = t.index(i, j, nz + side * (1 + k)) + field * tti_q_offset(t);
            twin_prev[size_t(c)] = side * a;
            twin_cur[size_t(c)] = side * b;
          }
        }
  CpuTtiWavefield half(half_setup), twin(twin_setup);
  half.set_state(prev, cur);
  twin.set_state(twin_prev, twin_cur);
  for (int step = 0; step < 3; ++step) {
    half.step();
    twin.step();
  }
  half.get_state(prev, cur);
  twin.get_state(twin_prev, twin_cur);
  double worst = 0, largest = 0;
  for (int64_t field : {int64_t(0), int64_t(1)})
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const double a = cur[size_t(h.index(i, j, k) + field * tti_q_offset(h))];
          const double b = twin_cur[size_t(t.index(i, j, nz + 1 + k) + field * tti_q_offset(t))];
          worst = std::max(worst, std::abs(a - b));
          largest = std::max(largest, std::abs(b));
        }
  std::printf("TTI free surface against its twin with the image: largest difference %.3g of %.3g\n", worst,
              largest);
  ASSERT_GT(largest, 0.0);
  EXPECT_LE(worst, 1e-6 * largest); // float32 rounding (sums of other orders near the surface)
}

// The same with the free surface (solvers/contracts/tti_free_surface.h), the receivers 2 and the
// source 3.3 cells below the first row: Hicks' folded weights inject and sample alike, and the
// image keeps the operator symmetric.
TEST(TtiAdjoint, WithTheFreeSurfaceBornAndMigrationPassTheDotProductTest) {
  const double constant = dot_product_error(tti_problem(0.0, 26, 18, 24, true), 1);
  const double varying = dot_product_error(tti_problem(20.0, 26, 18, 24, true), 2);
  std::printf("TTI dot-product test with the free surface: constant tilt %.3g, tilt varying +-20 degrees %.3g\n",
              constant, varying);
  EXPECT_LT(constant, 1e-6);
  EXPECT_LT(varying, 1e-6);
}

// Boundary saving reconstructs the TTI source field (both p and q rings, kTtiRing = 8 cells thick,
// are kept; with the isotropic 4-cell ring the error was 1.8e-3). The box is larger than two rings
// along every axis, so part of it is reconstructed by the backward steps alone.
TEST(TtiAdjoint, BoundarySavingReproducesTheForwardField) {
  const test::RtmProblem p = tti_problem(10.0, 30, 22, 26);
  ASSERT_GT(p.box.ny(), 2 * kTtiRing);
  test::ShotPair pair = test::make_shot_pair(p, "cpu");
  const test::ReconstructionNorms norms = test::reconstruct_source_field(p, pair);
  const double worst = norms.worst_error(), largest = norms.largest_field();
  ASSERT_GT(largest, 0.0);
  std::printf("TTI boundary-saving reconstruction: max error / max norm = %.3g\n", worst / largest);
  EXPECT_LT(worst / largest, 1e-4);
}

// ---- model checks -------------------------------------------------------------------------------

VelocityModel small_tti_model() {
  VelocityModel m = constant_model(ModelShape{4, 3, 2, 10, 10, 10}, 2000);
  set_anisotropy(m, 0.2, 0.1, 10, 20);
  return m;
}

std::string refusal(const VelocityModel& m) {
  try {
    check_anisotropy(m, "m.h5");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TtiModel, UnstableOrUnphysicalCellsAreRefusedByName) {
  EXPECT_EQ(refusal(small_tti_model()), "");
  VelocityModel m = small_tti_model();
  m.anisotropy.delta[(1 * 3 + 2) * 4 + 3] = 0.3f; // cell (z,y,x) = (1,2,3)
  std::string e = refusal(m);
  EXPECT_NE(e.find("(z,y,x) = (1,2,3)"), std::string::npos) << e;
  EXPECT_NE(e.find("delta = 0.3 > epsilon = 0.2"), std::string::npos) << e;
  m = small_tti_model();
  m.anisotropy.theta[5] = std::numeric_limits<float>::quiet_NaN();
  e = refusal(m);
  EXPECT_NE(e.find("/theta"), std::string::npos) << e;
  EXPECT_NE(e.find("(z,y,x) = (0,1,1)"), std::string::npos) << e;
  m = small_tti_model();
  m.anisotropy.phi[0] = std::numeric_limits<float>::infinity();
  EXPECT_NE(refusal(m).find("/phi"), std::string::npos);
  m = small_tti_model();
  m.anisotropy.epsilon[2] = 1.5f;
  EXPECT_NE(refusal(m).find("epsilon = 1.5"), std::string::npos);
  m = small_tti_model();
  m.anisotropy.delta[2] = -0.6f;
  EXPECT_NE(refusal(m).find("delta > -0.5"), std::string::npos);
  m = small_tti_model();
  m.anisotropy.theta[2] = 200.0f;
  EXPECT_NE(refusal(m).find("[-180, 180]"), std::string::npos);
  m = small_tti_model();
  m.anisotropy.epsilon.pop_back();
  EXPECT_NE(refusal(m).find("/epsilon has 23 values"), std::string::npos);
}

// --physics tti takes the TTI kernels' names only: an acoustic variant name is refused naming them
// (a build without CUDA refuses every variant name, saying why).
TEST(TtiBackend, AnAcousticVariantNameIsRefused) {
  VelocityModel model = constant_model(ModelShape{12, 10, 11, 10, 10, 10}, 2000);
  set_anisotropy(model, 0.1, 0.05, 20, 30);
  const PropagatorSetup setup = make_propagator_setup(make_simulation_grid(model, sponge(4), 0.0));
  BackendOptions options;
  options.backend = "cpu";
  options.variant = "regqueue_vec4";
  std::ostringstream log;
  try {
    make_tti_wavefield(setup, options, log);
    ADD_FAILURE() << "an acoustic variant name was accepted for TTI";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("regqueue_vec4"), std::string::npos) << what;
    if (cuda_built()) {
      EXPECT_NE(what.find("tti-pipelined"), std::string::npos) << what;
      EXPECT_NE(what.find("tti-naive"), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find("no CUDA kernels"), std::string::npos) << what;
    }
  }
  options.variant = "auto";
  EXPECT_EQ(make_tti_wavefield(setup, options, log)->name(), "cpu/tti");
}

} // namespace
} // namespace rtm
