// The two workloads `rtm bench` times on the GPU (docs/variants.md), built here, with the time step
// and the Ricker wavelet every driver uses (solvers/drivers/numerics.h, solvers/drivers/wavelet.h), so that the
// CUDA benchmark (kernels/cuda/bench.h) receives plain setups and only times them.
#pragma once

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

// Steps for the point workload to carry the wavefront from the centre to the nearest face.
int default_point_steps(int nx, int ny, int nz);

} // namespace rtm
