// Absorbing boundaries: the spurious reflection they return, measured against a domain large enough
// that nothing comes back within the window (docs/rtm.md, section 1), and the free
// surface's pressure-release reflection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "solvers/cpu_propagator.h"
#include "solvers/model_builder.h"
#include "solvers/modeling.h"
#include "solvers/simulation.h"
#include "solvers/wavelet.h"

namespace rtm {
namespace {

constexpr double kH = 10, kV = 2000, kF0 = 15; // 5.3 points per shortest wavelength (f_max = 2.5 f0)

using CellOffset = std::array<int, 3>; // (dz, dy, dx) cells from the source

// Traces [receiver][t] of a homogeneous box of nx x ny x nz model cells, source at model cell
// (sx, sy, sz), receivers at the given offsets from it.
std::vector<float> homogeneous_traces(int nx, int ny, int nz, const BoundaryConfig& boundary, int sx,
                                      int sy, int sz, const std::vector<CellOffset>& offsets, int nt,
                                      double* dt) {
  const VelocityModel model = constant_model({nx, ny, nz, kH, kH, kH}, kV);
  const SimulationGrid sim = make_simulation_grid(model, boundary, 0.0);
  *dt = sim.dt;
  CpuPropagator prop(make_propagator_setup(sim));
  const int source_set = prop.add_point_set({locate_point(sim, {sz * kH, sy * kH, sx * kH}, "source")}, nt);
  prop.upload_series(source_set, ricker_wavelet(nt, sim.dt, kF0, default_ricker_delay(kF0)));
  std::vector<PointStencil> receivers;
  for (const CellOffset& o : offsets)
    receivers.push_back(
        locate_point(sim, {(sz + o[0]) * kH, (sy + o[1]) * kH, (sx + o[2]) * kH}, "receiver"));
  const int receiver_set = prop.add_point_set(receivers, nt);
  return model_one_shot(prop, sim.injection_scale(), source_set, receiver_set, int(offsets.size()), nt);
}

// A 40^3 model with the default absorbing layers (40 cells), the source 25 cells from the x = 0
// face. Receivers: 5 and 15 cells from that face on the normal through the source, two off the
// normal (oblique incidence on the x face, and on the y face), one towards an edge.
// The window (0.7 s) covers the round trip source -> outer wall of the layer -> nearest receiver
// (65 + 45 cells = 1.1 km, 0.55 s) plus the wavelet's delay and half-length, so whatever the layer
// returns, including what bounces off the zero halo behind it, is measured.
// Reference: the same source and receivers, no layers, and each wall of the model far enough that
// its reflection reaches no receiver within the window.
TEST(Boundaries, AbsorbingLayersReflectAtMostOnePercent) {
  const std::vector<CellOffset> offsets = {
      {0, 0, -20}, {0, 0, -10}, {0, 15, -20}, {0, 15, 0}, {15, 15, -20}};
  const int nt = 351; // 0.7 s at dt ~ 2 ms
  double dt = 0, dt_reference = 0;
  const BoundaryConfig absorbing; // the defaults users get
  ASSERT_EQ(absorbing.width, 40);
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
