// What every CUDA wave-step kernel shares: the launch arguments, the update formula, the
// launcher signature the variant table stores, and small helpers for sizing grids.
//
// The step (solvers/contracts/propagator.h):
//   p[n+1] = 2 p[n] - p[n-1] + v2dt2 * lap p[n]                       (undamped)
//   p[n+1] = ( 2 p[n] - (1 - e) p[n-1] + v2dt2 * lap p[n] ) / (1 + e)   (damped, e = dx+dy+dz)
// Damping is a template parameter of every kernel, so the undamped kernels that the benchmark
// times carry no trace of it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/util/cuda_check.cuh"
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"

namespace rtm::cuda {

// Element type of the wavefields (and, but for bfp16, of v2dt2) on the device. bfp16: block floating
// point, int16 mantissas and an exponent byte per 16 elements (solvers/contracts/bfp16.h), v2dt2
// in float32.
enum class Storage { fp32, fp16, bfp16 };

// Arguments of one step launch. Pointers are device pointers into padded arrays (GridLayout);
// their element type is the variant's Storage (float or __half), hence void here.
struct WaveStepArgs {
  GridLayout layout;
  LaplacianWeights weights;
  const void* p_cur = nullptr;
  void* p_prev_next = nullptr; // p[n-1] on entry, p[n+1] on return (updated in place)
  const void* v2dt2 = nullptr;
  // Damping profiles e per axis on the device, zero-padded to damping_profile_length() entries;
  // all null when the run has no absorbing layers (the undamped kernels are launched then).
  const float* damp_x = nullptr;
  const float* damp_y = nullptr;
  const float* damp_z = nullptr;
  int sm_count = 1; // for kernels that size their grid to the GPU
  // bfp16 storage only (null otherwise): the exponent bytes of p_cur and p_prev_next, one per 16
  // elements, element n of p_cur having exponent p_cur_exponents[n >> 4] (kernels/cuda/steps/bfp16_io.cuh).
  const int8_t* p_cur_exponents = nullptr;
  int8_t* p_prev_next_exponents = nullptr;
  // bfp16_model16 only: v2dt2 as unsigned 16-bit mantissas (v2dt2 points at them), exponents here.
  const int8_t* v2dt2_exponents = nullptr;
  bool damped() const { return damp_x != nullptr; }
};

// Every launcher enqueues one step on `stream` and checks the launch (CUDA_CHECK_LAUNCH).
using StepLauncher = void (*)(const WaveStepArgs& args, cudaStream_t stream);
// The kernels, one per file named after its technique, are declared beside their rows in
// kernels/cuda/steps/variant_table.cu.

// Damping profiles are stored with this many entries (>= n, zero beyond n) so that kernels may
// read them four at a time without a bounds check.
inline int damping_profile_length(int n) { return int(round_up(int64_t(n) + kHalo, 32)); }

// The update of one cell from its Laplacian. `e` is ignored when kDamped is false.
template <bool kDamped>
__device__ __forceinline__ float advance_cell(float p, float p_prev, float v2dt2, float lap,
                                              float e) {
  const float undamped = 2.0f * p - p_prev + v2dt2 * lap;
  if constexpr (kDamped) {
    // Outside the absorbing layers e == 0 and the damped formula is exactly the undamped one
    // ((u + 0) / 1 == u in IEEE arithmetic), so skip the division there. Measured on an H200,
    // 592^3 damped regqueue_vec4: 1.575 -> 1.470 ms per step (docs/results/h200.md). Warps diverge only
    // along the layers' inner faces.
    if (e == 0.0f) return undamped;
    return (undamped + e * p_prev) / (1.0f + e);
  } else {
    (void)e;
    return undamped;
  }
}

// Laplacian of p at linear index c with every neighbour loaded from global memory (the L1 and
// L2 caches catch the reuse, if they can): the simple kernels use this.
__device__ __forceinline__ float laplacian_from_global(const float* __restrict__ p, int64_t c,
                                                       int64_t pitch, int64_t plane,
                                                       const LaplacianWeights& w) {
  float lap = w.c0 * p[c];
#pragma unroll
  for (int r = 1; r <= kHalo; ++r) {
    lap += w.wx[r] * (p[c - r] + p[c + r]);
    lap += w.wy[r] * (p[c - r * pitch] + p[c + r * pitch]);
    lap += w.wz[r] * (p[c - r * plane] + p[c + r * plane]);
  }
  return lap;
}

// Number of z chunks for kernels that march along z: enough blocks for about `waves` full
// rounds of the resident blocks (so the last, partly filled round costs little), but chunks no
// shorter than `min_chunk` planes (each chunk re-reads 8 planes of p[n] to fill its z window).
inline int choose_z_chunks(int64_t blocks_xy, int resident_blocks, int nz, int min_chunk,
                           int waves = 4) {
  const int64_t wanted = (int64_t(waves) * resident_blocks + blocks_xy - 1) / blocks_xy;
  const int64_t most = std::max<int64_t>(1, nz / min_chunk);
  return int(std::clamp<int64_t>(wanted, 1, most));
}

// Blocks of `kernel` that fit on one multiprocessor at once (at least 1).
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads_per_block, size_t dynamic_shared_bytes = 0) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads_per_block,
                                                           dynamic_shared_bytes));
  return std::max(n, 1);
}

} // namespace rtm::cuda
