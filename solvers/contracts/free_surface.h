// The free surface by the image method (docs/physics.md, "The free surface").
//
// The surface is the grid plane k = -1, one cell above the first row (z = -dz in model
// coordinates): the top plane of the 4-plane halo. Before each step reads a field, the field is
// extended antisymmetrically across that plane,
//     p(i, j, -1) = 0,   p(i, j, -1 - r) = -p(i, j, -1 + r),   r = 1 .. kHalo - 1,
// i.e. halo planes -2, -3, -4 take minus planes 0, 1, 2. The 8th-order Laplacian of an odd field
// is odd, so the interior then steps exactly as the whole-space field of the sources and their
// negative images mirrored across k = -1 (Levander 1988, the image method); a zero halo alone is
// no such image (the stencil's reach of 4 cells would need 4 mirrored planes), and its surface
// sits about 0.1 cell below plane -1 (the measurement in docs/physics.md).
//
// Why k = -1 and not the first row: every interior node stays an unknown (a surface on row 0
// would pin that row to zero), only halo cells are written, model coordinates keep their
// meaning (a source at z = 0 lies one cell below the surface and radiates), and the points'
// Hicks weights already fold across this plane (solvers/drivers/point_interpolation.h).
//
// Only the interior columns (0 <= i < nx, 0 <= j < ny) of the halo planes are written: the
// Laplacian reads a halo plane only straight above an interior cell.
#pragma once

#include "solvers/contracts/grid_layout.h"

namespace rtm {

constexpr int kFreeSurfacePlane = -1; // the pressure-release plane, a halo plane
// Halo plane k (kFreeSurfacePlane > k >= -kHalo) holds minus interior plane free_surface_source(k).
constexpr int free_surface_source(int k) { return 2 * kFreeSurfacePlane - k; }

// Writes the top halo of `field` (padded in layout g; a TTI layout's p or q alike, whose plane
// stride the layout carries) as described above. Host memory; the CUDA twin is
// kernels/cuda/fields/field_ops.cuh mirror_free_surface, which writes the same bits.
inline void mirror_free_surface(const GridLayout& g, float* field) {
  for (int k = -kHalo; k <= kFreeSurfacePlane; ++k)
    for (int j = 0; j < g.ny; ++j) {
      float* out = field + g.index(0, j, k);
      if (k == kFreeSurfacePlane) {
        for (int i = 0; i < g.nx; ++i) out[i] = 0.0f;
      } else {
        const float* in = field + g.index(0, j, free_surface_source(k));
        for (int i = 0; i < g.nx; ++i) out[i] = -in[i];
      }
    }
}

} // namespace rtm
