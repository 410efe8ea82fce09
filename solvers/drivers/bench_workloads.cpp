#include "solvers/drivers/bench_workloads.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/wavelet.h"

namespace rtm {
namespace {

constexpr double kRandomVmin = 1500.0, kRandomVmax = 4500.0; // m/s
constexpr double kPointVelocity = 2000.0;                     // m/s
constexpr double kPointCellsPerWavelength = 5.0;             // at f_max

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void check_grid(int nx, int ny, int nz) {
  if (nx < 1 || ny < 1 || nz < 1) throw std::invalid_argument("bench: grid must be positive");
}

double point_dt() {
  return choose_dt(0.0, kPointVelocity, kBenchSpacing, kBenchSpacing, kBenchSpacing);
}
double point_f0() {
  return kPointVelocity / (kPointCellsPerWavelength * kBenchSpacing * kRickerFmaxOverF0);
}

} // namespace

PropagatorSetup random_bench_setup(int nx, int ny, int nz) {
  check_grid(nx, ny, nz);
  PropagatorSetup setup;
  setup.layout = make_layout(nx, ny, nz);
  setup.weights = make_laplacian_weights(kBenchSpacing, kBenchSpacing, kBenchSpacing);
  const double dt = choose_dt(0.0, kRandomVmax, kBenchSpacing, kBenchSpacing, kBenchSpacing);
  setup.v2dt2.resize(size_t(setup.layout.interior_cells()));
  for (size_t n = 0; n < setup.v2dt2.size(); ++n) {
    const double unit = double(splitmix64(n ^ 0xA5A5A5A5ull) >> 11) * (1.0 / 9007199254740992.0);
    const double v = kRandomVmin + (kRandomVmax - kRandomVmin) * unit;
    setup.v2dt2[n] = float(v * v * dt * dt);
  }
  return setup;
}

PointBenchWorkload point_bench_workload(int nx, int ny, int nz, int steps) {
  check_grid(nx, ny, nz);
  if (steps < 1) throw std::invalid_argument("bench: point workload needs at least one step");
  PointBenchWorkload p;
  p.setup.layout = make_layout(nx, ny, nz);
  p.setup.weights = make_laplacian_weights(kBenchSpacing, kBenchSpacing, kBenchSpacing);
  p.dt = point_dt();
  p.f0 = point_f0();
  p.t0 = default_ricker_delay(p.f0);
  p.setup.v2dt2.assign(size_t(p.setup.layout.interior_cells()),
                       float(kPointVelocity * kPointVelocity * p.dt * p.dt));
  p.source = point_at_cell(nx / 2, ny / 2, nz / 2);
  p.series = ricker_wavelet(steps, p.dt, p.f0, p.t0);
  p.scale = float(1.0 / (kBenchSpacing * kBenchSpacing * kBenchSpacing));
  return p;
}

void check_bench_cpml_width(int nx, int ny, int nz, int width) {
  if (width < 1 || 2 * width > std::min({nx, ny, nz}))
    throw InputError("--cpml-width: expected 1 to " + std::to_string(std::min({nx, ny, nz}) / 2) +
                     " cells (layers on both faces of every axis of the --grid), got " +
                     std::to_string(width));
}

void add_bench_cpml(PropagatorSetup& setup, int width) {
  const GridLayout& g = setup.layout;
  check_bench_cpml_width(g.nx, g.ny, g.nz, width);
  const double dt = choose_dt(0.0, kRandomVmax, kBenchSpacing, kBenchSpacing, kBenchSpacing);
  // d(x) = d0 x^2 over the layer's depth fraction x, d0 for a reflection of 1e-4 (the drivers'
  // default); no frequency shift, so a = b - 1.
  const double d0 = 3.0 * kRandomVmax * std::log(1.0 / 1e-4) / (2.0 * width * kBenchSpacing);
  CpmlAxis* axes[3] = {&setup.cpml.x, &setup.cpml.y, &setup.cpml.z};
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int d = 0; d < 3; ++d) {
    CpmlAxis& axis = *axes[d];
    axis.n = n[d];
    axis.lo = axis.hi = width;
    axis.h = kBenchSpacing;
    axis.a.assign(size_t(n[d]), 0.0f);
    axis.b.assign(size_t(n[d]), 0.0f);
    for (int c = 0; c < width; ++c) {
      const double x = double(width - c) / width; // depth fraction of cells c and n - 1 - c
      const double b = std::exp(-d0 * x * x * dt);
      for (int i : {c, n[d] - 1 - c}) {
        axis.b[size_t(i)] = float(b);
        axis.a[size_t(i)] = float(b - 1.0);
      }
    }
  }
}

CpmlBenchSize cpml_bench_size(int nx, int ny, int nz, int width) {
  CpmlBenchSize s;
  const int64_t w2 = 2 * int64_t(width);
  s.layer_cells = int64_t(nx) * ny * nz - (nx - w2) * (ny - w2) * (nz - w2);
  s.axis_cells = w2 * ny * nz + nx * w2 * nz + int64_t(nx) * ny * w2;
  return s;
}

int default_point_steps(int nx, int ny, int nz) {
  check_grid(nx, ny, nz);
  const double half_width = 0.5 * std::min({nx, ny, nz});
  const double dt = point_dt();
  const double cells_per_step = kPointVelocity * dt / kBenchSpacing; // the Courant number
  // The front leaves the source at t0 and then moves cells_per_step cells per step.
  return int(std::ceil(half_width / cells_per_step + default_ricker_delay(point_f0()) / dt));
}

} // namespace rtm
