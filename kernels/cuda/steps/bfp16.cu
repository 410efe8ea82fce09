// bfp16: the wavefields stored as block floating point (solvers/contracts/bfp16.h: int16 mantissas,
// an exponent byte per 16 cells of a row), v2dt2 in float32, every operation in float32.
// 2 + 1/16 bytes per wavefield value: 3 x 2.0625 + 4 = 10.19 bytes of traffic per cell against
// float32's 16, and 15 significant bits relative to each block's largest magnitude, whatever the
// amplitude (docs/variants.md, "Block floating point").
//
// The structure is the register-queue kernel's (kernels/cuda/steps/register_queue.cuh, whose comment
// explains the queue, the shared tile and the loads kDepth planes ahead), kept in this file so that
// the storage's extra work stays visible:
//   - every 4-cell load is a uint2 of mantissas plus the exponent byte of their block (the 4
//     threads of a block load the same byte: one sector);
//   - decoding is one multiply per cell by 2^(e-15); the queue and the shared tile hold floats;
//   - the output's 16-cell block is held by 4 consecutive threads of a warp (tiles are 64 cells
//     wide, so blocks never straddle tiles): two __shfl_xor take the block's largest magnitude,
//     each thread encodes its 4 cells, and the block's first thread writes the exponent.
// p[n+1] overwrites p[n-1] in place, exponents included: a thread reads p[n-1]'s exponent of plane
// k when it requests plane k's loads, kDepth planes (and at least one __syncthreads) before the
// block's first thread writes p[n+1]'s exponent of plane k, so no thread reads a new exponent.
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "kernels/cuda/steps/bfp16_io.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {
namespace {

__device__ __forceinline__ float bfp_lane(const float4& v, int l) {
  return l == 0 ? v.x : l == 1 ? v.y : l == 2 ? v.z : v.w; // l is a compile-time constant
}

// Everything plane k needs besides the queue: halo pieces, p[n-1] and v2dt2 of the thread's 4
// cells, and the queue's new front p(k + 4).
template <int kJobs, class Model> struct Bfp16PlaneLoads {
  Bfp16x4 front;
  Bfp16x4 halo[kJobs];
  Bfp16x4 p_prev;
  Model v2dt2; // float4, or Bfp16x4 of unsigned mantissas (bfp16_model16)
};

// kModel16: v2dt2 as unsigned 16-bit mantissas with an exponent per 16 cells (bfp16_model16),
// read from `v2dt2` (then uint16 mantissas) and `e_v2dt2`; otherwise float32.
template <int kBX, int kBY, int kMinBlocks, int kDepth, bool kDamped, bool kModel16>
__global__ void __launch_bounds__(kBX* kBY, kMinBlocks)
    bfp16_kernel(const GridLayout g, const LaplacianWeights w, const int16_t* __restrict__ p_cur,
                 const int8_t* __restrict__ e_cur, int16_t* __restrict__ p_prev_next,
                 int8_t* __restrict__ e_prev_next, const void* __restrict__ v2dt2,
                 const int8_t* __restrict__ e_v2dt2, const float* __restrict__ damp_x, const float* __restrict__ damp_y,
                 const float* __restrict__ damp_z, int chunk) {
  static_assert(kBX % 4 == 0, "a 16-cell block must be held by 4 threads of one row");
  constexpr int kThreads = kBX * kBY;
  constexpr int kTileX = 4 * kBX, kTileY = kBY;
  constexpr int kRowFloats = kTileX + 2 * kHalo;
  constexpr int kRows = kTileY + 2 * kHalo;
  constexpr int kXHaloJobs = 2 * kTileY;
  constexpr int kYHaloJobs = 2 * kHalo * (kTileX / 4);
  constexpr int kHaloJobs = kXHaloJobs + kYHaloJobs;
  constexpr int kJobsPerThread = (kHaloJobs + kThreads - 1) / kThreads;
  constexpr int kQueue = 2 * kHalo + 1;
  __shared__ __align__(16) float tile[2][kRows * kRowFloats];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + 4 * tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int64_t plane = g.plane;

  const bool column_readable = x < g.nx + kHalo && j < g.ny + kHalo;
  const int64_t column = column_readable ? g.index(x, j, 0) : 0;
  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;
  const float* v_column = static_cast<const float*>(v2dt2) + cell_index;
  const int16_t* v_mantissas = static_cast<const int16_t*>(v2dt2); // kModel16

  int64_t halo_src[kJobsPerThread];
  int halo_dst[kJobsPerThread];
  bool halo_valid[kJobsPerThread];
#pragma unroll
  for (int h = 0; h < kJobsPerThread; ++h) {
    const int job = tid + h * kThreads;
    int gx = 0, gy = 0, dst = 0;
    if (job < kXHaloJobs) {
      const int r = job / 2, right = job % 2;
      gx = right ? x0 + kTileX : x0 - kHalo;
      gy = y0 + r;
      dst = (r + kHalo) * kRowFloats + (right ? kTileX + kHalo : 0);
    } else {
      const int u = job - kXHaloJobs;
      const int rr = u / (kTileX / 4), c4 = u % (kTileX / 4);
      gy = rr < kHalo ? y0 - kHalo + rr : y0 + kTileY + rr - kHalo;
      const int shared_row = rr < kHalo ? rr : kTileY + rr;
      gx = x0 + 4 * c4;
      dst = shared_row * kRowFloats + kHalo + 4 * c4;
    }
    halo_valid[h] = job < kHaloJobs && gx < g.nx + kHalo && gy < g.ny + kHalo;
    halo_src[h] = halo_valid[h] ? g.index(gx, gy, 0) : 0;
    halo_dst[h] = dst;
  }

  using Model = std::conditional_t<kModel16, Bfp16x4, float4>;
  using Loads = Bfp16PlaneLoads<kJobsPerThread, Model>;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  auto request = [&](int kp) {
    Loads l;
    const bool in_chunk = kp < k_end;
    l.front = in_chunk && column_readable ? bfp16_load(p_cur, e_cur, column + (kp + kHalo) * plane)
                                          : bfp16_zero();
#pragma unroll
    for (int h = 0; h < kJobsPerThread; ++h)
      l.halo[h] = in_chunk && halo_valid[h] ? bfp16_load(p_cur, e_cur, halo_src[h] + kp * plane)
                                            : bfp16_zero();
    l.p_prev = in_chunk && cells_inside
                   ? bfp16_load_once(p_prev_next, e_prev_next, cell_index + kp * plane)
                   : bfp16_zero();
    if constexpr (kModel16) {
      l.v2dt2 = in_chunk && cells_inside ? bfp16_load(v_mantissas, e_v2dt2, cell_index + kp * plane)
                                         : bfp16_zero();
    } else {
      l.v2dt2 = in_chunk && cells_inside
                    ? __ldcs(reinterpret_cast<const float4*>(v_column + kp * plane))
                    : zero;
    }
    return l;
  };

  float4 queue[kQueue];
#pragma unroll
  for (int d = 0; d < kQueue - 1; ++d)
    queue[d] = column_readable
                   ? bfp16_unpack(bfp16_load(p_cur, e_cur, column + (k_begin - kHalo + d) * plane))
                   : zero;
  Loads current = request(k_begin);
  queue[kQueue - 1] = bfp16_unpack(current.front);
  Loads pending[kDepth > 1 ? kDepth - 1 : 1];
#pragma unroll
  for (int s = 0; s + 1 < kDepth; ++s) pending[s] = request(k_begin + 1 + s);

  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;
  // The interior cells among the thread's 4 (the last block of a row may end inside a thread):
  // lanes 0 .. last_lane.
  const int last_lane = cells_inside ? min(g.nx - x, 4) - 1 : -1;

  for (int k = k_begin; k < k_end; ++k) {
    float* buf = tile[(k - k_begin) & 1];
    float* centre = buf + (ty + kHalo) * kRowFloats + kHalo + 4 * tx;
    *reinterpret_cast<float4*>(centre) = queue[kHalo];
#pragma unroll
    for (int h = 0; h < kJobsPerThread; ++h)
      if (tid + h * kThreads < kHaloJobs)
        *reinterpret_cast<float4*>(buf + halo_dst[h]) = bfp16_unpack(current.halo[h]);
    __syncthreads();

    const Loads incoming = request(k + kDepth);
    const float4 p_prev = bfp16_unpack(current.p_prev);
    float4 v;
    if constexpr (kModel16)
      v = bfp16_unpack_unsigned(current.v2dt2);
    else
      v = current.v2dt2;

    float row[12];
    {
      const float4 left = *reinterpret_cast<const float4*>(centre - 4);
      const float4 mid = *reinterpret_cast<const float4*>(centre);
      const float4 right = *reinterpret_cast<const float4*>(centre + 4);
#pragma unroll
      for (int l = 0; l < 4; ++l) {
        row[l] = bfp_lane(left, l);
        row[4 + l] = bfp_lane(mid, l);
        row[8 + l] = bfp_lane(right, l);
      }
    }
    float lap[4];
#pragma unroll
    for (int l = 0; l < 4; ++l) lap[l] = w.c0 * row[4 + l];
#pragma unroll
    for (int r = 1; r <= kHalo; ++r) {
      const float4 up = *reinterpret_cast<const float4*>(centre - r * kRowFloats);
      const float4 down = *reinterpret_cast<const float4*>(centre + r * kRowFloats);
#pragma unroll
      for (int l = 0; l < 4; ++l) {
        lap[l] += w.wx[r] * (row[4 + l - r] + row[4 + l + r]);
        lap[l] += w.wy[r] * (bfp_lane(up, l) + bfp_lane(down, l));
        lap[l] += w.wz[r] * (bfp_lane(queue[kHalo - r], l) + bfp_lane(queue[kHalo + r], l));
      }
    }

    float4 e = zero;
    if (kDamped && cells_inside) {
      const float e_yz = e_y + damp_z[k]; // the reference's order: e_x + (e_y + e_z)
      e = make_float4(e_x.x + e_yz, e_x.y + e_yz, e_x.z + e_yz, e_x.w + e_yz);
    }
    const float next[4] = {advance_cell<kDamped>(row[4], p_prev.x, v.x, lap[0], e.x),
                           advance_cell<kDamped>(row[5], p_prev.y, v.y, lap[1], e.y),
                           advance_cell<kDamped>(row[6], p_prev.z, v.z, lap[2], e.z),
                           advance_cell<kDamped>(row[7], p_prev.w, v.w, lap[3], e.w)};
    // The block's exponent from its interior cells only (every lane takes part in the shuffles).
    uint32_t m = 0;
#pragma unroll
    for (int l = 0; l < 4; ++l)
      if (l <= last_lane) m = max(m, bfp16::magnitude_bits(next[l]));
    const int block_e = bfp16_block_exponent_4_lanes(m);
    if (cells_inside) {
      int16_t q[4];
#pragma unroll
      for (int l = 0; l < 4; ++l) q[l] = bfp16::encode(next[l], block_e);
      const int64_t at = cell_index + k * plane;
      if (x + 4 <= g.nx) {
        *reinterpret_cast<uint2*>(p_prev_next + at) = bfp16_pack(q[0], q[1], q[2], q[3]);
      } else {
        // The row's last cells: write only the interior ones (halo mantissas stay zero).
#pragma unroll
        for (int l = 0; l < 4; ++l)
          if (l <= last_lane) p_prev_next[at + l] = q[l];
      }
      if ((tx & 3) == 0) e_prev_next[at >> 4] = int8_t(block_e);
    }

    if constexpr (kDepth == 1) {
      current = incoming;
    } else {
      current = pending[0];
#pragma unroll
      for (int s = 0; s + 2 < kDepth; ++s) pending[s] = pending[s + 1];
      pending[kDepth - 2] = incoming;
    }
#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d) queue[d] = queue[d + 1];
    queue[kQueue - 1] = bfp16_unpack(current.front);
  }
}

template <bool kDamped, bool kModel16>
void launch(const WaveStepArgs& a, cudaStream_t stream, const char* name) {
  // fp16_storage's shape (16x16 threads, 64x16 cells, 2 blocks per SM, loads 3 planes ahead):
  // the loads in flight cost about as many registers as half's (8 bytes + a byte per 4 cells).
  constexpr int kBX = 16, kBY = 16, kMinBlocks = 2, kDepth = 3, kMinChunk = 32;
  const auto kernel = bfp16_kernel<kBX, kBY, kMinBlocks, kDepth, kDamped, kModel16>;
  static const int resident_per_sm = blocks_per_sm(kernel, kBX * kBY);
  const GridLayout& g = a.layout;
  const int blocks_x = (g.nx + 4 * kBX - 1) / (4 * kBX), blocks_y = (g.ny + kBY - 1) / kBY;
  const int chunks = choose_z_chunks(int64_t(blocks_x) * blocks_y, resident_per_sm * a.sm_count,
                                     g.nz, kMinChunk);
  const int chunk = (g.nz + chunks - 1) / chunks;
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  kernel<<<grid, dim3(kBX, kBY), 0, stream>>>(
      g, a.weights, static_cast<const int16_t*>(a.p_cur), a.p_cur_exponents,
      static_cast<int16_t*>(a.p_prev_next), a.p_prev_next_exponents,
      a.v2dt2, a.v2dt2_exponents, a.damp_x, a.damp_y, a.damp_z, chunk);
  CUDA_CHECK_LAUNCH(name);
}

} // namespace

void launch_bfp16(const WaveStepArgs& a, cudaStream_t stream) {
  if (!a.p_cur_exponents || !a.p_prev_next_exponents)
    throw std::logic_error("bfp16: the step needs the exponents of both wavefields");
  if (a.damped())
    launch<true, false>(a, stream, "bfp16 (damped)");
  else
    launch<false, false>(a, stream, "bfp16");
}

// bfp16_model16: the same kernel reading v2dt2 as unsigned 16-bit block floating point (8.25
// bytes per cell instead of 10.19).
void launch_bfp16_model16(const WaveStepArgs& a, cudaStream_t stream) {
  if (!a.p_cur_exponents || !a.p_prev_next_exponents || !a.v2dt2_exponents)
    throw std::logic_error("bfp16_model16: the step needs the exponents of both wavefields and v2dt2");
  if (a.damped())
    launch<true, true>(a, stream, "bfp16_model16 (damped)");
  else
    launch<false, true>(a, stream, "bfp16_model16");
}

} // namespace rtm::cuda
