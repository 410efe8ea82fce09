#include "solvers/drivers/shear_taper.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm {

double shear_taper_radius(const ShearTaperOptions& options, const VelocityModel& shape) {
  if (!options.enabled) return 0;
  if (!(options.radius >= 0) || !std::isfinite(options.radius))
    throw InputError("--shear-taper-radius must be a distance of at least 0 m, got " +
                     format_number(options.radius));
  if (options.radius > 0) return options.radius;
  return kShearTaperCells * std::max({shape.dx, shape.dy, shape.dz});
}

std::string shear_taper_identity(const ShearTaperOptions& options, const VelocityModel& shape) {
  const double radius = shear_taper_radius(options, shape);
  if (radius == 0) return "shear_taper = off\n";
  char text[64];
  std::snprintf(text, sizeof text, "shear_taper = %.17g m\n", radius);
  return text;
}

ShearTaper make_shear_taper(const ShearTaperOptions& options, const VelocityModel& shape,
                            std::vector<Position> points) {
  ShearTaper taper;
  taper.radius = shear_taper_radius(options, shape);
  // Receivers shared by many shots, sources on receivers: each position once.
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  taper.points = std::move(points);
  return taper;
}

double shear_taper_weight(double distance, double radius) {
  if (!(radius > 0) || distance >= radius) return 0;
  const double inner = 0.5 * radius;
  if (distance <= inner) return 1;
  const double pi = 3.14159265358979323846;
  return 0.5 * (1.0 + std::cos(pi * (distance - inner) / (radius - inner)));
}

namespace {

// The first point (sorted by z) less than R from a plane at depth z, or end when none is.
std::vector<Position>::const_iterator first_reaching(const std::vector<Position>& p, double z, double R) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto from = std::upper_bound(p.begin(), p.end(), Position{z - R, inf, inf}); // z_p > z - R
  return from != p.end() && (*from)[0] < z + R ? from : p.end();
}

// Plane k's weights into `out` (nx x ny, zero on entry).
void plane_weights(const VelocityModel& shape, const ShearTaper& taper, int k, float* out) {
  const int nx = shape.nx, ny = shape.ny;
  const double R = taper.radius, R2 = R * R;
  const std::vector<Position>& p = taper.points;
  // The cells of [lo, hi] (metres from the origin o, spacing h, n cells) within reach: a cell more
  // beyond is at least R away and keeps w = 0, so one cell of margin costs nothing but keeps
  // rounding out of the question.
  auto cells_between = [](double lo, double hi, double o, double h, int n, int& first, int& last) {
    first = std::max(0, int(std::floor((lo - o) / h)) - 1);
    last = std::min(n - 1, int(std::ceil((hi - o) / h)) + 1);
  };
  const double z = shape.oz + k * shape.dz;
  std::vector<double> nearest(size_t(nx) * size_t(ny), std::numeric_limits<double>::infinity()); // squared
  for (auto q = first_reaching(p, z, R); q != p.end() && (*q)[0] < z + R; ++q) {
    const double rz2 = (z - (*q)[0]) * (z - (*q)[0]);
    if (rz2 >= R2) continue;
    const double ry = std::sqrt(R2 - rz2);
    int j0, j1;
    cells_between((*q)[1] - ry, (*q)[1] + ry, shape.oy, shape.dy, ny, j0, j1);
    for (int j = j0; j <= j1; ++j) {
      const double y = shape.oy + j * shape.dy;
      const double ryz2 = rz2 + (y - (*q)[1]) * (y - (*q)[1]);
      if (ryz2 >= R2) continue;
      const double rx = std::sqrt(R2 - ryz2);
      int i0, i1;
      cells_between((*q)[2] - rx, (*q)[2] + rx, shape.ox, shape.dx, nx, i0, i1);
      double* row = nearest.data() + size_t(j) * size_t(nx);
      for (int i = i0; i <= i1; ++i) {
        const double x = shape.ox + i * shape.dx;
        row[i] = std::min(row[i], ryz2 + (x - (*q)[2]) * (x - (*q)[2]));
      }
    }
  }
  for (size_t c = 0; c < nearest.size(); ++c)
    if (nearest[c] < R2) out[c] = float(shear_taper_weight(std::sqrt(nearest[c]), R));
}

} // namespace

ShearTaperPlanes::ShearTaperPlanes(const VelocityModel& shape, const ShearTaper& taper, int z_begin,
                                   int z_end)
    : z_begin_(z_begin), plane_cells_(size_t(shape.nx) * size_t(shape.ny)),
      slot_(size_t(std::max(0, z_end - z_begin)), -1) {
  if (!taper.tapers()) return;
  for (int k = z_begin; k < z_end; ++k)
    if (first_reaching(taper.points, shape.oz + k * shape.dz, taper.radius) != taper.points.end())
      slot_[size_t(k - z_begin)] = reached_++;
  weights_.assign(size_t(reached_) * plane_cells_, 0.0f);
#pragma omp parallel for schedule(dynamic)
  for (int k = z_begin; k < z_end; ++k)
    if (slot_[size_t(k - z_begin)] >= 0)
      plane_weights(shape, taper, k, weights_.data() + size_t(slot_[size_t(k - z_begin)]) * plane_cells_);
}

const float* ShearTaperPlanes::plane(int k) const {
  const int s = k < z_begin_ || k - z_begin_ >= int(slot_.size()) ? -1 : slot_[size_t(k - z_begin_)];
  return s < 0 ? nullptr : weights_.data() + size_t(s) * plane_cells_;
}

std::vector<float> shear_taper_weights(const VelocityModel& shape, const ShearTaper& taper, int z_begin,
                                       int z_end) {
  const size_t plane = size_t(shape.nx) * size_t(shape.ny);
  std::vector<float> w(size_t(std::max(0, z_end - z_begin)) * plane, 0.0f);
  const ShearTaperPlanes planes(shape, taper, z_begin, z_end);
  for (int k = z_begin; k < z_end; ++k)
    if (const float* p = planes.plane(k)) std::copy(p, p + plane, w.begin() + ptrdiff_t(size_t(k - z_begin) * plane));
  return w;
}

uint64_t shear_tapered_cells(const VelocityModel& shape, const Anisotropy& a, int a_first, int z_begin,
                             int z_end, const ShearTaper& taper) {
  if (!taper.tapers() || z_end <= z_begin) return 0;
  const ShearTaperPlanes planes(shape, taper, z_begin, z_end);
  const size_t plane = size_t(shape.nx) * size_t(shape.ny);
  uint64_t count = 0;
  for (int k = z_begin; k < z_end; ++k) {
    const float* w = planes.plane(k);
    if (!w) continue;
    const size_t offset = size_t(k - a_first) * plane;
    for (size_t c = 0; c < plane; ++c)
      if (w[c] > 0 && a.epsilon[offset + c] > a.delta[offset + c]) ++count;
  }
  return count;
}

} // namespace rtm
