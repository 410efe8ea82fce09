// The fused backward step (kernels/cuda/fused_backward.cuh): register_queue_kernel
// (register_queue.cuh) with two fields. Each thread owns 4 consecutive cells of one row of both
// fields and marches along z with a register queue per field; per plane the x-y neighbours of
// both fields come from shared tiles. What one cell computes, and in which order, is
// register_queue_kernel's, so the fused and the separate steps round alike.
//
// Bytes per cell and step pair: p[n], p[n-1], p[n+1] of each field and v2dt2 once, 28 B against
// the separate steps' 32 B; on an imaging step the image and the illumination (16 B per box cell)
// against the separate imaging's 24 B (it reads S and R again). Two queues take twice the
// registers, so the tile is 64x8 cells (16x8 threads) with loads one plane ahead, not two.
#include "kernels/cuda/fused_backward.cuh"

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/register_queue.cuh"

namespace rtm::cuda {

void launch_regqueue_vec4(const WaveStepArgs& a, cudaStream_t stream); // regqueue_vec4.cu

namespace {

// Everything one plane k needs besides the queues: per field the halo pieces, p[n-1] and the
// queue's new front p(k + 4); v2dt2 once.
template <int kJobs> struct TwoFieldLoads {
  float4 front[2];
  float4 halo[2][kJobs];
  float4 p_prev[2];
  float4 v2dt2;
};

// Field 0 is the source field S, field 1 the receiver field R.
template <int kBX, int kBY, int kMinBlocks, bool kDamped, bool kImage>
__global__ void __launch_bounds__(kBX* kBY, kMinBlocks)
    fused_backward_kernel(const GridLayout g, const LaplacianWeights w,
                          const float* __restrict__ s_cur, float* __restrict__ s_prev_next,
                          const float* __restrict__ r_cur, float* __restrict__ r_prev_next,
                          const float* __restrict__ v2dt2, const float* __restrict__ damp_x,
                          const float* __restrict__ damp_y, const float* __restrict__ damp_z,
                          int chunk, const Box b, float weight, float* __restrict__ image,
                          float* __restrict__ illumination) {
  using Io = Vec4Io<float>;
  constexpr int kThreads = kBX * kBY;
  constexpr int kTileX = 4 * kBX, kTileY = kBY;
  constexpr int kRowFloats = kTileX + 2 * kHalo;
  constexpr int kRows = kTileY + 2 * kHalo;
  constexpr int kXHaloJobs = 2 * kTileY;
  constexpr int kYHaloJobs = 2 * kHalo * (kTileX / 4);
  constexpr int kHaloJobs = kXHaloJobs + kYHaloJobs;
  constexpr int kJobsPerThread = (kHaloJobs + kThreads - 1) / kThreads;
  constexpr int kQueue = 2 * kHalo + 1;
  __shared__ __align__(16) float tile[2][2][kRows * kRowFloats]; // [field][buffer]

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + 4 * tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int64_t plane = g.plane;

  const float* cur[2] = {s_cur, r_cur};
  float* prev_next[2] = {s_prev_next, r_prev_next};

  const bool column_readable = x < g.nx + kHalo && j < g.ny + kHalo;
  const int64_t column_index = column_readable ? g.index(x, j, 0) : 0;
  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;
  const float* v_column = v2dt2 + cell_index;

  // The image's row of these cells: dense [z][y][x] over the box (x relative to b.x0).
  const int box_nx = b.x1 - b.x0, box_ny = b.y1 - b.y0;
  const bool row_in_box = kImage && cells_inside && j >= b.y0 && j < b.y1;

  int64_t halo_offset[kJobsPerThread];
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
    halo_offset[h] = halo_valid[h] ? g.index(gx, gy, 0) : 0;
    halo_dst[h] = dst;
  }

  using Loads = TwoFieldLoads<kJobsPerThread>;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  auto request = [&](int kp) {
    Loads l;
    const bool in_chunk = kp < k_end;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      l.front[f] = in_chunk && column_readable
                       ? Io::load(cur[f] + column_index + (kp + kHalo) * plane)
                       : zero;
#pragma unroll
      for (int h = 0; h < kJobsPerThread; ++h)
        l.halo[f][h] = in_chunk && halo_valid[h] ? Io::load(cur[f] + halo_offset[h] + kp * plane)
                                                 : zero;
      l.p_prev[f] = in_chunk && cells_inside
                        ? Io::load_once(prev_next[f] + cell_index + kp * plane)
                        : zero;
    }
    l.v2dt2 = in_chunk && cells_inside ? Io::load_once(v_column + kp * plane) : zero;
    return l;
  };

  float4 queue[2][kQueue];
#pragma unroll
  for (int f = 0; f < 2; ++f)
#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d)
      queue[f][d] = column_readable
                        ? Io::load(cur[f] + column_index + (k_begin - kHalo + d) * plane)
                        : zero;
  Loads current = request(k_begin);
#pragma unroll
  for (int f = 0; f < 2; ++f) queue[f][kQueue - 1] = current.front[f];

  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;

  for (int k = k_begin; k < k_end; ++k) {
    const int buffer = (k - k_begin) & 1;
    const int centre_offset = (ty + kHalo) * kRowFloats + kHalo + 4 * tx;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      float* buf = tile[f][buffer];
      *reinterpret_cast<float4*>(buf + centre_offset) = queue[f][kHalo];
#pragma unroll
      for (int h = 0; h < kJobsPerThread; ++h)
        if (tid + h * kThreads < kHaloJobs)
          *reinterpret_cast<float4*>(buf + halo_dst[h]) = current.halo[f][h];
    }
    __syncthreads(); // double-buffered tiles: one barrier per plane, as register_queue_kernel

    const Loads incoming = request(k + 1);
    const float4 v = current.v2dt2;
    float4 e = zero;
    if (kDamped) {
      const float e_yz = e_y + damp_z[k]; // the reference's order: e_x + (e_y + e_z)
      e = make_float4(e_x.x + e_yz, e_x.y + e_yz, e_x.z + e_yz, e_x.w + e_yz);
    }

#pragma unroll
    for (int f = 0; f < 2; ++f) {
      const float* centre = tile[f][buffer] + centre_offset;
      float row[12];
      {
        const float4 left = *reinterpret_cast<const float4*>(centre - 4);
        const float4 mid = *reinterpret_cast<const float4*>(centre);
        const float4 right = *reinterpret_cast<const float4*>(centre + 4);
#pragma unroll
        for (int l = 0; l < 4; ++l) {
          row[l] = lane(left, l);
          row[4 + l] = lane(mid, l);
          row[8 + l] = lane(right, l);
        }
      }
      // register_queue_kernel's sums, term for term.
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
          lap[l] += w.wy[r] * (lane(up, l) + lane(down, l));
          lap[l] += w.wz[r] * (lane(queue[f][kHalo - r], l) + lane(queue[f][kHalo + r], l));
        }
      }
      if (cells_inside) {
        const float4 p_prev = current.p_prev[f];
        const float4 next = make_float4(
            advance_cell<kDamped>(row[4], p_prev.x, v.x, lap[0], e.x),
            advance_cell<kDamped>(row[5], p_prev.y, v.y, lap[1], e.y),
            advance_cell<kDamped>(row[6], p_prev.z, v.z, lap[2], e.z),
            advance_cell<kDamped>(row[7], p_prev.w, v.w, lap[3], e.w));
        float* dst = prev_next[f] + cell_index + k * plane;
        if (x + 4 <= g.nx) {
          Io::store(dst, next);
        } else {
#pragma unroll
          for (int l = 0; l < 4; ++l)
            if (x + l < g.nx) Io::store_one(dst + l, lane(next, l));
        }
      }
    }

    // The imaging condition of S[n] (queue 0's centre) and R[n+1] (queue 1's), in
    // accumulate_image_kernel's operations (rtm_ops.cu): rounded one at a time.
    if (kImage && row_in_box && k >= b.z0 && k < b.z1) {
      const int64_t dense_row = (int64_t(k - b.z0) * box_ny + (j - b.y0)) * box_nx - b.x0;
#pragma unroll
      for (int l = 0; l < 4; ++l) {
        const int i = x + l;
        if (i >= b.x0 && i < b.x1) {
          const float sv = lane(queue[0][kHalo], l);
          const float weighted = __fmul_rn(weight, sv);
          const int64_t d = dense_row + i;
          image[d] = __fadd_rn(image[d], __fmul_rn(weighted, lane(queue[1][kHalo], l)));
          illumination[d] = __fadd_rn(illumination[d], __fmul_rn(weighted, sv));
        }
      }
    }

    current = incoming;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
#pragma unroll
      for (int d = 0; d < kQueue - 1; ++d) queue[f][d] = queue[f][d + 1];
      queue[f][kQueue - 1] = current.front[f];
    }
  }
}

template <bool kDamped, bool kImage>
void launch(const FusedBackwardArgs& a, cudaStream_t stream) {
  constexpr int kBX = 16, kBY = 8, kMinBlocks = 2;
  constexpr int kMinChunk = 32; // as launch_register_queue: each chunk re-reads 8 planes
  const auto kernel = fused_backward_kernel<kBX, kBY, kMinBlocks, kDamped, kImage>;
  static const int resident_per_sm = blocks_per_sm(kernel, kBX * kBY);
  const WaveStepArgs& s = a.source;
  const GridLayout& g = s.layout;
  const int blocks_x = (g.nx + 4 * kBX - 1) / (4 * kBX), blocks_y = (g.ny + kBY - 1) / kBY;
  const int chunks = choose_z_chunks(int64_t(blocks_x) * blocks_y, resident_per_sm * s.sm_count,
                                     g.nz, kMinChunk);
  const int chunk = (g.nz + chunks - 1) / chunks;
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  kernel<<<grid, dim3(kBX, kBY), 0, stream>>>(
      g, s.weights, static_cast<const float*>(s.p_cur), static_cast<float*>(s.p_prev_next),
      static_cast<const float*>(a.receiver_cur), static_cast<float*>(a.receiver_prev_next),
      static_cast<const float*>(s.v2dt2), s.damp_x, s.damp_y, s.damp_z, chunk, a.box, a.weight,
      a.image, a.illumination);
  CUDA_CHECK_LAUNCH("fused_backward_kernel");
}

} // namespace

bool has_fused_backward(const VariantRow& row) {
  return row.storage == Storage::fp32 && row.launch == &launch_regqueue_vec4;
}

void launch_fused_backward(const FusedBackwardArgs& a, cudaStream_t stream) {
  const bool image = a.image != nullptr && a.weight > 0;
  if (a.source.damped()) {
    if (image) launch<true, true>(a, stream);
    else launch<true, false>(a, stream);
  } else {
    if (image) launch<false, true>(a, stream);
    else launch<false, false>(a, stream);
  }
}

} // namespace rtm::cuda
