// A random heterogeneous medium for the tests that step a GPU kernel against the CPU reference:
// every cell's velocity drawn uniformly from 1500-4500 m/s, dt at 80% of the CFL limit of the
// spacings, so that neighbouring cells' v2dt2 differ (a kernel that reads a wrong cell's v2dt2,
// or swaps two axes' weights where the spacings differ, fails).
#pragma once

#include <cmath>
#include <random>
#include <utility>

#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/stencil.h"

namespace rtm::test {

// No damping, no C-PML: the tests add what they check. The draws: one velocity per interior cell,
// in v2dt2's order.
inline PropagatorSetup random_medium_setup(int nx, int ny, int nz, double hx, double hy, double hz,
                                           std::mt19937_64& rng) {
  PropagatorSetup setup;
  setup.layout = make_layout(nx, ny, nz);
  setup.weights = make_laplacian_weights(hx, hy, hz);
  const double v_max = 4500.0;
  const double dt = 0.8 * 2.0 /
                    (v_max * std::sqrt(kStencilAbsSum * (1 / (hx * hx) + 1 / (hy * hy) + 1 / (hz * hz))));
  std::uniform_real_distribution<double> velocity(1500.0, v_max);
  setup.v2dt2.resize(size_t(setup.layout.interior_cells()));
  for (float& v : setup.v2dt2) {
    const double vel = velocity(rng);
    v = float(vel * vel * dt * dt);
  }
  return setup;
}

// Damping profiles of `setup`'s grid drawn uniformly from [0.01, 0.1), x's cells first, then y's,
// then z's: non-zero everywhere, so that every cell takes the damped path.
inline void add_random_damping(PropagatorSetup& setup, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> e(0.01f, 0.1f);
  const GridLayout& g = setup.layout;
  for (auto [profile, n] : {std::pair{&setup.damping.x, g.nx}, std::pair{&setup.damping.y, g.ny},
                            std::pair{&setup.damping.z, g.nz}}) {
    profile->resize(size_t(n));
    for (float& v : *profile) v = e(rng);
  }
}

} // namespace rtm::test
