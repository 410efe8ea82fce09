// The arithmetic that finishes a migrated image (docs/rtm.md, section 5): each cell's sum divided
// by its illumination plus eps, eps a fraction of the illumination's mean, then the Laplacian
// filter -lap (2nd-order 7-point stencil with the grid spacings, edge values repeated outside the
// volume). One definition for every place that finishes an image: the drivers on the host
// (solvers/drivers/migration.cpp), the z-slab split (solvers/drivers/slab_image.cpp) and the CUDA
// backend where the sums lie (kernels/cuda/fields/image_finish.cu), so all of them give the same
// bits, whatever their threads.
//
// The mean's order: each row of nx cells summed in double from its first cell, then the rows'
// sums added in order (y within z). Rows are independent, so threads, ranks or a GPU sum them
// apart and still add the same numbers in the same order.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RTM_FINISH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RTM_FINISH_HOST_DEVICE inline
#endif

namespace rtm {

// How a finished image is made: eps_fraction of the illumination's mean added to it before the
// division; the Laplacian filter or not, with the grid spacings (m).
struct ImageFinish {
  double eps_fraction = 0;
  bool laplacian = true;
  double dx = 1, dy = 1, dz = 1;
};

// Subnormal floats read and written as zero (of their sign). The host's threads may run with
// denormals flushed (kernels/cpu/denormals.h) and a GPU never flushes them here, so the
// arithmetic below flushes them itself: the same bits on either, whatever the threads' modes. A
// subnormal is below 1.2e-38, far below anything an image shows.
RTM_FINISH_HOST_DEVICE float flush_subnormal(float x) {
  const float magnitude = x < 0 ? -x : x;
  return magnitude != 0 && magnitude < 1.17549435e-38f ? (x < 0 ? -0.0f : 0.0f) : x;
}

// One row's sum, in the order above.
RTM_FINISH_HOST_DEVICE double image_row_sum(const float* row, int nx) {
  double sum = 0;
  for (int i = 0; i < nx; ++i) sum += double(flush_subnormal(row[i]));
  return sum;
}

// A cell of the normalised image: sum / (illumination + eps), 0 where that is not positive.
RTM_FINISH_HOST_DEVICE float normalised_image_value(float sum, float illumination, double eps) {
  const double denominator = double(flush_subnormal(illumination)) + eps;
  return denominator > 0 ? flush_subnormal(float(double(flush_subnormal(sum)) / denominator))
                         : 0.0f;
}

// -lap at a cell from its value c and its neighbours along x (xm, xp), y and z, as the filter
// reads them (an edge cell's outside neighbour is itself); ix = 1 / dx², iy, iz likewise. In
// double, with explicit roundings on a GPU so that no multiply-add is contracted: the host's bits.
RTM_FINISH_HOST_DEVICE float laplacian_filter_value(float cell, float x_minus, float x_plus,
                                                    float y_minus, float y_plus, float z_minus,
                                                    float z_plus, double ix, double iy, double iz) {
  const double c = flush_subnormal(cell), xm = flush_subnormal(x_minus), xp = flush_subnormal(x_plus);
  const double ym = flush_subnormal(y_minus), yp = flush_subnormal(y_plus);
  const double zm = flush_subnormal(z_minus), zp = flush_subnormal(z_plus);
#if defined(__CUDA_ARCH__)
  const double two_c = __dmul_rn(2.0, c);
  const double sx = __dadd_rn(__dadd_rn(xm, -two_c), xp);
  const double sy = __dadd_rn(__dadd_rn(ym, -two_c), yp);
  const double sz = __dadd_rn(__dadd_rn(zm, -two_c), zp);
  const double lap = __dadd_rn(__dadd_rn(__dmul_rn(ix, sx), __dmul_rn(iy, sy)), __dmul_rn(iz, sz));
#else
  const double lap = ix * (xm - 2 * c + xp) + iy * (ym - 2 * c + yp) + iz * (zm - 2 * c + zp);
#endif
  return flush_subnormal(float(-lap));
}

} // namespace rtm
