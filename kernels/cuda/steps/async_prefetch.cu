// async_prefetch: an x-y tile of p[n] in shared memory, the z neighbours in registers, and every
// global load issued as cp.async kAhead planes before it is needed, so the copies run while the
// block computes.
//
// Each block owns a 32x16 column of cells (one per thread) over a chunk of z. It streams the
// planes of p[n] through a ring of shared tiles (each 40x24 floats: the 32x16 cells with their
// 4-cell halos). The plane t enters the ring; its centre value enters the thread's register queue
// of 9 z-values; when the queue holds planes k-4..k+4 (k = t-4), the cell (i, j, k) is computed
// from the tile of plane k (x and y neighbours) and the queue (z neighbours). p[n-1] and v2dt2 of
// plane k arrive through cp.async too, in a smaller ring. One __syncthreads per plane.
#include "kernels/cuda/steps/async_copy.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {
namespace {

constexpr int kTileX = 32, kTileY = 16;            // cells per block, one per thread
constexpr int kThreads = kTileX * kTileY;           // 512
constexpr int kRowFloats = kTileX + 2 * kHalo;      // 40: a tile row with its x halos
constexpr int kRows = kTileY + 2 * kHalo;           // 24: tile rows with the y halos
constexpr int kTileFloats = kRows * kRowFloats;     // 960
constexpr int kRowVec4 = kRowFloats / 4;            // 10 16-byte copies per tile row
constexpr int kTileCopies = kRows * kRowVec4;       // 240 copies per tile
constexpr int kCellVec4 = kThreads / 4;             // 128 copies for a plane of p[n-1] (or v2dt2)
constexpr int kAhead = 2;                           // planes requested ahead of the one consumed
constexpr int kTileSlots = kHalo + 1 + kAhead;      // planes k..k+4 in use, kAhead in flight
constexpr int kCellSlots = 1 + kAhead;              // p[n-1] and v2dt2: plane k in use + in flight
constexpr int kMinChunk = 16;                       // planes per block at the least
static_assert(kTileCopies + 2 * kCellVec4 <= kThreads, "one copy per thread and plane");

template <bool kDamped>
__global__ void __launch_bounds__(kThreads, 3)
    async_prefetch_kernel(const GridLayout g, const LaplacianWeights w,
                          const float* __restrict__ p_cur, float* __restrict__ p_prev_next,
                          const float* __restrict__ v2dt2, const float* __restrict__ damp_x,
                          const float* __restrict__ damp_y, const float* __restrict__ damp_z,
                          int chunk) {
  __shared__ __align__(16) float tiles[kTileSlots][kTileFloats];
  __shared__ __align__(16) float cells[kCellSlots][2][kThreads]; // [slot][p_prev, v2dt2][cell]

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int i = x0 + tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  // Stream entries a = 0 .. entries-1 carry the tile of plane k_begin + a (up to k_end + 3) and,
  // from a = kHalo on, p[n-1] and v2dt2 of plane k_begin + a - kHalo: the plane computed when
  // entry a has arrived (its queue then reaches 4 planes above it).
  const int entries = (k_end - k_begin) + kHalo;

  // This thread's copy job, the same for every plane: one 16-byte piece of the p[n] tile, or one
  // of p[n-1] or v2dt2, or none. Pieces outside the readable grid are zero-filled.
  const float* copy_src = p_cur; // the piece in plane 0; plane k adds k * g.plane
  int copy_dst = 0;              // float offset in a tile slot, or in a cell slot
  bool copy_valid = false;
  const bool tile_job = tid < kTileCopies;
  const bool cell_job = !tile_job && tid < kTileCopies + 2 * kCellVec4;
  if (tile_job) {
    const int r = tid / kRowVec4, c4 = tid % kRowVec4;
    const int gx = x0 - kHalo + 4 * c4, gy = y0 - kHalo + r;
    copy_valid = gx < g.nx + kHalo && gy < g.ny + kHalo;
    if (copy_valid) copy_src = p_cur + g.index(gx, gy, 0);
    copy_dst = r * kRowFloats + 4 * c4;
  } else if (cell_job) {
    const int u = tid - kTileCopies;
    const int which = u / kCellVec4, m = u % kCellVec4; // which: 0 = p[n-1], 1 = v2dt2
    const int r = m / (kTileX / 4), c4 = m % (kTileX / 4);
    const int gx = x0 + 4 * c4, gy = y0 + r;
    const float* base = which == 0 ? p_prev_next : v2dt2;
    copy_valid = gx < g.nx && gy < g.ny;
    copy_src = copy_valid ? base + g.index(gx, gy, 0) : base;
    copy_dst = which * kThreads + r * kTileX + 4 * c4;
  }

  // Requests stream entry a. Always commits a group (possibly empty) so that every iteration
  // commits exactly one and cp_async_wait<kAhead - 1> means "entry t has landed".
  auto request = [&](int a) {
    if (a < entries) {
      if (tile_job) {
        const int k = k_begin + a;
        cp_async_16(&tiles[a % kTileSlots][copy_dst],
                    copy_valid ? copy_src + int64_t(k) * g.plane : copy_src, copy_valid);
      } else if (cell_job && a >= kHalo) {
        const int k = k_begin + a - kHalo;
        cp_async_16(&cells[a % kCellSlots][0][0] + copy_dst,
                    copy_valid ? copy_src + int64_t(k) * g.plane : copy_src, copy_valid);
      }
    }
    cp_async_commit();
  };

  // The register queue: queue[kHalo + d] = p(i, j, k + d) for the plane k being computed.
  // Planes k_begin-4 .. k_begin-1 come straight from global memory; the rest with the tiles.
  const bool interior = i < g.nx && j < g.ny;
  float queue[2 * kHalo + 1];
  queue[0] = 0.0f;
#pragma unroll
  for (int d = 1; d <= 2 * kHalo; ++d)
    queue[d] = (d > kHalo && interior) ? __ldg(p_cur + g.index(i, j, k_begin - 2 * kHalo - 1 + d))
                                       : 0.0f;

  for (int a = 0; a < kAhead; ++a) request(a);

  const float e_x = (kDamped && interior) ? damp_x[i] : 0.0f;
  const float e_y = (kDamped && interior) ? damp_y[j] : 0.0f;
  float* out = p_prev_next + (interior ? g.index(i, j, 0) : 0);

  for (int t = 0; t < entries; ++t) {
    cp_async_wait<kAhead - 1>(); // this thread's copies of entry t have landed
    __syncthreads();             // everyone's have, and no one still reads the slots reused next
    request(t + kAhead);

#pragma unroll
    for (int d = 0; d < 2 * kHalo; ++d) queue[d] = queue[d + 1];
    queue[2 * kHalo] = tiles[t % kTileSlots][(ty + kHalo) * kRowFloats + tx + kHalo];

    if (t >= kHalo) {
      const int k = k_begin + t - kHalo;
      const float* centre =
          &tiles[(t - kHalo) % kTileSlots][(ty + kHalo) * kRowFloats + tx + kHalo];
      float lap = w.c0 * queue[kHalo];
#pragma unroll
      for (int r = 1; r <= kHalo; ++r) {
        lap += w.wx[r] * (centre[-r] + centre[r]);
        lap += w.wy[r] * (centre[-r * kRowFloats] + centre[r * kRowFloats]);
        lap += w.wz[r] * (queue[kHalo - r] + queue[kHalo + r]);
      }
      const float* cell_slot = cells[t % kCellSlots][0];
      const float p_prev = cell_slot[tid];
      const float v = cell_slot[kThreads + tid];
      if (interior) {
        const float e = kDamped ? e_x + (e_y + damp_z[k]) : 0.0f; // the reference's order
        out[int64_t(k) * g.plane] = advance_cell<kDamped>(queue[kHalo], p_prev, v, lap, e);
      }
    }
  }
  cp_async_wait<0>();
}

template <bool kDamped>
void launch_async_prefetch_kernel(const WaveStepArgs& a, cudaStream_t stream) {
  // Every load goes through shared memory (cp.async.cg bypasses L1), so ask for the largest
  // shared-memory carve-out: three blocks of 39 KB per SM.
  static const int resident_per_sm = [] {
    CUDA_CHECK(cudaFuncSetAttribute(async_prefetch_kernel<kDamped>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxShared)));
    return blocks_per_sm(async_prefetch_kernel<kDamped>, kThreads);
  }();
  const GridLayout& g = a.layout;
  const int blocks_x = (g.nx + kTileX - 1) / kTileX, blocks_y = (g.ny + kTileY - 1) / kTileY;
  const int chunks = choose_z_chunks(int64_t(blocks_x) * blocks_y, resident_per_sm * a.sm_count,
                                     g.nz, kMinChunk);
  const int chunk = (g.nz + chunks - 1) / chunks;
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  async_prefetch_kernel<kDamped><<<grid, dim3(kTileX, kTileY), 0, stream>>>(
      g, a.weights, static_cast<const float*>(a.p_cur), static_cast<float*>(a.p_prev_next),
      static_cast<const float*>(a.v2dt2), a.damp_x, a.damp_y, a.damp_z, chunk);
  CUDA_CHECK_LAUNCH("async_prefetch_kernel");
}

} // namespace

void launch_async_prefetch(const WaveStepArgs& a, cudaStream_t stream) {
  if (a.damped())
    launch_async_prefetch_kernel<true>(a, stream);
  else
    launch_async_prefetch_kernel<false>(a, stream);
}

} // namespace rtm::cuda
