#include "solvers/drivers/model_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

VelocityModel empty_model(const ModelShape& shape) {
  check_model_shape(shape);
  VelocityModel m;
  m.nx = shape.nx;
  m.ny = shape.ny;
  m.nz = shape.nz;
  m.dx = shape.dx;
  m.dy = shape.dy;
  m.dz = shape.dz;
  m.vp.assign(size_t(m.cells()), 0.0f);
  return m;
}

std::string metres(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

void check_velocity(double v, const char* what) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw InputError(std::string(what) + ": velocity must be positive and finite, got " +
                     std::to_string(v));
}

} // namespace

void check_model_shape(const ModelShape& s) {
  if (s.nx < 1 || s.ny < 1 || s.nz < 1)
    throw InputError("model shape (--shape): every dimension must be at least 1, got nx=" +
                     std::to_string(s.nx) + " ny=" + std::to_string(s.ny) +
                     " nz=" + std::to_string(s.nz));
  if (int64_t(s.nx) * s.ny * s.nz > (int64_t(1) << 34))
    throw InputError("model shape (--shape): " + std::to_string(int64_t(s.nx) * s.ny * s.nz) +
                     " cells is beyond what this program supports (2^34)");
  if (!(s.dx > 0) || !(s.dy > 0) || !(s.dz > 0) || !std::isfinite(s.dx) || !std::isfinite(s.dy) ||
      !std::isfinite(s.dz))
    throw InputError("model spacing: dx, dy, dz must be positive, got " + std::to_string(s.dx) +
                     ", " + std::to_string(s.dy) + ", " + std::to_string(s.dz));
}

VelocityModel constant_model(const ModelShape& shape, double v) {
  check_velocity(v, "constant model");
  VelocityModel m = empty_model(shape);
  std::fill(m.vp.begin(), m.vp.end(), float(v));
  return m;
}

VelocityModel layered_model(const ModelShape& shape, const std::vector<double>& depths,
                            const std::vector<double>& velocities) {
  if (velocities.size() != depths.size() + 1)
    throw InputError("layered model: need one more velocity than interface depths (got " +
                     std::to_string(velocities.size()) + " velocities for " +
                     std::to_string(depths.size()) + " interfaces)");
  for (double v : velocities) check_velocity(v, "layered model");
  if (!std::is_sorted(depths.begin(), depths.end()))
    throw InputError("layered model: interface depths must increase");
  VelocityModel m = empty_model(shape);
  std::vector<int> layer_cells(velocities.size(), 0);
  for (int k = 0; k < m.nz; ++k) {
    const double z = k * m.dz;
    const size_t layer = size_t(std::upper_bound(depths.begin(), depths.end(), z) - depths.begin());
    ++layer_cells[layer];
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = float(velocities[layer]);
  }
  // A layer no cell falls in (an interface above the top or below the last cell, two interfaces
  // between the same cells) would be dropped silently.
  for (size_t l = 0; l < layer_cells.size(); ++l)
    if (layer_cells[l] == 0)
      throw InputError("layered model: layer " + std::to_string(l + 1) + " (" +
                       std::to_string(int(velocities[l])) + " m/s) holds no cell: its interfaces "
                       "lie between the same cells or outside the cells' depths 0 to " +
                       metres((m.nz - 1) * m.dz) + " m (--interfaces, --shape)");
  return m;
}

VelocityModel gradient_model(const ModelShape& shape, double v_top, double gradient, double v_max) {
  check_velocity(v_top, "gradient model v_top");
  check_velocity(v_max, "gradient model v_max");
  VelocityModel m = empty_model(shape);
  for (int k = 0; k < m.nz; ++k) {
    const float v = float(std::clamp(v_top + gradient * k * m.dz, v_top, std::max(v_top, v_max)));
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = v;
  }
  return m;
}

VelocityModel salt_model(const ModelShape& shape, double v_top, double v_bottom, double v_salt) {
  check_velocity(v_top, "salt model v_top");
  check_velocity(v_bottom, "salt model v_bottom");
  check_velocity(v_salt, "salt model v_salt");
  VelocityModel m = empty_model(shape);
  long long salt_cells = 0;
  for (int k = 0; k < m.nz; ++k) {
    const double zn = double(k) / std::max(1, m.nz - 1); // 0 at the surface, 1 at the base
    for (int j = 0; j < m.ny; ++j) {
      const double yn = double(j) / std::max(1, m.ny - 1);
      for (int i = 0; i < m.nx; ++i) {
        const double xn = double(i) / std::max(1, m.nx - 1);
        float v = float(v_top + (v_bottom - v_top) * zn);
        // Salt: an ellipsoid centred at 60% depth whose top undulates, like a diapir.
        const double ex = (xn - 0.5) / 0.28, ey = (yn - 0.5) / 0.28;
        const double top_bump = 0.05 * std::sin(7.0 * xn) * std::cos(5.0 * yn);
        const double ez = (zn - 0.62 - top_bump) / 0.22;
        if (ex * ex + ey * ey + ez * ez <= 1.0) v = float(v_salt), ++salt_cells;
        m.at(i, j, k) = v;
      }
    }
  }
  if (salt_cells == 0)
    throw InputError("salt model: a " + std::to_string(m.nx) + "x" + std::to_string(m.ny) + "x" +
                     std::to_string(m.nz) + " model is too small to hold a cell of the salt body "
                     "(--shape)");
  return m;
}

VelocityModel scatterer_model(const ModelShape& shape, double v_background, double v_scatterer,
                              double x, double y, double z, double radius) {
  check_velocity(v_scatterer, "scatterer model");
  if (float(v_scatterer) == float(v_background))
    throw InputError("scatterer model: the scatterer's velocity equals the background's (" +
                     std::to_string(int(v_background)) + " m/s): there would be nothing to see "
                     "(--scatterer-velocity, --velocity)");
  VelocityModel m = constant_model(shape, v_background);
  const double cx = x >= 0 ? x : 0.5 * (m.nx - 1) * m.dx;
  const double cy = y >= 0 ? y : 0.5 * (m.ny - 1) * m.dy;
  const double cz = z >= 0 ? z : 0.5 * (m.nz - 1) * m.dz;
  const double r = std::max(radius, 0.5 * std::min({m.dx, m.dy, m.dz}));
  long long drawn = 0;
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        const double ddx = i * m.dx - cx, ddy = j * m.dy - cy, ddz = k * m.dz - cz;
        if (ddx * ddx + ddy * ddy + ddz * ddz <= r * r) m.at(i, j, k) = float(v_scatterer), ++drawn;
      }
  // A centre between cells (the default with an even dimension) can be farther than r from every
  // cell: the nearest cell is the scatterer then, so that the model always holds one.
  auto nearest = [](double c, double d, int n) { return std::clamp(int(std::lround(c / d)), 0, n - 1); };
  if (drawn == 0)
    m.at(nearest(cx, m.dx, m.nx), nearest(cy, m.dy, m.ny), nearest(cz, m.dz, m.nz)) = float(v_scatterer);
  return m;
}

CellRegion cells_with_velocity(const VelocityModel& m, double v) {
  CellRegion r;
  const float target = float(v);
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        if (m.at(i, j, k) != target) continue;
        if (r.cells == 0) {
          r.i0 = r.i1 = i;
          r.j0 = r.j1 = j;
          r.k0 = r.k1 = k;
        }
        ++r.cells;
        r.i0 = std::min(r.i0, i), r.i1 = std::max(r.i1, i);
        r.j0 = std::min(r.j0, j), r.j1 = std::max(r.j1, j);
        r.k0 = std::min(r.k0, k), r.k1 = std::max(r.k1, k);
      }
  return r;
}

} // namespace rtm
