// The two workloads `rtm bench` times on the GPU (docs/variants.md), built here, with the time step
// and the Ricker wavelet every driver uses (solvers/drivers/numerics.h, solvers/drivers/wavelet.h), so that the
// CUDA benchmark (kernels/cuda/bench.h) receives plain setups and only times them.
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/contracts/propagator.h"

namespace rtm {

// Grid spacing of both workloads (m, all axes).
constexpr double kBenchSpacing = 10.0;

// Random: velocities uniform in [1500, 4500] m/s (a fixed hash of the cell index, the same in
// every run), dt from the CFL limit at 4500 m/s (choose_dt). Steady throughput.
PropagatorSetup random_bench_setup(int nx, int ny, int nz);

// Point: a Ricker point source in the centre of a homogeneous 2000 m/s medium, from rest; the
// peak frequency gives 5 cells per shortest wavelength (f_max = kRickerFmaxOverF0 f0), the delay
// is default_ricker_delay(f0), dt from the CFL limit.
struct PointBenchWorkload {
  PropagatorSetup setup;
  PointStencil source;       // the centre cell
  std::vector<float> series; // the wavelet, one value per step
  float scale = 0;           // 1 / cell volume: f = w(t) / (hx hy hz) (docs/physics.md)
  double dt = 0, f0 = 0, t0 = 0;
};
PointBenchWorkload point_bench_workload(int nx, int ny, int nz, int steps);

// `rtm bench --cpml-width W`: C-PML layers of W cells on every face of the random workload's grid
// (the grid includes them), with the profile of the drivers' layers (solvers/drivers/simulation.h)
// for its fastest velocity and no frequency shift; InputError when 2 W cells do not fit an axis.
void add_bench_cpml(PropagatorSetup& setup, int width);
void check_bench_cpml_width(int nx, int ny, int nz, int width); // add_bench_cpml's InputError
// What the C-PML's update must move per step at least: every layer cell's p[n], v2dt2 and p[n+1]
// (read and written), and per axis, each of its layer cells' psi[n-1], psi[n] and zeta (read and
// written), each once.
struct CpmlBenchSize {
  int64_t layer_cells = 0; // cells in any layer
  int64_t axis_cells = 0;  // sum over the axes of the cells in that axis' layers
  double ideal_bytes(int element_bytes) const {
    return double(layer_cells) * 4 * element_bytes + double(axis_cells) * 4 * sizeof(float);
  }
};
CpmlBenchSize cpml_bench_size(int nx, int ny, int nz, int width);

// Steps for the point workload to carry the wavefront from the centre to the nearest face.
int default_point_steps(int nx, int ny, int nz);

} // namespace rtm
