// tti-pipelined: pass 2 of the TTI step (tti_step.cuh) with shared-memory tiles that walk z and a
// single-stage cp.async pipeline, after the seed's TTI kernel: while plane k computes, the tiles of
// plane k+1 (p, u_p, u_q, n_x, n_y, and pass 1's w_x and w_y of both fields, with their 4-cell x-y
// halos) are on their way into the other of two shared slots. The z neighbours (p, u_p, u_q, n_z,
// w_z of both fields at planes k-4 .. k+4) live in register queues; each step of the walk loads
// the leading plane k+4 of those. Per-cell arithmetic: the
// functions of solvers/contracts/tti.h, in the CPU reference's order.
#include <cuda_runtime.h>

#include "kernels/cuda/steps/async_copy.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/tti_step.cuh"

namespace rtm::cuda {
namespace {

constexpr int kTileX = 32, kTileY = 8, kThreads = kTileX * kTileY; // 256 cells per block
constexpr int kRowFloats = kTileX + 2 * kHalo;                      // 40
constexpr int kRows = kTileY + 2 * kHalo;                           // 16
constexpr int kTileFloats = kRows * kRowFloats;                     // 640
constexpr int kRowVec4 = kRowFloats / 4;                            // 10
constexpr int kTileCopies = kRows * kRowVec4;                       // 160 per tile
constexpr int kTiles = 9; // p, u_p, u_q, n_x, n_y, w_x of p and q, w_y of p and q
constexpr int kCopies = kTiles * kTileCopies; // 1440 per plane
// Two slots of nine tiles: 46080 bytes, under the 48 KB of static shared memory.
static_assert(2 * kTiles * kTileFloats * sizeof(float) <= 48 * 1024, "the tiles outgrow static shared memory");
constexpr int kQueue = 2 * kHalo + 1;

__global__ void __launch_bounds__(kThreads) tti_update_pipelined_kernel(const TtiStepArgs a, int chunk) {
  __shared__ __align__(16) float tiles[2][kTiles][kTileFloats];
  const GridLayout& g = a.g;
  const GridLayout& t = a.t;
  const TtiWeights& w = a.w;
  const int64_t qo = tti_q_offset(t);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTileX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int i = x0 + tx, j = y0 + ty;
  const int k_begin = a.k_begin + blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, a.k_end);
  if (k_begin >= k_end) return; // the whole block: no barrier is skipped by part of it
  const bool interior = i < g.nx && j < g.ny;

  const float* u = a.scratch + tti_scratch_offset(t, TtiScratch::u);
  const float* wx = a.scratch + tti_scratch_offset(t, TtiScratch::wx);
  const float* wy = a.scratch + tti_scratch_offset(t, TtiScratch::wy);
  const float* wz = a.scratch + tti_scratch_offset(t, TtiScratch::wz);
  // Tile `tile`'s array; tiles 3 and 4 (n_x, n_y) have the scalar layout g, the others t.
  auto tile_base = [&](int tile) {
    switch (tile) {
    case 0: return a.cur;
    case 1: return u;
    case 2: return u + qo;
    case 3: return a.nx;
    case 4: return a.ny;
    case 5: return wx;
    case 6: return wx + qo;
    case 7: return wy;
    default: return wy + qo;
    }
  };

  // Requests the nine tiles of plane k into slot `slot`, then commits (one group per call).
  auto request = [&](int k, int slot) {
    for (int c = tid; c < kCopies; c += kThreads) {
      const int tile = c / kTileCopies, piece = c % kTileCopies;
      const int r = piece / kRowVec4, c4 = piece % kRowVec4;
      const int gx = x0 - kHalo + 4 * c4, gy = y0 - kHalo + r;
      const bool valid = gx < g.nx + kHalo && gy < g.ny + kHalo;
      const float* base = tile_base(tile);
      const float* src = base;
      if (valid) src = base + (tile == 3 || tile == 4 ? g.index(gx, gy, k) : t.index(gx, gy, k));
      cp_async_16(&tiles[slot][tile][r * kRowFloats + 4 * c4], src, valid);
    }
    cp_async_commit();
  };

  // Register queues: queue[kHalo + d] holds plane k + d of the cell's column.
  float pq[kQueue], upq[kQueue], uqq[kQueue], nzq[kQueue], wzpq[kQueue], wzqq[kQueue];
  const int64_t f0 = interior ? t.index(i, j, 0) : 0, c0 = interior ? g.index(i, j, 0) : 0;
  auto load = [&](int d, int k) {
    const int64_t f = f0 + int64_t(k) * t.plane;
    pq[d] = interior ? __ldg(a.cur + f) : 0.0f;
    upq[d] = interior ? __ldg(u + f) : 0.0f;
    uqq[d] = interior ? __ldg(u + qo + f) : 0.0f;
    nzq[d] = interior ? __ldg(a.nz + c0 + int64_t(k) * g.plane) : 0.0f;
    wzpq[d] = interior ? __ldg(wz + f) : 0.0f;
    wzqq[d] = interior ? __ldg(wz + qo + f) : 0.0f;
  };
  pq[0] = upq[0] = uqq[0] = nzq[0] = wzpq[0] = wzqq[0] = 0.0f;
#pragma unroll
  for (int d = 1; d < kQueue; ++d) load(d, k_begin - kHalo - 1 + d); // planes k_begin-4 .. k_begin+3

  request(k_begin, 0);
  const int centre = (ty + kHalo) * kRowFloats + tx + kHalo;
  for (int k = k_begin; k < k_end; ++k) {
    const int slot = (k - k_begin) & 1;
    cp_async_wait<0>(); // plane k's tiles, this thread's part
    __syncthreads();    // everyone's; and nobody still reads the other slot
    if (k + 1 < k_end) request(k + 1, slot ^ 1);
    else cp_async_commit();
#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d) {
      pq[d] = pq[d + 1];
      upq[d] = upq[d + 1];
      uqq[d] = uqq[d + 1];
      nzq[d] = nzq[d + 1];
      wzpq[d] = wzpq[d + 1];
      wzqq[d] = wzqq[d + 1];
    }
    load(kQueue - 1, k + kHalo);

    const float* tp = &tiles[slot][0][centre];
    const float* tup = &tiles[slot][1][centre];
    const float* tuq = &tiles[slot][2][centre];
    const float* tnx = &tiles[slot][3][centre];
    const float* tny = &tiles[slot][4][centre];
    const float* twxp = &tiles[slot][5][centre];
    const float* twxq = &tiles[slot][6][centre];
    const float* twyp = &tiles[slot][7][centre];
    const float* twyq = &tiles[slot][8][centre];
    const float lap = (tti_second(tp, 1, w.c0x, w.wx) + tti_second(tp, kRowFloats, w.c0y, w.wy)) +
                      tti_second(&pq[kHalo], 1, w.c0z, w.wz);
    float h1p = tti_first_of_product(tnx, tup, 1, 1, w.gx);
    h1p += tti_first_of_product(tny, tup, kRowFloats, kRowFloats, w.gy);
    h1p += tti_first_of_product(&nzq[kHalo], &upq[kHalo], 1, 1, w.gz);
    h1p = tti_h1(h1p, tti_axis_factor_transpose(twxp, 1, w.rx), tti_axis_factor_transpose(twyp, kRowFloats, w.ry),
                 tti_axis_factor_transpose(&wzpq[kHalo], 1, w.rz));
    float h1q = tti_first_of_product(tnx, tuq, 1, 1, w.gx);
    h1q += tti_first_of_product(tny, tuq, kRowFloats, kRowFloats, w.gy);
    h1q += tti_first_of_product(&nzq[kHalo], &uqq[kHalo], 1, 1, w.gz);
    h1q = tti_h1(h1q, tti_axis_factor_transpose(twxq, 1, w.rx), tti_axis_factor_transpose(twyq, kRowFloats, w.ry),
                 tti_axis_factor_transpose(&wzqq[kHalo], 1, w.rz));
    if (interior) {
      const int64_t f = f0 + int64_t(k) * t.plane, c = c0 + int64_t(k) * g.plane;
      const float damp = a.damp_x ? a.damp_x[i] + (a.damp_y[j] + a.damp_z[k]) : 0.0f;
      const TtiCellUpdate r =
          tti_update(lap, h1p, h1q, pq[kHalo], __ldg(a.cur + f + qo), a.prev_next[f], a.prev_next[f + qo],
                     __ldg(a.v2dt2 + c), __ldg(a.e + c), __ldg(a.s + c), damp);
      a.prev_next[f] = r.p;
      a.prev_next[f + qo] = r.q;
    }
  }
  cp_async_wait<0>();
}

} // namespace

void launch_tti_update_pipelined(const TtiStepArgs& a, cudaStream_t stream) {
  if (a.k_end <= a.k_begin) return;
  static const int sm_count = [] {
    int device = 0, count = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  const int bx = (a.g.nx + kTileX - 1) / kTileX, by = (a.g.ny + kTileY - 1) / kTileY;
  const int planes = a.k_end - a.k_begin;
  // Enough blocks for ~4 per SM, but at least 16 planes per walk (the pipeline's start-up: the
  // queues' 8 planes and the first tile are paid once per chunk).
  int chunks = (4 * sm_count + bx * by - 1) / (bx * by);
  chunks = max(1, min(chunks, planes / 16));
  const int chunk = (planes + chunks - 1) / chunks;
  const dim3 grid(bx, by, (planes + chunk - 1) / chunk);
  tti_update_pipelined_kernel<<<grid, dim3(kTileX, kTileY), 0, stream>>>(a, chunk);
  CUDA_CHECK_LAUNCH("tti_update_pipelined_kernel");
}

} // namespace rtm::cuda
