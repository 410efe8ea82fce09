// naive_32x32: the baseline. 32x32 thread blocks tile the x-y plane; each thread walks all of z
// for its column and loads all 25 stencil points of every cell from global memory, leaving any
// reuse to the L1 and L2 caches.
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {
namespace {

constexpr int kBlockX = 32, kBlockY = 32;

template <bool kDamped>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    naive_32x32_kernel(const GridLayout g, const LaplacianWeights w, const float* __restrict__ p_cur,
                       float* __restrict__ p_prev_next, const float* __restrict__ v2dt2,
                       const float* __restrict__ damp_x, const float* __restrict__ damp_y,
                       const float* __restrict__ damp_z) {
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int j = blockIdx.y * kBlockY + threadIdx.y;
  if (i >= g.nx || j >= g.ny) return;
  const float e_x = kDamped ? damp_x[i] : 0.0f, e_y = kDamped ? damp_y[j] : 0.0f;
  for (int k = 0; k < g.nz; ++k) {
    const int64_t c = g.index(i, j, k);
    const float lap = laplacian_from_global(p_cur, c, g.pitch, g.plane, w);
    const float e = kDamped ? e_x + (e_y + damp_z[k]) : 0.0f; // the reference's order
    p_prev_next[c] = advance_cell<kDamped>(p_cur[c], p_prev_next[c], v2dt2[c], lap, e);
  }
}

} // namespace

void launch_naive_32x32(const WaveStepArgs& a, cudaStream_t stream) {
  const GridLayout& g = a.layout;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((g.nx + kBlockX - 1) / kBlockX, (g.ny + kBlockY - 1) / kBlockY);
  const auto* p_cur = static_cast<const float*>(a.p_cur);
  auto* p_prev_next = static_cast<float*>(a.p_prev_next);
  const auto* v2dt2 = static_cast<const float*>(a.v2dt2);
  if (a.damped())
    naive_32x32_kernel<true><<<grid, block, 0, stream>>>(g, a.weights, p_cur, p_prev_next, v2dt2,
                                                         a.damp_x, a.damp_y, a.damp_z);
  else
    naive_32x32_kernel<false><<<grid, block, 0, stream>>>(g, a.weights, p_cur, p_prev_next, v2dt2,
                                                          nullptr, nullptr, nullptr);
  CUDA_CHECK_LAUNCH("naive_32x32_kernel");
}

} // namespace rtm::cuda
