// The fused backward step (kernels/cuda/steps/fused_backward.cuh) of regqueue_vec4, and the choice of
// the fused kernel by variant (tma_ring's is in fused_backward_tma.cu). Here: register_queue_kernel
// (register_queue.cuh) with two fields. Each thread owns kC consecutive cells of one row of both
// fields and marches along z with a register queue per field; per plane the x-y neighbours of
// both fields come from shared tiles. What one cell computes, and in which order, is
// register_queue_kernel's, so the fused and the separate steps round alike.
//
// Bytes per cell and step pair: p[n], p[n-1], p[n+1] of each field and v2dt2 once, 28 B against
// the separate steps' 32 B; on an imaging step the image and the illumination (16 B per box cell)
// against the separate imaging's 24 B (it reads S and R again). Two queues of 4 cells would take
// ~190 registers (measured with -Xptxas -v: 8 warps per SM); with 2 cells per thread (8-byte
// accesses) the two queues take what regqueue_vec4's one takes, 64x8-cell tiles of 32x8 threads,
// loads one plane ahead (regqueue_vec4: two; docs/tuning-log.md section 2 found depth 1 as fast).
#include "kernels/cuda/steps/fused_backward.cuh"

#include <stdexcept>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/plane_stencil.cuh"

namespace rtm::cuda {

void launch_regqueue_vec4(const WaveStepArgs& a, cudaStream_t stream); // regqueue_vec4.cu
void launch_tma_ring(const WaveStepArgs& a, cudaStream_t stream);      // tma_ring.cu
void launch_fused_backward_tma_ring(const FusedBackwardArgs& a,
                                    cudaStream_t stream); // fused_backward_tma.cu

namespace {

// kC consecutive floats of one row, in registers (kC = 2: one 8-byte access; a CellIo<4> of
// float4 accesses would give the 4-cell layout of register_queue_kernel).
template <int kC> struct Cells {
  float v[kC];
};
template <int kC> struct CellIo;
template <> struct CellIo<2> {
  using Raw = float2;
  static __device__ __forceinline__ Cells<2> load(const float* p) { // read-only path, as Vec4Io
    return from(__ldg(reinterpret_cast<const float2*>(p)));
  }
  static __device__ __forceinline__ Cells<2> load_once(const float* p) { // evict-first
    return from(__ldcs(reinterpret_cast<const float2*>(p)));
  }
  static __device__ __forceinline__ void store(float* p, const Cells<2>& c) {
    *reinterpret_cast<float2*>(p) = make_float2(c.v[0], c.v[1]);
  }
  static __device__ __forceinline__ Cells<2> from(float2 t) { return {{t.x, t.y}}; }
};
template <int kC> __device__ __forceinline__ Cells<kC> zero_cells() {
  Cells<kC> c;
#pragma unroll
  for (int l = 0; l < kC; ++l) c.v[l] = 0.0f;
  return c;
}

// Everything one plane k needs besides the queues: per field the halo pieces, p[n-1] and the
// queue's new front p(k + 4); v2dt2 once.
template <int kC, int kJobs> struct TwoFieldLoads {
  Cells<kC> front[2];
  Cells<kC> halo[2][kJobs];
  Cells<kC> p_prev[2];
  Cells<kC> v2dt2;
};

// Field 0 is the source field S, field 1 the receiver field R. Each thread owns kC consecutive
// cells of one row; the block's tile is (kC kBX) x kBY cells.
template <int kC, int kBX, int kBY, int kMinBlocks, bool kDamped, bool kImage>
__global__ void __launch_bounds__(kBX* kBY, kMinBlocks)
    fused_backward_kernel(const GridLayout g, const LaplacianWeights w,
                          const float* __restrict__ s_cur, float* __restrict__ s_prev_next,
                          const float* __restrict__ r_cur, float* __restrict__ r_prev_next,
                          const float* __restrict__ v2dt2, const float* __restrict__ damp_x,
                          const float* __restrict__ damp_y, const float* __restrict__ damp_z,
                          int chunk, const Box b, float weight, float* __restrict__ image,
                          float* __restrict__ illumination) {
  using Io = CellIo<kC>;
  static_assert(kHalo % kC == 0, "x halos are whole jobs of kC cells");
  constexpr int kThreads = kBX * kBY;
  constexpr int kTileX = kC * kBX, kTileY = kBY;
  constexpr int kRowFloats = kTileX + 2 * kHalo;
  constexpr int kRows = kTileY + 2 * kHalo;
  constexpr int kSideJobs = kHalo / kC;                    // jobs per row and side
  constexpr int kXHaloJobs = 2 * kSideJobs * kTileY;       // kHalo cells left and right of each row
  constexpr int kYHaloJobs = 2 * kHalo * (kTileX / kC);    // kHalo rows above and below
  constexpr int kHaloJobs = kXHaloJobs + kYHaloJobs;
  constexpr int kJobsPerThread = (kHaloJobs + kThreads - 1) / kThreads;
  constexpr int kQueue = 2 * kHalo + 1;
  __shared__ __align__(16) float tile[2][2][kRows * kRowFloats]; // [field][buffer]

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + kC * tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int64_t plane = g.plane;

  const float* cur[2] = {s_cur, r_cur};
  float* prev_next[2] = {s_prev_next, r_prev_next};

  // As register_queue_kernel: the column is readable where the cells lie inside the padded grid;
  // p[n-1], v2dt2 and the output where at least one cell is interior.
  const bool column_readable = x < g.nx + kHalo && j < g.ny + kHalo;
  const int64_t column_index = column_readable ? g.index(x, j, 0) : 0;
  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;

  // The image's row of these cells: dense [z][y][x] over the box.
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
      const int r = job / (2 * kSideJobs), side_job = job % (2 * kSideJobs);
      const int right = side_job / kSideJobs, piece = side_job % kSideJobs;
      gx = (right ? x0 + kTileX : x0 - kHalo) + kC * piece;
      gy = y0 + r;
      dst = (r + kHalo) * kRowFloats + (right ? kTileX + kHalo : 0) + kC * piece;
    } else {
      const int u = job - kXHaloJobs;
      const int rr = u / (kTileX / kC), piece = u % (kTileX / kC); // rr 0..3 above, 4..7 below
      gy = rr < kHalo ? y0 - kHalo + rr : y0 + kTileY + rr - kHalo;
      const int shared_row = rr < kHalo ? rr : kTileY + rr;
      gx = x0 + kC * piece;
      dst = shared_row * kRowFloats + kHalo + kC * piece;
    }
    halo_valid[h] = job < kHaloJobs && gx < g.nx + kHalo && gy < g.ny + kHalo;
    halo_offset[h] = halo_valid[h] ? g.index(gx, gy, 0) : 0;
    halo_dst[h] = dst;
  }

  using Loads = TwoFieldLoads<kC, kJobsPerThread>;
  const Cells<kC> zero = zero_cells<kC>();
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
    l.v2dt2 = in_chunk && cells_inside ? Io::load_once(v2dt2 + cell_index + kp * plane) : zero;
    return l;
  };

  Cells<kC> queue[2][kQueue];
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

  Cells<kC> e_x = zero;
  if (kDamped && cells_inside)
#pragma unroll
    for (int l = 0; l < kC; ++l) e_x.v[l] = damp_x[x + l];
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;

  for (int k = k_begin; k < k_end; ++k) {
    const int buffer = (k - k_begin) & 1;
    const int centre_offset = (ty + kHalo) * kRowFloats + kHalo + kC * tx;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      float* buf = tile[f][buffer];
      Io::store(buf + centre_offset, queue[f][kHalo]);
#pragma unroll
      for (int h = 0; h < kJobsPerThread; ++h)
        if (tid + h * kThreads < kHaloJobs) Io::store(buf + halo_dst[h], current.halo[f][h]);
    }
    __syncthreads(); // double-buffered tiles: one barrier per plane, as register_queue_kernel

    const Loads incoming = request(k + 1);
    const Cells<kC> v = current.v2dt2;
    Cells<kC> e = zero;
    if (kDamped) {
      const float e_yz = e_y + damp_z[k]; // the reference's order: e_x + (e_y + e_z)
#pragma unroll
      for (int l = 0; l < kC; ++l) e.v[l] = e_x.v[l] + e_yz;
    }

#pragma unroll
    for (int f = 0; f < 2; ++f) {
      // register_queue_kernel's sums, term for term (plane_stencil.cuh).
      float row[kRowWindow<kC>], lap[kC];
      plane_laplacian<kC, kRowFloats>(
          w, tile[f][buffer] + centre_offset, [&](int d, int l) { return queue[f][d].v[l]; }, row,
          lap);
      if (cells_inside) {
        Cells<kC> next;
#pragma unroll
        for (int l = 0; l < kC; ++l)
          next.v[l] = advance_cell<kDamped>(row[kHalo + l], current.p_prev[f].v[l], v.v[l], lap[l],
                                            e.v[l]);
        float* dst = prev_next[f] + cell_index + k * plane;
        if (x + kC <= g.nx) {
          Io::store(dst, next);
        } else {
          // The row's last cells: only the interior ones (halo cells are never written).
#pragma unroll
          for (int l = 0; l < kC; ++l)
            if (x + l < g.nx) dst[l] = next.v[l];
        }
      }
    }

    // The imaging condition of S[n] (queue 0's centre) and R[n+1] (queue 1's), in
    // accumulate_image_kernel's operations (rtm_ops.cu): rounded one at a time.
    if (kImage && row_in_box && k >= b.z0 && k < b.z1) {
      const int64_t dense_row = (int64_t(k - b.z0) * box_ny + (j - b.y0)) * box_nx - b.x0;
#pragma unroll
      for (int l = 0; l < kC; ++l) {
        const int i = x + l;
        if (i >= b.x0 && i < b.x1) {
          const float sv = queue[0][kHalo].v[l];
          const float weighted = __fmul_rn(weight, sv);
          const int64_t d = dense_row + i;
          image[d] = __fadd_rn(image[d], __fmul_rn(weighted, queue[1][kHalo].v[l]));
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
  constexpr int kC = 2, kBX = 32, kBY = 8, kMinBlocks = 2;
  constexpr int kMinChunk = 32; // as launch_register_queue: each chunk re-reads 8 planes
  const auto kernel = fused_backward_kernel<kC, kBX, kBY, kMinBlocks, kDamped, kImage>;
  static const int resident_per_sm = blocks_per_sm(kernel, kBX * kBY);
  const WaveStepArgs& s = a.source;
  const GridLayout& g = s.layout;
  const int blocks_x = (g.nx + kC * kBX - 1) / (kC * kBX), blocks_y = (g.ny + kBY - 1) / kBY;
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

void launch_fused_backward_regqueue_vec4(const FusedBackwardArgs& a, cudaStream_t stream) {
  const bool image = a.image != nullptr && a.weight > 0;
  if (a.source.damped()) {
    if (image) launch<true, true>(a, stream);
    else launch<true, false>(a, stream);
  } else {
    if (image) launch<false, true>(a, stream);
    else launch<false, false>(a, stream);
  }
}

using FusedLauncher = void (*)(const FusedBackwardArgs& a, cudaStream_t stream);

// The fused step of a step kernel, or null. By launcher, not by name: the presets of a row
// (compressible, l2_persist) run its kernel, and so its fused step.
FusedLauncher fused_launcher(StepLauncher step) {
  if (step == &launch_regqueue_vec4) return &launch_fused_backward_regqueue_vec4;
  if (step == &launch_tma_ring) return &launch_fused_backward_tma_ring;
  return nullptr;
}

} // namespace

bool has_fused_backward(const VariantRow& row) {
  return row.storage == Storage::fp32 && fused_launcher(row.launch) != nullptr;
}

void launch_fused_backward(const FusedBackwardArgs& a, cudaStream_t stream) {
  const FusedLauncher fused = fused_launcher(a.variant_step);
  if (!fused) throw std::logic_error("launch_fused_backward: the fields' kernel has no fused step");
  fused(a, stream);
}

} // namespace rtm::cuda
