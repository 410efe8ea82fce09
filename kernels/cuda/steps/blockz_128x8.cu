// blockz_128x8: the baseline's per-cell code with a different thread-to-cell map. 128x8 blocks
// (four warps along one row: 512-byte contiguous loads, fewer x halos per cell) and blockIdx.z
// splitting z into chunks of kChunk planes. The grid is scheduled x, then y, then z fastest, so the
// blocks resident at any moment all work on the same few planes, across the whole x-y extent:
// the y and z neighbours one block loads are the planes its neighbours just loaded, still in L2.
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {
namespace {

constexpr int kBlockX = 128, kBlockY = 8;
constexpr int kChunk = 16; // planes per block

template <bool kDamped>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    blockz_128x8_kernel(const GridLayout g, const LaplacianWeights w, const float* __restrict__ p_cur,
                        float* __restrict__ p_prev_next, const float* __restrict__ v2dt2,
                        const float* __restrict__ damp_x, const float* __restrict__ damp_y,
                        const float* __restrict__ damp_z) {
  const int i = blockIdx.x * kBlockX + threadIdx.x;
  const int j = blockIdx.y * kBlockY + threadIdx.y;
  if (i >= g.nx || j >= g.ny) return;
  const int k_begin = blockIdx.z * kChunk;
  const int k_end = min(k_begin + kChunk, g.nz);
  const float e_x = kDamped ? damp_x[i] : 0.0f, e_y = kDamped ? damp_y[j] : 0.0f;
  for (int k = k_begin; k < k_end; ++k) {
    const int64_t c = g.index(i, j, k);
    const float lap = laplacian_from_global(p_cur, c, g.pitch, g.plane, w);
    const float e = kDamped ? e_x + (e_y + damp_z[k]) : 0.0f; // the reference's order
    p_prev_next[c] = advance_cell<kDamped>(p_cur[c], p_prev_next[c], v2dt2[c], lap, e);
  }
}

} // namespace

void launch_blockz_128x8(const WaveStepArgs& a, cudaStream_t stream) {
  const GridLayout& g = a.layout;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((g.nx + kBlockX - 1) / kBlockX, (g.ny + kBlockY - 1) / kBlockY,
                  (g.nz + kChunk - 1) / kChunk);
  const auto* p_cur = static_cast<const float*>(a.p_cur);
  auto* p_prev_next = static_cast<float*>(a.p_prev_next);
  const auto* v2dt2 = static_cast<const float*>(a.v2dt2);
  if (a.damped())
    blockz_128x8_kernel<true><<<grid, block, 0, stream>>>(g, a.weights, p_cur, p_prev_next, v2dt2,
                                                          a.damp_x, a.damp_y, a.damp_z);
  else
    blockz_128x8_kernel<false><<<grid, block, 0, stream>>>(g, a.weights, p_cur, p_prev_next, v2dt2,
                                                           nullptr, nullptr, nullptr);
  CUDA_CHECK_LAUNCH("blockz_128x8_kernel");
}

} // namespace rtm::cuda
