// The 2.5D register-queue kernel, shared by regqueue_vec4.cu (float storage) and
// fp16_storage.cu (half storage, float arithmetic).
//
// Each thread owns 4 consecutive cells of one row and marches along z; the block's threads form
// a tile of (4 kBX) x kBY cells. Per plane k:
//   - the 9 z-values p(k-4..k+4) of the thread's 4 cells live in a register queue (9 float4);
//   - the plane-k values of the tile, with 4-cell halos, are written to a shared tile (the
//     interior from the queue's centre, the halos from registers loaded kDepth planes earlier), so
//     the x and y neighbours come from shared memory;
//   - every global access is 4 cells wide (16 bytes for float, 8 for half), and the loads of
//     plane k + kDepth (queue front, halos, p[n-1], v2dt2) are issued right after plane k's
//     barrier, so kDepth planes' worth of loads are in flight while the arithmetic runs.
// Device-memory traffic per cell is the ideal 4 arrays x sizeof(T) plus the tile halos (mostly L2
// hits: the neighbouring tiles read the same lines at the same time) and, per z-chunk, the 4
// planes below and above it that its queue needs.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/plane_stencil.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {

// Loads and stores of 4 consecutive cells, whatever the storage type. Loads return the raw
// storage vector (Raw: float4, or uint2 holding 4 halves) so that data in flight costs registers
// at its storage width; unpack() turns it into a float4 where it is used.
template <class T> struct Vec4Io;

template <> struct Vec4Io<float> {
  using Raw = float4;
  static __device__ __forceinline__ Raw zero() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
  // Through the read-only path; p[n] lines are read again by the neighbouring tiles.
  static __device__ __forceinline__ Raw load(const float* p) {
    return __ldg(reinterpret_cast<const float4*>(p));
  }
  // Read once per step: marked evict-first so they do not push p[n] out of L2.
  static __device__ __forceinline__ Raw load_once(const float* p) {
    return __ldcs(reinterpret_cast<const float4*>(p));
  }
  static __device__ __forceinline__ float4 unpack(Raw raw) { return raw; }
  static __device__ __forceinline__ void store(float* p, float4 v) {
    *reinterpret_cast<float4*>(p) = v;
  }
  static __device__ __forceinline__ void store_one(float* p, float v) { *p = v; }
};

template <> struct Vec4Io<__half> {
  using Raw = uint2;
  static __device__ __forceinline__ Raw zero() { return make_uint2(0u, 0u); } // +0.0 halves
  static __device__ __forceinline__ Raw load(const __half* p) {
    return __ldg(reinterpret_cast<const uint2*>(p));
  }
  static __device__ __forceinline__ Raw load_once(const __half* p) {
    return __ldcs(reinterpret_cast<const uint2*>(p));
  }
  static __device__ __forceinline__ float4 unpack(Raw raw) {
    const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
    const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
  static __device__ __forceinline__ void store(__half* p, float4 v) {
    const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
    uint2 raw;
    raw.x = *reinterpret_cast<const unsigned*>(&lo);
    raw.y = *reinterpret_cast<const unsigned*>(&hi);
    *reinterpret_cast<uint2*>(p) = raw;
  }
  static __device__ __forceinline__ void store_one(__half* p, float v) { *p = __float2half_rn(v); }
};

// Everything one plane k needs from global memory besides the queue: the halo pieces, p[n-1]
// and v2dt2 of its 4 cells, and the queue's new front p(k + 4).
template <class Raw, int kJobs> struct PlaneLoads {
  Raw front;
  Raw halo[kJobs];
  Raw p_prev;
  Raw v2dt2;
};

__device__ __forceinline__ float lane(const float4& v, int l) {
  return l == 0 ? v.x : l == 1 ? v.y : l == 2 ? v.z : v.w; // l is a compile-time constant
}

// The update of a thread's 4 cells (advance_cell) from plane_laplacian's x window and Laplacians;
// the damping is summed in the reference's order, e_x + (e_y + e_z). Shared with tma_ring.cuh.
template <bool kDamped>
__device__ __forceinline__ float4 advance_four(const float (&row)[kRowWindow<4>], float4 p_prev,
                                               float4 v, const float (&lap)[4], float4 e_x,
                                               float e_y, const float* damp_z, int k) {
  float4 e = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (kDamped) {
    const float e_yz = e_y + damp_z[k];
    e = make_float4(e_x.x + e_yz, e_x.y + e_yz, e_x.z + e_yz, e_x.w + e_yz);
  }
  return make_float4(advance_cell<kDamped>(row[kHalo], p_prev.x, v.x, lap[0], e.x),
                     advance_cell<kDamped>(row[kHalo + 1], p_prev.y, v.y, lap[1], e.y),
                     advance_cell<kDamped>(row[kHalo + 2], p_prev.z, v.z, lap[2], e.z),
                     advance_cell<kDamped>(row[kHalo + 3], p_prev.w, v.w, lap[3], e.w));
}

template <class T, int kBX, int kBY, int kMinBlocks, int kDepth, bool kDamped>
__global__ void __launch_bounds__(kBX* kBY, kMinBlocks)
    register_queue_kernel(const GridLayout g, const LaplacianWeights w, const T* __restrict__ p_cur,
                          T* __restrict__ p_prev_next, const T* __restrict__ v2dt2,
                          const float* __restrict__ damp_x, const float* __restrict__ damp_y,
                          const float* __restrict__ damp_z, int chunk) {
  using Io = Vec4Io<T>;
  constexpr int kThreads = kBX * kBY;
  constexpr int kTileX = 4 * kBX, kTileY = kBY;          // cells per block and plane
  constexpr int kRowFloats = kTileX + 2 * kHalo;          // a shared row with its x halos
  constexpr int kRows = kTileY + 2 * kHalo;
  constexpr int kXHaloJobs = 2 * kTileY;                   // 4 cells left and right of each row
  constexpr int kYHaloJobs = 2 * kHalo * (kTileX / 4);     // 4 rows above and below, 4 cells a job
  constexpr int kHaloJobs = kXHaloJobs + kYHaloJobs;
  constexpr int kJobsPerThread = (kHaloJobs + kThreads - 1) / kThreads;
  constexpr int kQueue = 2 * kHalo + 1;
  __shared__ __align__(16) float tile[2][kRows * kRowFloats];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + 4 * tx, j = y0 + ty; // this thread's cells: (x .. x+3, j)
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int64_t plane = g.plane;

  // The thread's column of p[n]: readable wherever the 4 cells lie inside the padded grid (its
  // halo cells are the neighbours of interior cells in other threads).
  const bool column_readable = x < g.nx + kHalo && j < g.ny + kHalo;
  const T* column = p_cur + (column_readable ? g.index(x, j, 0) : 0);
  // p[n-1], v2dt2 and the output: only where at least one of the 4 cells is interior.
  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;
  T* out = p_prev_next + cell_index;
  const T* v_column = v2dt2 + cell_index;

  // Halo jobs: each moves 4 cells of p[n] from global memory to the shared tile, every plane.
  const T* halo_src[kJobsPerThread];
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
      const int rr = u / (kTileX / 4), c4 = u % (kTileX / 4); // rr 0..3 above, 4..7 below
      gy = rr < kHalo ? y0 - kHalo + rr : y0 + kTileY + rr - kHalo;
      const int shared_row = rr < kHalo ? rr : kTileY + rr;
      gx = x0 + 4 * c4;
      dst = shared_row * kRowFloats + kHalo + 4 * c4;
    }
    halo_valid[h] = job < kHaloJobs && gx < g.nx + kHalo && gy < g.ny + kHalo;
    halo_src[h] = p_cur + (halo_valid[h] ? g.index(gx, gy, 0) : 0);
    halo_dst[h] = dst;
  }

  using Raw = typename Io::Raw;
  using Loads = PlaneLoads<Raw, kJobsPerThread>;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  // The loads of plane kp (nothing, zeros, for planes past the chunk).
  auto request = [&](int kp) {
    Loads l;
    const bool in_chunk = kp < k_end;
    l.front = in_chunk && column_readable ? Io::load(column + (kp + kHalo) * plane) : Io::zero();
#pragma unroll
    for (int h = 0; h < kJobsPerThread; ++h)
      l.halo[h] = in_chunk && halo_valid[h] ? Io::load(halo_src[h] + kp * plane) : Io::zero();
    l.p_prev = in_chunk && cells_inside ? Io::load_once(out + kp * plane) : Io::zero();
    l.v2dt2 = in_chunk && cells_inside ? Io::load_once(v_column + kp * plane) : Io::zero();
    return l;
  };

  // Prologue: queue[d] = p(k_begin - 4 + d); `current` holds plane k_begin's loads (its front is
  // plane k_begin + 4, the queue's last entry), `pending` planes k_begin+1 .. k_begin+kDepth-1.
  float4 queue[kQueue];
#pragma unroll
  for (int d = 0; d < kQueue - 1; ++d)
    queue[d] = column_readable ? Io::unpack(Io::load(column + (k_begin - kHalo + d) * plane)) : zero;
  Loads current = request(k_begin);
  queue[kQueue - 1] = Io::unpack(current.front);
  Loads pending[kDepth > 1 ? kDepth - 1 : 1];
#pragma unroll
  for (int s = 0; s + 1 < kDepth; ++s) pending[s] = request(k_begin + 1 + s);

  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;

  for (int k = k_begin; k < k_end; ++k) {
    float* buf = tile[(k - k_begin) & 1];
    float* centre = buf + (ty + kHalo) * kRowFloats + kHalo + 4 * tx;
    *reinterpret_cast<float4*>(centre) = queue[kHalo];
#pragma unroll
    for (int h = 0; h < kJobsPerThread; ++h)
      if (tid + h * kThreads < kHaloJobs)
        *reinterpret_cast<float4*>(buf + halo_dst[h]) = Io::unpack(current.halo[h]);
    // One barrier per plane: the tile is double-buffered, so the buffer written here was last
    // read two planes ago, before everyone passed the previous barrier.
    __syncthreads();

    // Plane k + kDepth's loads, in flight during this plane's (and the next ones') arithmetic.
    const Loads incoming = request(k + kDepth);
    const float4 p_prev = Io::unpack(current.p_prev);
    const float4 v = Io::unpack(current.v2dt2);

    float row[kRowWindow<4>], lap[4];
    plane_laplacian<4, kRowFloats>(w, centre, [&](int d, int l) { return lane(queue[d], l); }, row,
                                   lap);

    if (cells_inside) {
      const float4 next = advance_four<kDamped>(row, p_prev, v, lap, e_x, e_y, damp_z, k);
      T* dst = out + k * plane;
      if (x + 4 <= g.nx) {
        Io::store(dst, next);
      } else {
        // The row's last cells: write only the interior ones (halo cells are never written).
#pragma unroll
        for (int l = 0; l < 4; ++l)
          if (x + l < g.nx) Io::store_one(dst + l, lane(next, l));
      }
    }

    // Advance to plane k + 1: its loads become current, its front enters the queue.
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
    queue[kQueue - 1] = Io::unpack(current.front);
  }
}

// Launches register_queue_kernel over z-chunks sized so that the grid fills about four rounds of
// resident blocks.
template <class T, int kBX, int kBY, int kMinBlocks, int kDepth, bool kDamped>
void launch_register_queue(const WaveStepArgs& a, cudaStream_t stream, const char* name) {
  constexpr int kMinChunk = 32; // each chunk re-reads 8 planes to fill its queue
  const auto kernel = register_queue_kernel<T, kBX, kBY, kMinBlocks, kDepth, kDamped>;
  static const int resident_per_sm = blocks_per_sm(kernel, kBX * kBY);
  const GridLayout& g = a.layout;
  const int blocks_x = (g.nx + 4 * kBX - 1) / (4 * kBX), blocks_y = (g.ny + kBY - 1) / kBY;
  const int chunks = choose_z_chunks(int64_t(blocks_x) * blocks_y, resident_per_sm * a.sm_count,
                                     g.nz, kMinChunk);
  const int chunk = (g.nz + chunks - 1) / chunks;
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  kernel<<<grid, dim3(kBX, kBY), 0, stream>>>(
      g, a.weights, static_cast<const T*>(a.p_cur), static_cast<T*>(a.p_prev_next),
      static_cast<const T*>(a.v2dt2), a.damp_x, a.damp_y, a.damp_z, chunk);
  CUDA_CHECK_LAUNCH(name);
}

} // namespace rtm::cuda
