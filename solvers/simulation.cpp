#include "solvers/simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/errors.h"
#include "io/format.h"
#include "solvers/numerics.h"

namespace rtm {

SimulationGrid make_simulation_grid(const VelocityModel& model, const BoundaryConfig& boundary,
                                    double requested_dt) {
  if (boundary.width < 0)
    throw InputError("--boundary-width must be >= 0, got " + std::to_string(boundary.width));
  if (!(boundary.reflection > 0 && boundary.reflection < 1))
    throw InputError("boundary reflection coefficient must be in (0, 1)");
  SimulationGrid sim;
  sim.model = model;
  sim.boundary = boundary;
  const int w = boundary.width;
  sim.pad_x_lo = sim.pad_x_hi = sim.pad_y_lo = sim.pad_y_hi = sim.pad_z_hi = w;
  sim.pad_z_lo = boundary.free_surface ? 0 : w;
  sim.layout = make_layout(model.nx + sim.pad_x_lo + sim.pad_x_hi,
                           model.ny + sim.pad_y_lo + sim.pad_y_hi,
                           model.nz + sim.pad_z_lo + sim.pad_z_hi);
  sim.dt = choose_dt(requested_dt, model.vmax(), model.dx, model.dy, model.dz);
  return sim;
}

std::vector<float> compute_v2dt2(const SimulationGrid& sim) {
  const GridLayout& g = sim.layout;
  const VelocityModel& m = sim.model;
  std::vector<float> v2dt2(size_t(g.interior_cells()));
  const double dt2 = sim.dt * sim.dt;
#pragma omp parallel for collapse(2)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j) {
      const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1);
      const int mj = std::clamp(j - sim.pad_y_lo, 0, m.ny - 1);
      for (int i = 0; i < g.nx; ++i) {
        const int mi = std::clamp(i - sim.pad_x_lo, 0, m.nx - 1);
        const double v = m.at(mi, mj, mk);
        v2dt2[(size_t(k) * g.ny + j) * g.nx + i] = float(v * v * dt2);
      }
    }
  return v2dt2;
}

namespace {

// e(i) = eta(i) dt / 2 with eta = eta0 (d/L)^2 inside a layer (d: depth into the layer, L its
// thickness). The damped equation p_tt + eta p_t = v^2 lap p attenuates a wave's amplitude by
// exp(-int eta / (2 v) dx) on its way, so the round trip through the layer and back leaves
// exp(-eta0 L / (3 v)) = R with eta0 = 3 v ln(1/R) / L (half the damping a PML of the same R
// needs: PML attenuates by exp(-int sigma / v dx)). v = v_max: the fastest waves are damped least.
std::vector<float> axis_profile(int n, int lo, int hi, double h, double vmax, double dt, double R) {
  std::vector<float> e(size_t(n), 0.0f);
  auto eta = [&](double depth_cells, int width) {
    const double L = width * h;
    const double eta0 = 3.0 * vmax * std::log(1.0 / R) / L;
    const double x = depth_cells / width;
    return eta0 * x * x;
  };
  for (int i = 0; i < lo; ++i) e[size_t(i)] = float(0.5 * dt * eta(lo - i, lo));
  for (int i = n - hi; i < n; ++i) e[size_t(i)] = float(0.5 * dt * eta(i - (n - hi - 1), hi));
  return e;
}

} // namespace

DampingProfiles damping_profiles(const SimulationGrid& sim) {
  DampingProfiles d;
  if (sim.boundary.width == 0) return d;
  const double vmax = sim.model.vmax(), R = sim.boundary.reflection;
  const GridLayout& g = sim.layout;
  d.x = axis_profile(g.nx, sim.pad_x_lo, sim.pad_x_hi, sim.hx(), vmax, sim.dt, R);
  d.y = axis_profile(g.ny, sim.pad_y_lo, sim.pad_y_hi, sim.hy(), vmax, sim.dt, R);
  d.z = axis_profile(g.nz, sim.pad_z_lo, sim.pad_z_hi, sim.hz(), vmax, sim.dt, R);
  return d;
}

PropagatorSetup make_propagator_setup(const SimulationGrid& sim) {
  PropagatorSetup s;
  s.layout = sim.layout;
  s.weights = make_laplacian_weights(sim.hx(), sim.hy(), sim.hz());
  s.v2dt2 = compute_v2dt2(sim);
  s.damping = damping_profiles(sim);
  return s;
}

Box model_box(const SimulationGrid& sim) {
  Box b;
  b.x0 = sim.pad_x_lo;
  b.x1 = sim.pad_x_lo + sim.model.nx;
  b.y0 = sim.pad_y_lo;
  b.y1 = sim.pad_y_lo + sim.model.ny;
  b.z0 = sim.pad_z_lo;
  b.z1 = sim.pad_z_lo + sim.model.nz;
  return b;
}

PointStencil locate_point(const SimulationGrid& sim, const Position& zyx, const std::string& what,
                          PointInterpolation kind) {
  const VelocityModel& m = sim.model;
  // Fractional model-cell coordinates.
  const double fz = (zyx[0] - m.oz) / m.dz, fy = (zyx[1] - m.oy) / m.dy, fx = (zyx[2] - m.ox) / m.dx;
  // A point a rounding error outside (a position computed as o + i*d in another order, or stored
  // in float32) is on the edge: 1e-6 cells is far below any physical meaning.
  const double eps = 1e-6;
  const bool inside_z = fz >= -eps && fz <= m.nz - 1 + eps;
  const bool inside_y = fy >= -eps && fy <= m.ny - 1 + eps;
  const bool inside_x = fx >= -eps && fx <= m.nx - 1 + eps;
  if (!(inside_z && inside_y && inside_x)) { // also NaN
    // Name the axis at fault, its coordinate printed with the digits that show it outside.
    std::string axes;
    auto describe = [&](bool inside, const char* axis, double value, double lo, double hi) {
      if (inside) return;
      const double bound = std::isfinite(value) && value < lo ? lo : hi;
      axes += std::string(axes.empty() ? "" : ", ") + axis + " = " + format_distinct(value, bound) +
              " m lies outside " + axis + " [" + format_distinct(lo, value) + ", " +
              format_distinct(hi, value) + "] m";
    };
    describe(inside_z, "z", zyx[0], m.oz, m.oz + (m.nz - 1) * m.dz);
    describe(inside_y, "y", zyx[1], m.oy, m.oy + (m.ny - 1) * m.dy);
    describe(inside_x, "x", zyx[2], m.ox, m.ox + (m.nx - 1) * m.dx);
    throw InputError(what + " at (z, y, x) = (" + format_number(zyx[0]) + ", " +
                     format_number(zyx[1]) + ", " + format_number(zyx[2]) +
                     ") m lies outside the model: " + axes);
  }
  // Compute-grid coordinates; the walls of axis_weights are the zero halo around the compute grid.
  const GridLayout& g = sim.layout;
  const AxisWeights x = axis_weights(kind, std::clamp(fx, 0.0, double(m.nx - 1)) + sim.pad_x_lo, g.nx);
  const AxisWeights y = axis_weights(kind, std::clamp(fy, 0.0, double(m.ny - 1)) + sim.pad_y_lo, g.ny);
  const AxisWeights z = axis_weights(kind, std::clamp(fz, 0.0, double(m.nz - 1)) + sim.pad_z_lo, g.nz);
  PointStencil p;
  p.i0 = x.first;
  p.j0 = y.first;
  p.k0 = z.first;
  p.nx = x.count;
  p.ny = y.count;
  p.nz = z.count;
  for (int a = 0; a < x.count; ++a) p.wx[a] = float(x.w[a]);
  for (int b = 0; b < y.count; ++b) p.wy[b] = float(y.w[b]);
  for (int c = 0; c < z.count; ++c) p.wz[c] = float(z.w[c]);
  return p;
}

} // namespace rtm
