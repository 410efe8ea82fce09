// The free-surface case of issue 37 (tests/test_free_surface.cpp, tests/test_free_surface_gpu.cpp):
// one shot modelled as a user would, and the image solution it is compared with, the mirror
// plane scanned.
#pragma once

#include <cmath>
#include <sstream>
#include <vector>

#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/relative_l2.h"

namespace rtm::test {

inline BackendOptions cpu_backend() {
  BackendOptions b;
  b.backend = "cpu";
  return b;
}

constexpr double kSurfaceV = 2000, kSurfaceF0 = 10, kSurfacePi = 3.14159265358979323846;

// One shot as a user models it: a constant medium, --free-surface, the default C-PML of
// `layer_cells` cells on the other five faces, on the given backend, the time-dispersion transforms on (so the traces are time-continuous and the
// comparison sees the surface and the stencil only), a source `source_depth` metres below the
// model's top row and receivers straight below it and 5 cells aside, 200-300 m deeper.
struct SurfaceShot {
  double h = 0;
  Position source{};
  std::vector<Position> receivers;
  std::vector<double> traces; // all receivers one after the other
  double dt = 0, t0 = 0;
  int nt = 0;
};

inline SurfaceShot model_surface_shot(double h, double source_depth, int layer_cells = 20,
                                      const BackendOptions& backend = cpu_backend()) {
  const int half_width = int(std::lround(50.0 / h)) + 1; // cells on each side of the source
  const int n_xy = 2 * half_width + 1;
  const double deepest = source_depth + 300.0;
  const int nz = int(std::lround(deepest / h)) + 4;
  VelocityModel model = constant_model({n_xy, n_xy, nz, h, h, h}, kSurfaceV);
  const double centre = half_width * h;
  SurfaceShot s;
  s.h = h;
  s.source = {source_depth, centre, centre};
  for (double below : {200.0, 250.0, 300.0})
    for (double aside : {0.0, 5 * h}) s.receivers.push_back({source_depth + below, centre, centre + aside});
  Acquisition acquisition;
  acquisition.sources = {s.source};
  acquisition.receivers = s.receivers;
  ModelingParams params;
  params.wavelet.f0 = kSurfaceF0;
  params.boundary.free_surface = true;
  params.boundary.width = layer_cells;
  params.boundary.frequency = kSurfaceF0;
  params.backend = backend;
  // The farthest image path (the deepest receiver aside) and the wavelet's tail.
  const double r_max = std::hypot(300.0 + 2 * (source_depth + h), 5 * h);
  params.record_time = default_ricker_delay(kSurfaceF0) + r_max / kSurfaceV + 1.2 / kSurfaceF0;
  std::ostringstream log;
  const ShotFile file = model_shots(model, acquisition, params, log);
  s.dt = file.dt;
  s.t0 = file.t0;
  s.nt = file.nt;
  s.traces.assign(file.shots.at(0).data.begin(), file.shots.at(0).data.end());
  return s;
}

// The image solution with the mirror plane at z = plane (metres, model coordinates):
// w(t - r1/v) / (4 pi r1) - w(t - r2/v) / (4 pi r2), r2 the distance from the source mirrored
// across the plane.
inline std::vector<double> image_solution(const SurfaceShot& s, double plane) {
  std::vector<double> out;
  const double zi = 2 * plane - s.source[0]; // the image's depth
  for (const Position& r : s.receivers) {
    const double dy = r[1] - s.source[1], dx = r[2] - s.source[2];
    const double r1 = std::sqrt((r[0] - s.source[0]) * (r[0] - s.source[0]) + dx * dx + dy * dy);
    const double r2 = std::sqrt((r[0] - zi) * (r[0] - zi) + dx * dx + dy * dy);
    for (int n = 0; n < s.nt; ++n) {
      const double t = n * s.dt;
      out.push_back(ricker(t - r1 / kSurfaceV, kSurfaceF0, s.t0) / (4 * kSurfacePi * r1) -
                    ricker(t - r2 / kSurfaceV, kSurfaceF0, s.t0) / (4 * kSurfacePi * r2));
    }
  }
  return out;
}

inline double misfit(const SurfaceShot& s, double plane) { return relative_l2(s.traces, image_solution(s, plane)); }

// The mirror plane that fits the traces best: a scan over [-2h, 0] every h/100, refined by
// golden-section search around the best sample. Returns the plane in metres.
inline double best_plane(const SurfaceShot& s) {
  double best = 0, best_misfit = 1e300;
  for (int m = -200; m <= 0; ++m) {
    const double plane = m * s.h / 100;
    const double e = misfit(s, plane);
    if (e < best_misfit) {
      best_misfit = e;
      best = plane;
    }
  }
  double a = best - s.h / 100, b = best + s.h / 100;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 40; ++it) {
    const double c = b - g * (b - a), d = a + g * (b - a);
    if (misfit(s, c) < misfit(s, d)) b = d;
    else a = c;
  }
  return (a + b) / 2;
}

} // namespace rtm::test
