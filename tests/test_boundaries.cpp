// Absorbing boundaries: the spurious reflection they return, measured against a domain large enough
// that nothing comes back within the window (docs/rtm.md, section 1), and the free
// surface's pressure-release reflection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/wavelet.h"

namespace rtm {
namespace {

constexpr double kH = 10, kV = 2000, kF0 = 15; // 5.3 points per shortest wavelength (f_max = 2.5 f0)

using CellOffset = std::array<int, 3>; // (dz, dy, dx) cells from the source

// Traces [receiver][t] in `model`, source at model cell (sx, sy, sz), receivers at the given
// offsets from it, Ricker wavelet of peak frequency f0.
std::vector<float> traces_in(const VelocityModel& model, const BoundaryConfig& boundary, int sx,
                             int sy, int sz, const std::vector<CellOffset>& offsets, int nt,
                             double* dt, double f0) {
  const SimulationGrid sim = make_simulation_grid(model, boundary, 0.0);
  *dt = sim.dt;
  CpuWavefield prop(make_propagator_setup(sim));
  const auto source_set = prop.add_points({locate_point(sim, {sz * kH, sy * kH, sx * kH}, "source")}, nt);
  source_set->upload_series(ricker_wavelet(nt, sim.dt, f0, default_ricker_delay(f0)));
  std::vector<PointStencil> receivers;
  for (const CellOffset& o : offsets)
    receivers.push_back(
        locate_point(sim, {(sz + o[0]) * kH, (sy + o[1]) * kH, (sx + o[2]) * kH}, "receiver"));
  const auto receiver_set = prop.add_points(receivers, nt);
  return model_one_shot(prop, sim.injection_scale(), *source_set, *receiver_set, int(offsets.size()), nt);
}

// Traces [receiver][t] of a homogeneous box of nx x ny x nz model cells, source at model cell
// (sx, sy, sz), receivers at the given offsets from it.
std::vector<float> homogeneous_traces(int nx, int ny, int nz, const BoundaryConfig& boundary, int sx,
                                      int sy, int sz, const std::vector<CellOffset>& offsets, int nt,
                                      double* dt, double f0 = kF0) {
  return traces_in(constant_model({nx, ny, nz, kH, kH, kH}, kV), boundary, sx, sy, sz, offsets, nt,
                   dt, f0);
}

// A 40^3 model with a 40-cell sponge (--absorber sponge), the source 25 cells from the x = 0
// face. Receivers: 5 and 15 cells from that face on the normal through the source, two off the
// normal (oblique incidence on the x face, and on the y face), one towards an edge.
// The window (0.7 s) covers the round trip source -> outer wall of the layer -> nearest receiver
// (65 + 45 cells = 1.1 km, 0.55 s) plus the wavelet's delay and half-length, so whatever the layer
// returns, including what bounces off the zero halo behind it, is measured.
// Reference: the same source and receivers, no layers, and each wall of the model far enough that
// its reflection reaches no receiver within the window.
TEST(Boundaries, SpongeOfFortyCellsReflectsAtMostOnePercent) {
  const std::vector<CellOffset> offsets = {
      {0, 0, -20}, {0, 0, -10}, {0, 15, -20}, {0, 15, 0}, {15, 15, -20}};
  const int nt = 351; // 0.7 s at dt ~ 2 ms
  double dt = 0, dt_reference = 0;
  BoundaryConfig absorbing; // the sponge as it was the default before the C-PML
  absorbing.absorber = Absorber::sponge;
  absorbing.width = 40;
  const std::vector<float> bounded =
      homogeneous_traces(40, 40, 40, absorbing, 25, 20, 20, offsets, nt, &dt);

  // A wall D cells from the source on the + side of an axis mirrors the source to 2D cells away,
  // at least 2D - offset from a receiver at that offset (2D + offset on the - side). The reflection
  // starts 1/f0 before its peak, so it stays out of the window when that distance exceeds
  // reach = v (t_end - t0 + 1/f0) / h.
  const double reach = kV * (0.7 - default_ricker_delay(kF0) + 1 / kF0) / kH;
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}; // wall distances per axis (x, y, z)
  for (const CellOffset& o : offsets)
    for (int axis = 0; axis < 3; ++axis) {
      const int off = o[2 - axis];
      hi[axis] = std::max(hi[axis], int(std::ceil((reach + off) / 2)) + 1);
      lo[axis] = std::max(lo[axis], int(std::ceil((reach - off) / 2)) + 1);
    }
  BoundaryConfig none;
  none.width = 0;
  const std::vector<float> reference =
      homogeneous_traces(lo[0] + hi[0] + 1, lo[1] + hi[1] + 1, lo[2] + hi[2] + 1, none, lo[0], lo[1],
                         lo[2], offsets, nt, &dt_reference);
  ASSERT_EQ(dt, dt_reference);
  ASSERT_GT(nt * dt, 0.69);
  std::printf("reference model %d x %d x %d cells\n", lo[0] + hi[0] + 1, lo[1] + hi[1] + 1,
              lo[2] + hi[2] + 1);

  for (size_t k = 0; k < offsets.size(); ++k) {
    double direct_peak = 0, max_difference = 0;
    for (int t = 0; t < nt; ++t) {
      const double ref = reference[k * nt + size_t(t)], got = bounded[k * nt + size_t(t)];
      direct_peak = std::max(direct_peak, std::abs(ref));
      max_difference = std::max(max_difference, std::abs(got - ref));
    }
    ASSERT_GT(direct_peak, 0.0);
    const double reflection = max_difference / direct_peak;
    EXPECT_LE(reflection, 0.01) << "receiver " << k;
    std::printf("receiver at (dz, dy, dx) = (%d, %d, %d) cells from the source: reflection %.3f%%\n",
                offsets[k][0], offsets[k][1], offsets[k][2], 100 * reflection);
  }
}

// ---- the C-PML: reflection against angle and sampling ---------------------------------------

struct AngleReceiver {
  double angle_deg = 0; // incidence angle on the x = 0 face
  CellOffset offset{};  // from the source
  double mirror_path = 0; // cells from the mirror source (behind the layer's inner face)
  double wall_path = 0;   // cells from the mirror source behind the layer's outer wall
};

struct AngleMeasurement {
  std::vector<AngleReceiver> receivers;
  std::vector<double> reflection; // per receiver: max |bounded - reference| / incident peak
};

// The source D = 6 cells from the x = 0 face of the model (6.5 cells from the face of the layer,
// which lies half a cell outside the first model cell). Receivers: one on the normal halfway to
// the face (0 degrees); the others at the source's depth, offset along y by 2 De tan(theta), so
// the ray mirrored at the face meets the face at theta. Both runs use the same model cells around
// source and receivers; the bounded run has the absorber (default width) on every face with the
// x = 0 face 10 cells from the source and every other face so far that nothing it returns, nor
// the reference's walls, reaches a receiver in the window. The window ends when the wave that
// crossed the layer to its outer wall and back (the worst the layer can return) has passed the
// normal receiver, and every receiver's mirrored reflection has passed. The incident amplitude a
// perfect mirror would return: the reference's peak at a receiver at the mirror path's distance
// (rounded to a cell, corrected by the exact 1/r of a 3D point source).
AngleMeasurement measure_reflection(const BoundaryConfig& absorber, double points_per_wavelength) {
  const double f0 = kV / (points_per_wavelength * kH * kRickerFmaxOverF0);
  const int D = 6;
  const double De = D + 0.5, w = absorber.width;
  AngleMeasurement m;
  {
    AngleReceiver normal;
    normal.offset = {0, 0, -D / 2};
    normal.mirror_path = De + (De - D / 2.0);
    normal.wall_path = normal.mirror_path + 2 * w;
    m.receivers.push_back(normal);
  }
  for (double angle : {30.0, 45.0, 60.0}) {
    AngleReceiver r;
    const int y = int(std::floor(2 * De * std::tan(angle * M_PI / 180) + 1e-9));
    r.offset = {0, y, 0};
    r.angle_deg = std::atan(y / (2 * De)) * 180 / M_PI;
    r.mirror_path = std::hypot(2 * De, double(y));
    r.wall_path = std::hypot(2 * (De + w), double(y));
    m.receivers.push_back(r);
  }
  double last_path = m.receivers[0].wall_path;
  for (const AngleReceiver& r : m.receivers) last_path = std::max(last_path, r.mirror_path);
  const double t0 = default_ricker_delay(f0);
  const double t_end = t0 + last_path * kH / kV + 1 / f0;

  // Reference-only receivers at the mirror paths' distances, along -y.
  std::vector<CellOffset> offsets;
  for (const AngleReceiver& r : m.receivers) offsets.push_back(r.offset);
  for (const AngleReceiver& r : m.receivers) offsets.push_back({0, -int(std::lround(r.mirror_path)), 0});

  // Walls far enough (as in the sponge test), but with a wavelet reaching 1.5/f0 before its peak:
  // at 1/f0 a Ricker is still ~1e-3 of its peak, as large as what is measured here.
  const double reach = kV * (t_end - t0 + 1.5 / f0) / kH;
  auto walls = [&](const std::vector<CellOffset>& receivers, int* lo, int* hi) {
    for (const CellOffset& o : receivers)
      for (int axis = 0; axis < 3; ++axis) {
        const int off = o[2 - axis];
        hi[axis] = std::max(hi[axis], int(std::ceil((reach + off) / 2)) + 1);
        lo[axis] = std::max(lo[axis], int(std::ceil((reach - off) / 2)) + 1);
      }
  };
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  walls(offsets, lo, hi);
  double dt = 0, dt_reference = 0;
  // Both runs must take the same dt: same velocity, same spacing, dt from CFL.
  BoundaryConfig none;
  none.width = 0;
  const int nt = int(std::ceil(t_end / (0.4 * kH / kV))) + 1; // Courant ~0.40
  const std::vector<float> reference =
      homogeneous_traces(lo[0] + hi[0] + 1, lo[1] + hi[1] + 1, lo[2] + hi[2] + 1, none, lo[0],
                         lo[1], lo[2], offsets, nt, &dt_reference, f0);
  BoundaryConfig bounded_config = absorber;
  bounded_config.frequency = f0;
  const size_t n_measured = m.receivers.size();
  const std::vector<CellOffset> measured(offsets.begin(), offsets.begin() + long(n_measured));
  int blo[3] = {0, 0, 0}, bhi[3] = {0, 0, 0};
  walls(measured, blo, bhi);
  const std::vector<float> bounded =
      homogeneous_traces(D + bhi[0] + 1, blo[1] + bhi[1] + 1, blo[2] + bhi[2] + 1, bounded_config,
                         D, blo[1], blo[2], measured, nt, &dt, f0);
  EXPECT_EQ(dt, dt_reference);
  EXPECT_GE(nt * dt, t_end);
  std::printf("%.1f points per shortest wavelength (f0 %.2f Hz), width %d, %d steps; reference "
              "%d x %d x %d cells\n",
              points_per_wavelength, f0, absorber.width, nt, lo[0] + hi[0] + 1, lo[1] + hi[1] + 1,
              lo[2] + hi[2] + 1);
  for (size_t k = 0; k < n_measured; ++k) {
    double incident = 0, difference = 0;
    for (int t = 0; t < nt; ++t) {
      incident = std::max(incident, double(std::abs(reference[(n_measured + k) * nt + size_t(t)])));
      difference = std::max(difference, double(std::abs(bounded[k * nt + size_t(t)] -
                                                        reference[k * nt + size_t(t)])));
    }
    incident *= std::lround(m.receivers[k].mirror_path) / m.receivers[k].mirror_path;
    m.reflection.push_back(incident > 0 ? difference / incident : 1.0);
    std::printf("  incidence %4.1f deg: reflection %.2e of the incident amplitude\n",
                m.receivers[k].angle_deg, m.reflection.back());
  }
  return m;
}

// The bar: at most 1e-3 at normal incidence and 5e-3 up to 60 degrees, at 5 and 10 points
// per shortest wavelength, with the default absorber and width.
TEST(Boundaries, CpmlReflectsLessThanOnePerMilleAtNormalIncidence) {
  const BoundaryConfig defaults;
  ASSERT_EQ(defaults.absorber, Absorber::cpml);
  ASSERT_EQ(defaults.width, 20);
  for (double ppw : {5.0, 10.0}) {
    const AngleMeasurement m = measure_reflection(defaults, ppw);
    for (size_t k = 0; k < m.receivers.size(); ++k) {
      const double bar = m.receivers[k].angle_deg == 0 ? 1e-3 : 5e-3;
      EXPECT_LE(m.reflection[k], bar) << ppw << " points per wavelength, "
                                      << m.receivers[k].angle_deg << " degrees";
    }
  }
}

// The C-PML's strength on a face comes from that face's own velocity: one fast cell inside the
// model changes no coefficient, one on the x = nx-1 face changes the x high layer only (and
// makes it stronger there), where a profile set from the model's maximum would change them all.
TEST(Boundaries, CpmlProfileFollowsEachFacesOwnVelocity) {
  VelocityModel model = constant_model({30, 20, 25, kH, kH, kH}, kV);
  BoundaryConfig config;
  config.frequency = kF0;
  const double dt = 1e-3; // stable for 4000 m/s; one dt for all: the coefficients depend on it
  const SimulationGrid plain = make_simulation_grid(model, config, dt);
  const CpmlProfiles base = cpml_profiles(plain);
  ASSERT_FALSE(base.empty());

  VelocityModel inside = model;
  inside.at(15, 10, 12) = 4000;
  SimulationGrid sim = make_simulation_grid(inside, config, dt);
  CpmlProfiles fast = cpml_profiles(sim);
  for (auto [a, b] : {std::pair{&base.x, &fast.x}, {&base.y, &fast.y}, {&base.z, &fast.z}}) {
    EXPECT_EQ(a->a, b->a);
    EXPECT_EQ(a->b, b->b);
  }

  VelocityModel on_face = model;
  on_face.at(29, 10, 12) = 4000;
  sim = make_simulation_grid(on_face, config, dt);
  fast = cpml_profiles(sim);
  EXPECT_EQ(base.y.a, fast.y.a);
  EXPECT_EQ(base.z.a, fast.z.a);
  const int n = base.x.n, w = base.x.hi;
  for (int i = 0; i < n - w; ++i) EXPECT_EQ(base.x.a[size_t(i)], fast.x.a[size_t(i)]) << i;
  for (int i = n - w; i < n; ++i) EXPECT_LT(fast.x.b[size_t(i)], base.x.b[size_t(i)]) << i; // stronger
}

// A step split into plane ranges (as the z-slab decomposition calls step_planes) gives every cell
// the bits of a whole step, C-PML memory variables included: psi_z is read across the ranges' ends.
TEST(Boundaries, CpmlStepInPlaneRangesEqualsWholeStep) {
  const VelocityModel model = constant_model({12, 10, 14, kH, kH, kH}, kV);
  BoundaryConfig config;
  config.width = 6;
  config.frequency = kF0;
  const SimulationGrid sim = make_simulation_grid(model, config, 0.0);
  const PropagatorSetup setup = make_propagator_setup(sim);
  ASSERT_EQ(setup.cpml.z.lo, 6);
  const GridLayout& g = setup.layout;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> prev(size_t(g.size), 0.0f), cur(size_t(g.size), 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        prev[size_t(g.index(i, j, k))] = u(rng);
        cur[size_t(g.index(i, j, k))] = u(rng);
      }
  CpuWavefield whole(setup), parts(setup);
  whole.set_state(prev, cur);
  parts.set_state(prev, cur);
  for (int s = 0; s < 10; ++s) {
    whole.step();
    for (auto [k0, k1] : {std::pair{0, 2}, std::pair{2, 5}, std::pair{5, 9}, std::pair{9, g.nz}})
      parts.step_planes(k0, k1);
    parts.finish_step();
  }
  std::vector<float> wp, wc, pp, pc;
  whole.get_state(wp, wc);
  parts.get_state(pp, pc);
  EXPECT_TRUE(wc == pc && wp == pp);
}

// Without absorption the halo is a pressure-release wall: a reflection of about the direct
// wave's strength and opposite sign. Guards the measurement above against a reference that
// could not see reflections at all.
TEST(Boundaries, FreeSurfaceReflectsWithOppositeSign) {
  BoundaryConfig free_top;
  free_top.width = 10;
  free_top.free_surface = true;
  // Source and receiver 15 cells deep, 20 cells apart. The zero halo row above the first model row
  // is the pressure-release surface, so the mirror source sits 2 x 16 cells above the source and
  // the ghost travels sqrt(20^2 + 32^2) = 37.7 cells, 0.09 s after the direct wave (clear of it).
  const int nt = 200;
  double dt = 0;
  const std::vector<float> trace =
      homogeneous_traces(44, 44, 44, free_top, 12, 22, 15, {{0, 0, 20}}, nt, &dt);
  const double t0 = default_ricker_delay(kF0);
  const double ghost_cells = std::sqrt(20.0 * 20.0 + 32.0 * 32.0);
  const int direct = int(std::lround((t0 + 20 * kH / kV) / dt));
  const int ghost = int(std::lround((t0 + ghost_cells * kH / kV) / dt));
  ASSERT_LT(ghost, nt);
  const double direct_amplitude = trace[size_t(direct)];
  const double ghost_amplitude = trace[size_t(ghost)];
  ASSERT_GT(direct_amplitude, 0.0);
  // 1/(4 pi r) spreading and a reflection coefficient of -1.
  EXPECT_NEAR(ghost_amplitude / direct_amplitude, -20.0 / ghost_cells, 0.05);
}

} // namespace
} // namespace rtm
