#include "solvers/drivers/simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/tti_setup.h"

namespace rtm {

SimulationGrid make_simulation_grid(const VelocityModel& model, const BoundaryConfig& boundary,
                                    double requested_dt) {
  return make_simulation_grid(model, model.vmax(), boundary, requested_dt);
}

SimulationGrid make_simulation_grid(const VelocityModel& model, double vmax,
                                    const BoundaryConfig& boundary, double requested_dt) {
  if (boundary.width < 0)
    throw InputError("--boundary-width must be >= 0, got " + std::to_string(boundary.width));
  if (!(boundary.reflection > 0 && boundary.reflection < 1) ||
      !(boundary.cpml_reflection > 0 && boundary.cpml_reflection < 1))
    throw InputError("boundary reflection coefficient must be in (0, 1)");
  if (!(boundary.frequency >= 0) || !std::isfinite(boundary.frequency))
    throw InputError("absorbing layers: the wavelet frequency must be >= 0 and finite");
  SimulationGrid sim;
  sim.model = model;
  sim.physics = physics_of(model);
  sim.boundary = boundary;
  const int w = boundary.width;
  sim.pad_x_lo = sim.pad_x_hi = sim.pad_y_lo = sim.pad_y_hi = sim.pad_z_hi = w;
  sim.pad_z_lo = boundary.free_surface ? 0 : w;
  sim.layout = make_layout(model.nx + sim.pad_x_lo + sim.pad_x_hi,
                           model.ny + sim.pad_y_lo + sim.pad_y_hi,
                           model.nz + sim.pad_z_lo + sim.pad_z_hi);
  if (!physics_info(sim.physics).supports_cpml && boundary.absorber == Absorber::cpml &&
      boundary.width > 0)
    throw InputError("--absorber cpml is not available with --physics tti: the C-PML corrects the "
                     "isotropic Laplacian axis by axis and has no form for the coupled TTI system's "
                     "mixed derivatives here; use --absorber sponge (docs/physics.md, TTI)");
  // TTI: the fastest phase velocity, vp sqrt(1 + 2 epsilon), sets the limit (docs/physics.md, TTI).
  const double fastest = sim.physics == Physics::tti ? fastest_velocity(model) : vmax;
  sim.dt = choose_dt(requested_dt, fastest, model.dx, model.dy, model.dz);
  return sim;
}

SimulationGrid simulation_grid_of_shape(const VelocityModel& shape, const BoundaryConfig& boundary,
                                        double dt, Physics physics) {
  VelocityModel header; // the shape without its values: a copy of them is what this avoids
  header.nx = shape.nx, header.ny = shape.ny, header.nz = shape.nz;
  header.dx = shape.dx, header.dy = shape.dy, header.dz = shape.dz;
  header.ox = shape.ox, header.oy = shape.oy, header.oz = shape.oz;
  SimulationGrid sim;
  sim.model = std::move(header);
  sim.physics = physics;
  sim.boundary = boundary;
  const int w = std::max(boundary.width, 0);
  sim.pad_x_lo = sim.pad_x_hi = sim.pad_y_lo = sim.pad_y_hi = sim.pad_z_hi = w;
  sim.pad_z_lo = boundary.free_surface ? 0 : w;
  sim.layout = make_layout(shape.nx + 2 * w, shape.ny + 2 * w, shape.nz + sim.pad_z_lo + w);
  sim.dt = dt;
  return sim;
}

std::vector<float> compute_v2dt2_planes(const SimulationGrid& sim, const VelocityModel& planes,
                                        int z_first, int k_begin, int k_end) {
  // compute_v2dt2's arithmetic, for compute planes k_begin <= k < k_end from the model planes
  // z_first.. held in `planes` (which must hold every model plane those compute planes repeat).
  const GridLayout& g = sim.layout;
  const VelocityModel& m = sim.model;
  std::vector<float> v2dt2(size_t(k_end - k_begin) * size_t(g.ny) * size_t(g.nx));
  const double dt2 = sim.dt * sim.dt;
  for (int k = k_begin; k < k_end; ++k) {
    const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1) - z_first;
    if (mk < 0 || mk >= planes.nz)
      throw std::logic_error("compute_v2dt2_planes: model plane " + std::to_string(mk + z_first) +
                             " is not among the planes held");
  }
#pragma omp parallel for collapse(2)
  for (int k = k_begin; k < k_end; ++k)
    for (int j = 0; j < g.ny; ++j) {
      const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1) - z_first;
      const int mj = std::clamp(j - sim.pad_y_lo, 0, m.ny - 1);
      for (int i = 0; i < g.nx; ++i) {
        const int mi = std::clamp(i - sim.pad_x_lo, 0, m.nx - 1);
        const double v = planes.at(mi, mj, mk);
        v2dt2[(size_t(k - k_begin) * g.ny + j) * g.nx + i] = float(v * v * dt2);
      }
    }
  return v2dt2;
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

// The fastest velocity on one face of the model: the cells a face's layer repeats. axis 0, 1, 2 =
// x, y, z; high: the face at the high end.
double face_vmax(const VelocityModel& m, int axis, bool high) {
  const int n[3] = {m.nx, m.ny, m.nz};
  const int fixed = high ? n[axis] - 1 : 0;
  const int u = (axis + 1) % 3, w = (axis + 2) % 3; // the two axes along the face
  double vmax = 0;
  for (int b = 0; b < n[w]; ++b)
    for (int a = 0; a < n[u]; ++a) {
      int ijk[3];
      ijk[axis] = fixed;
      ijk[u] = a;
      ijk[w] = b;
      vmax = std::max(vmax, double(m.at(ijk[0], ijk[1], ijk[2])));
    }
  return vmax;
}

// One axis of the C-PML (docs/physics.md, "Absorbing layers"). In a layer of `width` cells at
// depth x = (cells into the layer) / width, 1/width <= x <= 1 (the outermost cell, next to the
// zero halo, is x = 1):
//   d(x)     = d0 x^2,  d0 = 3 v ln(1/R) / (2 L)     (L = width h; the continuous layer returns R)
//   alpha(x) = pi f (1 - x)                          (the frequency shift: no growth of psi at
//                                                     low frequencies, grazing waves stay stable)
//   b = exp(-(d + alpha) dt),  a = d / (d + alpha) (b - 1)
// v is the fastest velocity on the face the layer extends: the one the layer must absorb soonest,
// independent of anything faster elsewhere in the model.
CpmlAxis cpml_axis(int n, int lo, int hi, double h, double v_lo, double v_hi, double dt, double R,
                   double frequency) {
  CpmlAxis axis;
  axis.n = n;
  axis.lo = lo;
  axis.hi = hi;
  axis.h = h;
  if (lo + hi == 0) return axis;
  axis.a.assign(size_t(n), 0.0f);
  axis.b.assign(size_t(n), 0.0f);
  const double pi = 3.14159265358979323846;
  auto set = [&](int i, double depth_cells, int width, double v) {
    const double L = width * h;
    const double d0 = 3.0 * v * std::log(1.0 / R) / (2.0 * L);
    const double x = depth_cells / width;
    const double d = d0 * x * x;
    const double alpha = pi * frequency * (1.0 - x);
    const double b = std::exp(-(d + alpha) * dt);
    axis.b[size_t(i)] = float(b);
    axis.a[size_t(i)] = d + alpha > 0 ? float(d / (d + alpha) * (b - 1.0)) : 0.0f;
  };
  for (int i = 0; i < lo; ++i) set(i, lo - i, lo, v_lo);
  for (int i = n - hi; i < n; ++i) set(i, i - (n - hi - 1), hi, v_hi);
  return axis;
}

} // namespace

ModelExtremes model_extremes(const VelocityModel& planes, int z_first, int nz_whole) {
  ModelExtremes e;
  e.vmin = planes.vmin();
  e.vmax = planes.vmax();
  for (int axis = 0; axis < 2; ++axis)
    for (int high = 0; high < 2; ++high) e.face_vmax[axis][high] = face_vmax(planes, axis, high != 0);
  // The z faces: the whole model's first and last planes, where this part holds them.
  if (z_first == 0) e.face_vmax[2][0] = face_vmax(planes, 2, false);
  if (z_first + planes.nz == nz_whole) e.face_vmax[2][1] = face_vmax(planes, 2, true);
  return e;
}

ModelExtremes model_extremes(const VelocityModel& m) { return model_extremes(m, 0, m.nz); }

CpmlProfiles cpml_profiles(const SimulationGrid& sim) {
  if (sim.boundary.width == 0 || sim.boundary.absorber != Absorber::cpml)
    return cpml_profiles(sim, ModelExtremes{}); // no layer: the values are not read
  return cpml_profiles(sim, model_extremes(sim.model));
}

CpmlProfiles cpml_profiles(const SimulationGrid& sim, const ModelExtremes& e) {
  CpmlProfiles c;
  const GridLayout& g = sim.layout;
  c.x.n = g.nx;
  c.y.n = g.ny;
  c.z.n = g.nz;
  c.x.h = sim.hx();
  c.y.h = sim.hy();
  c.z.h = sim.hz();
  if (sim.boundary.width == 0 || sim.boundary.absorber != Absorber::cpml) return c;
  const double R = sim.boundary.cpml_reflection, f = sim.boundary.frequency;
  c.x = cpml_axis(g.nx, sim.pad_x_lo, sim.pad_x_hi, sim.hx(), e.face_vmax[0][0], e.face_vmax[0][1],
                  sim.dt, R, f);
  c.y = cpml_axis(g.ny, sim.pad_y_lo, sim.pad_y_hi, sim.hy(), e.face_vmax[1][0], e.face_vmax[1][1],
                  sim.dt, R, f);
  c.z = cpml_axis(g.nz, sim.pad_z_lo, sim.pad_z_hi, sim.hz(), e.face_vmax[2][0], e.face_vmax[2][1],
                  sim.dt, R, f);
  return c;
}

const char* absorber_name(Absorber a) { return a == Absorber::cpml ? "cpml" : "sponge"; }

Absorber parse_absorber(const std::string& name) {
  if (name == "cpml") return Absorber::cpml;
  if (name == "sponge") return Absorber::sponge;
  throw InputError("--absorber: expected cpml or sponge, got '" + name + "'");
}

DampingProfiles damping_profiles(const SimulationGrid& sim) {
  if (sim.boundary.width == 0 || sim.boundary.absorber != Absorber::sponge) return {};
  return damping_profiles(sim, sim.model.vmax());
}

DampingProfiles damping_profiles(const SimulationGrid& sim, double vmax) {
  DampingProfiles d;
  if (sim.boundary.width == 0 || sim.boundary.absorber != Absorber::sponge) return d;
  // TTI: vp sqrt(1 + 2 eps) of the whole model where sim.model holds it (a slab run's `vmax` is
  // already the group's fastest phase velocity, its sim.model the shape alone).
  if (!sim.model.anisotropy.empty()) vmax = fastest_velocity(sim.model);
  const double R = sim.boundary.reflection;
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
  s.cpml = cpml_profiles(sim);
  s.tti = compute_tti_coefficients(sim); // empty unless sim.physics is TTI
  s.free_surface = sim.boundary.free_surface;
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

std::vector<PointStencil> locate_points(const SimulationGrid& sim,
                                        const std::vector<Position>& positions,
                                        const std::string& what, PointInterpolation kind) {
  std::vector<PointStencil> points;
  for (size_t r = 0; r < positions.size(); ++r)
    points.push_back(locate_point(sim, positions[r], what + (" " + std::to_string(r)), kind));
  return points;
}

} // namespace rtm
