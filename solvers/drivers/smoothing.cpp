#include "solvers/drivers/smoothing.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

// Normalised Gaussian weights w[-r..r] (stored from index 0) for spacing h; empty when the
// window is narrower than one cell (nothing to smooth on this axis).
std::vector<double> gaussian_weights(double sigma, double h) {
  const double sigma_cells = sigma / h;
  const int radius = int(std::ceil(3 * sigma_cells));
  if (radius < 1) return {};
  std::vector<double> w(size_t(2 * radius + 1));
  double sum = 0;
  for (int r = -radius; r <= radius; ++r) {
    const double x = r / sigma_cells;
    w[size_t(r + radius)] = std::exp(-0.5 * x * x);
    sum += w[size_t(r + radius)];
  }
  for (double& v : w) v /= sum;
  return w;
}

// Convolves every line of `a` ([nz][ny][nx]) along one axis (stride between neighbours, n cells
// on that axis) with the weights, repeating the edge values.
void smooth_axis(std::vector<double>& a, int nx, int ny, int nz, int axis,
                 const std::vector<double>& w) {
  if (w.empty()) return;
  const int n = axis == 0 ? nx : axis == 1 ? ny : nz;
  const int64_t stride = axis == 0 ? 1 : axis == 1 ? nx : int64_t(nx) * ny;
  const int radius = int(w.size() / 2);
  // Lines are indexed by the two other coordinates.
  const int lines_a = axis == 0 ? ny : nx, lines_b = axis == 2 ? ny : nz;
#pragma omp parallel for collapse(2)
  for (int b = 0; b < lines_b; ++b)
    for (int l = 0; l < lines_a; ++l) {
      int64_t first;
      if (axis == 0) first = (int64_t(b) * ny + l) * nx;
      else if (axis == 1) first = int64_t(b) * ny * nx + l;
      else first = int64_t(b) * nx + l;
      std::vector<double> line(static_cast<size_t>(n)), out(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) line[size_t(i)] = a[size_t(first + i * stride)];
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int r = -radius; r <= radius; ++r)
          s += w[size_t(r + radius)] * line[size_t(std::clamp(i + r, 0, n - 1))];
        out[size_t(i)] = s;
      }
      for (int i = 0; i < n; ++i) a[size_t(first + i * stride)] = out[size_t(i)];
    }
}

} // namespace

int smoothing_reach_cells(double length, double h) {
  if (!(length > 0)) return 0;
  const double sigma = length / (2 * std::sqrt(2 * std::log(2.0)));
  return int(gaussian_weights(sigma, h).size() / 2);
}

VelocityModel smooth_model(const VelocityModel& model, double length) {
  if (!(length >= 0) || !std::isfinite(length))
    throw InputError("--smooth: the smoothing length must be >= 0 metres, got " +
                     std::to_string(length));
  if (length == 0) return model;
  const double sigma = length / (2 * std::sqrt(2 * std::log(2.0)));
  std::vector<double> slowness(model.vp.size());
  for (size_t c = 0; c < slowness.size(); ++c) slowness[c] = 1.0 / model.vp[c];
  smooth_axis(slowness, model.nx, model.ny, model.nz, 0, gaussian_weights(sigma, model.dx));
  smooth_axis(slowness, model.nx, model.ny, model.nz, 1, gaussian_weights(sigma, model.dy));
  smooth_axis(slowness, model.nx, model.ny, model.nz, 2, gaussian_weights(sigma, model.dz));
  VelocityModel out = model;
  for (size_t c = 0; c < slowness.size(); ++c) out.vp[c] = float(1.0 / slowness[c]);
  return out;
}

} // namespace rtm
