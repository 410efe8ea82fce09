// The per-plane arithmetic of the kernels that march along z with a register queue and a shared
// tile of several cells per thread (register_queue.cuh, tma_ring.cuh, fused_backward.cu): the
// Laplacian of kC consecutive cells of one row of plane k, its x and y neighbours read from a
// shared tile of that plane, its z neighbours taken from the thread's register queue.
//
// One function, so that these kernels sum the terms in one order, that of the CPU reference
// (laplacian_from_global in wave_step.cuh, solvers/contracts/stencil.h): c0 p first, then per
// radius r the x pair, the y pair and the z pair, each added as it comes. The GPU tests compare
// every variant with the CPU step, and the fused backward step must round exactly as the
// separate steps do (tests/test_fused_backward_gpu.cpp), so the order is part of the contract.
// (async_prefetch.cu, one cell per thread, takes the centre value from its queue rather than
// from the tile; through this function its code changed, 440 -> 432 and 576 -> 600 SASS
// instructions undamped and damped, so it keeps its own six lines.)
#pragma once

#include <cuda_runtime.h>

#include "solvers/contracts/grid_layout.h" // kHalo
#include "solvers/contracts/stencil.h"

namespace rtm::cuda {

// kC consecutive floats of a shared tile, read with one access of kC floats (the tile rows are
// aligned to kC floats: 4 x 4 bytes for the float4 kernels, 2 x 4 for the fused one).
template <int kC> struct SharedCells;
template <> struct SharedCells<1> {
  static __device__ __forceinline__ void load(const float* p, float* v) { v[0] = *p; }
};
template <> struct SharedCells<2> {
  static __device__ __forceinline__ void load(const float* p, float* v) {
    const float2 t = *reinterpret_cast<const float2*>(p);
    v[0] = t.x;
    v[1] = t.y;
  }
};
template <> struct SharedCells<4> {
  static __device__ __forceinline__ void load(const float* p, float* v) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  }
};

// The x window of kC cells: kHalo cells left of the first one, the kC cells, kHalo right of them.
template <int kC> constexpr int kRowWindow = kC + 2 * kHalo;

// The Laplacian of the kC cells whose first one is at `centre` in a shared tile of plane k (rows
// kRowFloats floats apart, with kHalo cells of halo on every side).
//   queue(d, l): cell l's value of plane k - kHalo + d (d = 0 .. 2 kHalo), from the thread's
//                register queue; queue(kHalo, l) is not read (the tile holds the same value).
//   row:         on return, the x window (row[kHalo + l] is cell l itself: the update needs p[n]).
//   lap:         on return, the Laplacian of each cell.
template <int kC, int kRowFloats, class QueueAt>
__device__ __forceinline__ void plane_laplacian(const LaplacianWeights& w, const float* centre,
                                                QueueAt queue, float (&row)[kRowWindow<kC>],
                                                float (&lap)[kC]) {
  static_assert(kHalo % kC == 0, "the x window is whole accesses of kC cells");
#pragma unroll
  for (int q = 0; q < kRowWindow<kC> / kC; ++q)
    SharedCells<kC>::load(centre + (kC * q - kHalo), row + kC * q);
#pragma unroll
  for (int l = 0; l < kC; ++l) lap[l] = w.c0 * row[kHalo + l];
#pragma unroll
  for (int r = 1; r <= kHalo; ++r) {
    float up[kC], down[kC];
    SharedCells<kC>::load(centre - r * kRowFloats, up);
    SharedCells<kC>::load(centre + r * kRowFloats, down);
#pragma unroll
    for (int l = 0; l < kC; ++l) {
      lap[l] += w.wx[r] * (row[kHalo + l - r] + row[kHalo + l + r]);
      lap[l] += w.wy[r] * (up[l] + down[l]);
      lap[l] += w.wz[r] * (queue(kHalo - r, l) + queue(kHalo + r, l));
    }
  }
}

} // namespace rtm::cuda
