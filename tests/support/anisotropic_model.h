// Anisotropy for the TTI tests' models: cell by cell (tests/test_tti_gpu.cpp, test_tti_app_gpu.cpp,
// test_tti_slabs_mpi.cpp: each varies epsilon, delta and the tilt across the grid in its own way),
// or the same in every cell (tests/test_tti.cpp, test_tti_shear.cpp), and TTI's absorber.
#pragma once

#include <cstddef>

#include "solvers/contracts/velocity_model.h"
#include "solvers/drivers/simulation.h"

namespace rtm::test {

// One cell's Thomsen parameters and axis (degrees), stored as floats.
struct CellAnisotropy {
  double epsilon = 0, delta = 0, theta = 0, phi = 0;
};

// Gives every cell of `m` the anisotropy cell(i, j, k, c) returns, c being the cell's index in the
// model's arrays (x fastest).
template <class Cell>
void fill_anisotropy(VelocityModel& m, Cell&& cell) {
  const size_t n = size_t(m.cells());
  Anisotropy& a = m.anisotropy;
  a.epsilon.resize(n);
  a.delta.resize(n);
  a.theta.resize(n);
  a.phi.resize(n);
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        const size_t c = (size_t(k) * m.ny + j) * m.nx + i;
        const CellAnisotropy v = cell(i, j, k, c);
        a.epsilon[c] = float(v.epsilon);
        a.delta[c] = float(v.delta);
        a.theta[c] = float(v.theta);
        a.phi[c] = float(v.phi);
      }
}

// Every cell of `m` the same Thomsen parameters and axis (degrees).
inline void set_anisotropy(VelocityModel& m, double eps, double delta, double theta, double phi) {
  const size_t n = size_t(m.cells());
  m.anisotropy.epsilon.assign(n, float(eps));
  m.anisotropy.delta.assign(n, float(delta));
  m.anisotropy.theta.assign(n, float(theta));
  m.anisotropy.phi.assign(n, float(phi));
}

// A sponge of `width` cells, TTI's absorber.
inline BoundaryConfig sponge(int width) {
  BoundaryConfig b;
  b.width = width;
  b.absorber = Absorber::sponge;
  return b;
}

} // namespace rtm::test
