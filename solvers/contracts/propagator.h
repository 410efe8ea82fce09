// The plain types the wavefield contracts share (solvers/contracts/wavefield.h, solvers/contracts/shot_fields.h):
// the grid setup, points, boxes and the boundary ring. Plain C++ with no CUDA or MPI types.
//
// The step every backend runs (docs/physics.md), with an optional absorbing-layer damping
// e = eta * dt / 2 >= 0 (the "sponge"; the C-PML of solvers/contracts/cpml.h is instead a correction added
// after the undamped step):
//   p[n+1] = ( 2 p[n] - (1 - e) p[n-1] + v2dt2 * lap p[n] ) / (1 + e)
// With e = 0 (everywhere outside the absorbing layers) this is exactly the undamped step
//   p[n+1] = 2 p[n] - p[n-1] + v2dt2 * lap p[n].
// eta is separable, eta(i,j,k) = eta_x(i) + eta_y(j) + eta_z(k), so only three short
// profiles are stored, never a full damping array (it would add 4 bytes per cell per step).
// Halo cells are never written by a step: they stay zero (a pressure-release wall outside the
// grid), except the top halo of a setup with free_surface, which is rewritten before each step
// as the field's antisymmetric image (solvers/contracts/free_surface.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solvers/contracts/cpml.h"
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"
#include "solvers/contracts/tti.h"

namespace rtm {

// Per-axis damping profiles, e = eta * dt / 2 (dimensionless); sizes nx, ny, nz, or all empty
// for no absorbing layers.
struct DampingProfiles {
  std::vector<float> x, y, z;
  bool empty() const { return x.empty() && y.empty() && z.empty(); }
};

// A point (source or receiver) spread over a box of cells with separable weights: cell
// (i0 + a, j0 + b, k0 + c) of the compute grid (interior coordinates) gets
//   weight = wz[c] * wy[b] * wx[a],   0 <= a < nx, 0 <= b < ny, 0 <= c < nz.
// The same weights inject and sample, which keeps modeling and migration adjoint.
//
// Why separable: a Kaiser-windowed sinc of radius 4 (solvers/drivers/point_interpolation.h) touches up to
// 8 cells per axis, 512 cells in all. A flat (index, weight) list of 512 entries would be 6 KiB per
// point (and as much device memory per receiver); the three 1-D weight lists are 120 bytes. They
// also make the arithmetic cheaper (record() sums rows, then planes, then the volume) and let a
// z-slab of a decomposed grid keep the planes it holds by clipping [k0, k0 + nz).
// Trilinear points are the same thing with at most 2 cells per axis, and a point on a node is
// nx = ny = nz = 1 with weights 1.
//
// Arithmetic order (the CPU reference and the CUDA kernels follow it, so traces agree to the bit
// where the wavefields do), float32 throughout, each sum from 0 in increasing index order:
//   inject: p[cell] += (((wz[c] * wy[b]) * wx[a]) * v2dt2[cell]) * amp,   amp = scale * series
//   record: row(c, b) = sum_a wx[a] * p[cell];  plane(c) = sum_b wy[b] * row(c, b);
//           series = sum_c wz[c] * plane(c)
constexpr int kMaxPointTaps = 8; // cells per axis: twice the sinc radius

struct PointStencil {
  int i0 = 0, j0 = 0, k0 = 0; // first cell (x, y, z), interior coordinates of the compute grid
  int nx = 0, ny = 0, nz = 0; // cells along each axis, 0 .. kMaxPointTaps; 0: no cells at all
  float wx[kMaxPointTaps] = {}, wy[kMaxPointTaps] = {}, wz[kMaxPointTaps] = {};

  int64_t cells() const { return int64_t(nx) * ny * nz; }
  // Every cell inside the grid's interior (and at most kMaxPointTaps per axis)?
  bool fits(const GridLayout& g) const {
    auto axis = [](int first, int n, int size) {
      return n >= 0 && n <= kMaxPointTaps && (n == 0 || (first >= 0 && first + n <= size));
    };
    return axis(i0, nx, g.nx) && axis(j0, ny, g.ny) && axis(k0, nz, g.nz);
  }
};

// A point on cell (i, j, k) with weight 1.
inline PointStencil point_at_cell(int i, int j, int k) {
  PointStencil p;
  p.i0 = i;
  p.j0 = j;
  p.k0 = k;
  p.nx = p.ny = p.nz = 1;
  p.wx[0] = p.wy[0] = p.wz[0] = 1.0f;
  return p;
}

// A box of interior cells of the compute grid, half-open: x0 <= i < x1, y0 <= j < y1, z0 <= k < z1.
// RTM uses the model region (the grid less its absorbing layers). Dense arrays over a box are
// [z][y][x], x fastest, like every other array.
struct Box {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
  int nx() const { return x1 - x0; }
  int ny() const { return y1 - y0; }
  int nz() const { return z1 - z0; }
  int64_t cells() const { return int64_t(nx()) * ny() * nz(); }
  bool empty() const { return nx() <= 0 || ny() <= 0 || nz() <= 0; }
  bool inside(const GridLayout& g) const {
    return !empty() && x0 >= 0 && y0 >= 0 && z0 >= 0 && x1 <= g.nx && y1 <= g.ny && z1 <= g.nz;
  }
  bool operator==(const Box& o) const {
    return x0 == o.x0 && x1 == o.x1 && y0 == o.y0 && y1 == o.y1 && z0 == o.z0 && z1 == o.z1;
  }
};

// The boundary ring of a box: its cells less than kHalo cells from any of its six faces. A step
// of the cells deeper inside reads only cells of the box, so a box whose ring is restored from a
// store after each step evolves exactly as it did when the ring was saved (docs/rtm.md).
inline bool in_boundary_ring(const Box& b, int i, int j, int k) {
  return i < b.x0 + kHalo || i >= b.x1 - kHalo || j < b.y0 + kHalo || j >= b.y1 - kHalo ||
         k < b.z0 + kHalo || k >= b.z1 - kHalo;
}
inline int64_t boundary_ring_cells(const Box& b) {
  auto inner = [](int n) { return n > 2 * kHalo ? int64_t(n - 2 * kHalo) : int64_t(0); };
  return b.cells() - inner(b.nx()) * inner(b.ny()) * inner(b.nz());
}
// A box whose boundary ring a wavefield can store: inside the grid along x and y; along z it may
// reach beyond the grid's planes (a z-slab of a decomposed grid stores the part of the global ring
// that crosses it, kernels/mpi/decomposed_propagator.h), as long as it overlaps them.
inline bool ring_box_fits(const Box& b, const GridLayout& g) {
  return !b.empty() && b.x0 >= 0 && b.y0 >= 0 && b.x1 <= g.nx && b.y1 <= g.ny && b.z0 < g.nz &&
         b.z1 > 0;
}
// GridLayout::index of every ring cell inside the grid, z slowest, x fastest: a gather/scatter
// list a backend can use for its boundary store (the order is the backend's own business).
inline std::vector<int64_t> boundary_ring_indices(const GridLayout& g, const Box& b) {
  std::vector<int64_t> index;
  const int k_begin = b.z0 > 0 ? b.z0 : 0, k_end = b.z1 < g.nz ? b.z1 : g.nz;
  index.reserve(size_t(boundary_ring_cells(b)));
  for (int k = k_begin; k < k_end; ++k)
    for (int j = b.y0; j < b.y1; ++j)
      for (int i = b.x0; i < b.x1; ++i)
        if (in_boundary_ring(b, i, j, k)) index.push_back(g.index(i, j, k));
  return index;
}

// Everything a wavefield needs to know about the grid, fixed for its lifetime.
struct PropagatorSetup {
  GridLayout layout;
  LaplacianWeights weights;      // from the grid spacing
  std::vector<float> v2dt2;      // v^2 dt^2, dense [nz][ny][nx], interior cells only
  DampingProfiles damping;       // the sponge's profiles; empty: no sponge
  // The C-PML (solvers/contracts/cpml.h): an additive correction on the layer cells after the undamped step;
  // empty: none. A setup has the sponge or the C-PML, never both.
  CpmlProfiles cpml;
  // Pseudo-acoustic TTI (solvers/contracts/tti.h): per-cell coefficients; empty: the isotropic step.
  // A TTI setup has no C-PML (the drivers refuse it: docs/physics.md, TTI).
  TtiCoefficients tti;
  // A free surface on halo plane k = -1 by the image method (solvers/contracts/free_surface.h):
  // every backend mirrors the field it steps from (p and q for TTI) into the top halo before a
  // step of planes that read it. Off: the top halo stays zero like the others. A z-slab has it
  // only where it holds the grid's plane 0.
  bool free_surface = false;
};

} // namespace rtm
