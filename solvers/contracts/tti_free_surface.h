// The free surface of the TTI step (solvers/contracts/tti.h) by the image method, exact for the
// two-pass operator: what the CPU reference (kernels/cpu/tti_propagator.cpp) and the CUDA kernels
// (kernels/cuda/tti/tti_free_surface.cu) both write, one definition of it.
//
// The isotropic surface (solvers/contracts/free_surface.h) mirrors the field into the top halo.
// The TTI step's second pass also reads pass 1's arrays (u = n . D f, w_a = n_a^2 R_a f) and the
// axis n up to 4 planes above the first row; they are set to their values in the whole-space
// problem of the field and its negative image, in a medium that is its own mirror image across
// plane -1:
// - the axis above: n at plane -1 - r is n at plane -1 + r reflected, (n_x, n_y, -n_z); on plane
//   -1 itself (0, 0, n_z of plane 0), which is its own reflection and keeps n_z^2 continuous;
// - f odd (free_surface.h) makes u, w_x, w_y odd: their halo planes -2 .. -4 are minus planes
//   0, 1, 2; on plane -1, w_x = w_y = 0 (f is 0 along the plane) and u = n_z D_z f;
// - w_z is not odd: R_z is a one-sided factor (kTtiAxisFactor), so w_z at plane h is
//   n_z(h)^2 (R_z f)(h) evaluated on the odd extension of f (reaching plane h - 4 >= -8, which
//   is -f on plane -2 - (h - 4) <= 6).
// The operator on the grid is then the whole-space one restricted to odd fields. Where n_z^2 is
// constant over the top 8 planes (VTI, a constant tilt) the whole-space operator commutes with
// the reflection, so this is exact and symmetric (stable, its own adjoint). Where n_z varies with
// depth there, the one-sided R_z and its reversal R_z' see the medium differently: the restriction
// is no longer exactly symmetric (the dot-product test with a tilt varying by +-20 degrees,
// docs/physics.md, measures how much).
#pragma once

#include "solvers/contracts/free_surface.h"
#include "solvers/contracts/tti.h"

namespace rtm {

// The odd extension reaches plane 6 (the image of plane -8): inside the array (its bottom halo
// included) from this many planes on. The wavefields refuse thinner grids with the surface.
constexpr int kTtiFreeSurfaceMinPlanes = 3;

// The axis in the top halo as described above, for the padded coefficient arrays of scalar
// layout g (their halo zero before). Host memory; once per setup.
inline void mirror_tti_axis_into_surface_halo(const GridLayout& g, float* nx, float* ny, float* nz) {
  for (int k = -kHalo; k <= kFreeSurfacePlane; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const int64_t to = g.index(i, j, k);
        if (k == kFreeSurfacePlane) {
          nx[to] = 0.0f;
          ny[to] = 0.0f;
          nz[to] = nz[g.index(i, j, 0)];
        } else {
          const int64_t from = g.index(i, j, free_surface_source(k));
          nx[to] = nx[from];
          ny[to] = ny[from];
          nz[to] = -nz[from];
        }
      }
}

// f on plane k of column (i, j) of a field whose top halo holds the image: memory down to plane
// -kHalo, the odd extension below.
RTM_HOST_DEVICE float tti_odd_extension(const GridLayout& t, const float* f, int i, int j, int k) {
  return k >= -kHalo ? f[t.index(i, j, k)] : -f[t.index(i, j, free_surface_source(k))];
}

// Pass 1's four arrays at top-halo cell (i, j, k), kFreeSurfacePlane >= k >= -kHalo, of one
// field (p or q): f, u, wx, wy, wz point at that field's arrays (tti_layout t; the field's top
// halo already its image, u, wx, wy computed on planes 0 .. 2), n_z the padded coefficient array
// of scalar layout g with its halo from mirror_tti_axis_into_surface_halo. Written into u, wx,
// wy, wz at the cell.
RTM_HOST_DEVICE void tti_surface_scratch_cell(const GridLayout& g, const GridLayout& t, const TtiWeights& w,
                                              const float* n_z, const float* f, float* u, float* wx,
                                              float* wy, float* wz, int i, int j, int k) {
  const int64_t c = t.index(i, j, k);
  float column[9]; // f on planes k - 4 .. k + 4
  for (int o = 0; o < 9; ++o) column[o] = tti_odd_extension(t, f, i, j, k + o - 4);
  const float n = n_z[g.index(i, j, k)];
  wz[c] = tti_pure_axis(column + 4, 1, w.rz, n);
  if (k == kFreeSurfacePlane) { // n = (0, 0, n_z) there, and f = 0 along the plane
    u[c] = n * tti_first(column + 4, 1, w.gz);
    wx[c] = 0.0f;
    wy[c] = 0.0f;
    return;
  }
  const int64_t m = t.index(i, j, free_surface_source(k));
  u[c] = -u[m];
  wx[c] = -wx[m];
  wy[c] = -wy[m];
}

} // namespace rtm
