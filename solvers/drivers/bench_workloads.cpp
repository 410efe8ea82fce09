#include "solvers/drivers/bench_workloads.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

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

int default_point_steps(int nx, int ny, int nz) {
  check_grid(nx, ny, nz);
  const double half_width = 0.5 * std::min({nx, ny, nz});
  const double dt = point_dt();
  const double cells_per_step = kPointVelocity * dt / kBenchSpacing; // the Courant number
  // The front leaves the source at t0 and then moves cells_per_step cells per step.
  return int(std::ceil(half_width / cells_per_step + default_ricker_delay(point_f0()) / dt));
}

} // namespace rtm
