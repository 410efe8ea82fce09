// The fused backward step on tma_ring's bulk-copy ring (kernels/cuda/steps/fused_backward.cuh; the
// kernel tma_ring.cuh describes, with two fields): the source field S and the receiver field R step
// in one kernel, v2dt2 (and the damping profiles) read once for both, and on an imaging step the
// imaging condition of S[n] R[n+1] is applied from the centre values the block already holds.
//
// Per plane the issuing thread asks the copy engine for
//   - S[n] and R[n]: one 72x24 box each (the 64x16 cells with their halos) into slot q % kPSlots
//     of a ring of plane pairs; one mbarrier per slot counts both boxes;
//   - S[n-1], R[n-1] and v2dt2: one 64x16 box each into a cell slot (3 x 4 KB), one mbarrier.
// Each thread keeps two 9-deep register queues (S and R) of 4 cells and computes both fields'
// 4 cells with register_queue.cuh's plane_laplacian and advance_four, the functions tma_ring and
// the separate steps call, so every value rounds as in the separate path. The imaging reads S and
// R at plane k from the p slots (the values the separate accumulate_image_box reads from memory)
// and rounds each product and sum on its own, as accumulate_image_kernel (rtm_ops.cu).
//
// Shared memory (2 blocks per SM on sm_90, 227 KB per SM for blocks): 6 slot pairs of 2 x 6,912
// B (82,944 B) + 2 cell slots of 12,288 B (24,576 B) + 8 mbarriers = 107,584 B per block. A p ring
// needs 5 planes at once (planes k .. k+4: k for the neighbours, k+1 .. k+4 wait in the ring to be
// plane k later), so 6 slots leave one plane per field in flight and 2 cell slots one cell plane:
// 26 KB per block, 52 KB per SM, twice what Little's law asks of an H100 at ~1 us of loaded
// latency (3.35 TB/s / 132 SMs x 1 us = 25 KB). A seventh slot pair or a third cell slot would
// take the block past 113 KB and leave one block per SM (docs/tuning-log.md section 13).
#include <cuda.h>

#include "kernels/cuda/steps/fused_backward.cuh"
#include "kernels/cuda/steps/tma_ring.cuh"

namespace rtm::cuda {
namespace {

// The block's shape and ring depths; the tile is tma_ring's (16x16 threads, 4 cells each along x).
template <int kBXp, int kBYp, int kPSlotsp, int kCellSlotsp> struct PairRingShape {
  static constexpr int kBX = kBXp, kBY = kBYp;
  static constexpr int kThreads = kBX * kBY;
  static constexpr int kTileX = 4 * kBX, kTileY = kBY;
  static constexpr int kRowFloats = kTileX + 2 * kHalo;
  static constexpr int kRows = kTileY + 2 * kHalo;
  static constexpr int kPTileFloats = kRowFloats * kRows;
  static constexpr int kCellTileFloats = kTileX * kTileY;
  static constexpr int kPSlots = kPSlotsp;       // slot pairs: [S tile][R tile]
  static constexpr int kCellSlots = kCellSlotsp; // [S[n-1] tile][R[n-1] tile][v2dt2 tile]
  static constexpr int kPSlotFloats = 2 * kPTileFloats;
  static constexpr int kCellSlotFloats = 3 * kCellTileFloats;
  static constexpr size_t kSharedBytes = sizeof(float) * (size_t(kPSlots) * kPSlotFloats +
                                                          size_t(kCellSlots) * kCellSlotFloats) +
                                         sizeof(uint64_t) * (kPSlots + kCellSlots);
  static_assert(kPTileFloats * sizeof(float) % 128 == 0, "copies land 128-byte aligned");
  static_assert(kCellTileFloats * sizeof(float) % 128 == 0, "copies land 128-byte aligned");
  // Planes k .. k+4 are in use while plane k is computed; each slot beyond them holds a plane in
  // flight. (The prologue reads the queues' first 8 planes in two halves of kHalo.)
  static_assert(kPSlots >= kHalo + 1, "the 5 planes in use fit");
  static_assert(kCellSlots >= 2, "one cell plane in use, one in flight");
  static_assert(kRowFloats <= 256 && kRows <= 256, "a copy box is at most 256 cells a side");
};

// The kernel's helpers exist where its body does (Hopper and later; the build's 8.0 code of the
// kernel is a trap its launcher never reaches).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// p[n+1] of a thread's 4 cells, as tma_ring_kernel stores it: one streaming 16-byte store (not
// read again this step), or at the row's end only the interior cells (halos are never written).
__device__ __forceinline__ void store_four(float* dst, float4 next, int x, int nx) {
  if (x + 4 <= nx) {
    __stcs(reinterpret_cast<float4*>(dst), next);
  } else {
#pragma unroll
    for (int l = 0; l < 4; ++l)
      if (x + l < nx) dst[l] = lane(next, l);
  }
}

// The imaging condition of the thread's 4 cells (x .. x+3, j, k) that lie in the box `b`, in
// accumulate_image_kernel's operations (rtm_ops.cu): each product and sum rounded on its own.
__device__ __forceinline__ void image_four(float4 s, float4 r, int x, int j, int k, const Box& b,
                                           float weight, float* __restrict__ image,
                                           float* __restrict__ illumination) {
  const int box_nx = b.x1 - b.x0, box_ny = b.y1 - b.y0;
  const int64_t dense_row = (int64_t(k - b.z0) * box_ny + (j - b.y0)) * box_nx - b.x0;
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    const int i = x + l;
    if (i >= b.x0 && i < b.x1) {
      const float sv = lane(s, l);
      const float weighted = __fmul_rn(weight, sv);
      const int64_t d = dense_row + i;
      image[d] = __fadd_rn(image[d], __fmul_rn(weighted, lane(r, l)));
      illumination[d] = __fadd_rn(illumination[d], __fmul_rn(weighted, sv));
    }
  }
}

// Asks L2 for the image and illumination lines of the thread's in-box cells of plane k (those of
// its first and of its last cell: together the warp's requests cover every line of the rows).
// Issued a plane ahead, so image_four's loads, which every warp of the block waits for before the
// plane's barrier, hit L2 instead of DRAM; no register holds anything in flight.
__device__ __forceinline__ void prefetch_image_four(int x, int j, int k, const Box& b,
                                                    const float* image, const float* illumination) {
  const int first = max(x, b.x0), last = min(x + 3, b.x1 - 1);
  if (first > last) return;
  const int64_t dense_row =
      (int64_t(k - b.z0) * (b.y1 - b.y0) + (j - b.y0)) * (b.x1 - b.x0) - b.x0;
  for (const int64_t d : {dense_row + first, dense_row + last}) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(image + d));
    asm volatile("prefetch.global.L2 [%0];" ::"l"(illumination + d));
  }
}
#endif

// 2 blocks per SM: the launch bound caps the registers at 128 (two queues of 9 float4 take 72).
constexpr int kMinBlocks = 2;

template <class Shape, bool kDamped, bool kImage>
__global__ void __launch_bounds__(Shape::kThreads, kMinBlocks)
    fused_ring_kernel(const __grid_constant__ CUtensorMap s_map,
                      const __grid_constant__ CUtensorMap r_map,
                      const __grid_constant__ CUtensorMap s_prev_map,
                      const __grid_constant__ CUtensorMap r_prev_map,
                      const __grid_constant__ CUtensorMap v2dt2_map, const GridLayout g,
                      const LaplacianWeights w, float* __restrict__ s_prev_next,
                      float* __restrict__ r_prev_next, const float* __restrict__ damp_x,
                      const float* __restrict__ damp_y, const float* __restrict__ damp_z,
                      int chunk, const Box b, float weight, float* __restrict__ image,
                      float* __restrict__ illumination) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kBX = Shape::kBX, kTileX = Shape::kTileX, kTileY = Shape::kTileY;
  constexpr int kRowFloats = Shape::kRowFloats, kPTileFloats = Shape::kPTileFloats;
  constexpr int kCellTileFloats = Shape::kCellTileFloats;
  constexpr int kPSlots = Shape::kPSlots, kCellSlots = Shape::kCellSlots;
  constexpr int kPSlotFloats = Shape::kPSlotFloats, kCellSlotFloats = Shape::kCellSlotFloats;
  constexpr int kQueue = tma_ring::kQueue;
  extern __shared__ __align__(128) unsigned char shared[];
  float* p_ring = reinterpret_cast<float*>(shared);
  float* cell_ring = p_ring + kPSlots * kPSlotFloats;
  uint64_t* p_full = reinterpret_cast<uint64_t*>(cell_ring + kCellSlots * kCellSlotFloats);
  uint64_t* cell_full = p_full + kPSlots;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + 4 * tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int planes = k_end - k_begin;          // planes computed
  const int p_planes = planes + 2 * kHalo;     // p planes read: k_begin - 4 .. k_end + 3
  const bool issuer = tid == 0;

  // As tma_ring_kernel: p plane q counts from k_begin - 4 (tensor z coordinate k_begin + q), cell
  // plane m from k_begin. A slot pair's barrier counts both fields' boxes of plane q.
  auto request_p = [&](int q) {
    const int s = q % kPSlots;
    float* dst = p_ring + s * kPSlotFloats;
    mbarrier_arrive_expect_bytes(&p_full[s], kPSlotFloats * sizeof(float));
    const uint64_t read_twice = l2_evict_last_policy();
    bulk_tensor_load_3d(dst, &s_map, x0, y0, k_begin + q, &p_full[s], read_twice);
    bulk_tensor_load_3d(dst + kPTileFloats, &r_map, x0, y0, k_begin + q, &p_full[s], read_twice);
  };
  auto request_cells = [&](int m) {
    const int s = m % kCellSlots;
    float* dst = cell_ring + s * kCellSlotFloats;
    mbarrier_arrive_expect_bytes(&cell_full[s], kCellSlotFloats * sizeof(float));
    const uint64_t read_once = l2_evict_first_policy();
    const int cx = x0 + kHalo, cy = y0 + kHalo, cz = k_begin + m + kHalo;
    bulk_tensor_load_3d(dst, &s_prev_map, cx, cy, cz, &cell_full[s], read_once);
    bulk_tensor_load_3d(dst + kCellTileFloats, &r_prev_map, cx, cy, cz, &cell_full[s], read_once);
    bulk_tensor_load_3d(dst + 2 * kCellTileFloats, &v2dt2_map, cx, cy, cz, &cell_full[s],
                        read_once);
  };
  auto wait_p = [&](int q) { mbarrier_wait(&p_full[q % kPSlots], (q / kPSlots) & 1); };
  auto wait_cells = [&](int m) { mbarrier_wait(&cell_full[m % kCellSlots], (m / kCellSlots) & 1); };
  // This thread's 4 cells within a p tile (row ty + 4, column 4 + 4 tx) and within a cell tile.
  const int p_centre = (ty + kHalo) * kRowFloats + kHalo + 4 * tx;
  const int cell_offset = ty * kTileX + 4 * tx;
  // Field f's (0: S, 1: R) tile of p plane q.
  auto p_tile = [&](int q, int f) {
    return p_ring + (q % kPSlots) * kPSlotFloats + f * kPTileFloats;
  };

  if (issuer) {
    for (int s = 0; s < kPSlots; ++s) mbarrier_init(&p_full[s], 1);
    for (int s = 0; s < kCellSlots; ++s) mbarrier_init(&cell_full[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (issuer) {
    for (int q = 0; q < min(kPSlots, p_planes); ++q) request_p(q);
    for (int m = 0; m < min(kCellSlots, planes); ++m) request_cells(m);
  }

  // Prologue: the queues' first 8 planes, k_begin - 4 .. k_begin + 3, in two halves: planes
  // q = 0..3 are only needed by the queues, so their slots take q = kPSlots .. kPSlots + 3 once
  // everyone has read them (tma_ring, with 8 slots, holds all 8 at once).
  float4 queue_s[kQueue], queue_r[kQueue];
#pragma unroll
  for (int d = 0; d < kHalo; ++d) {
    wait_p(d);
    queue_s[d] = *reinterpret_cast<const float4*>(p_tile(d, 0) + p_centre);
    queue_r[d] = *reinterpret_cast<const float4*>(p_tile(d, 1) + p_centre);
  }
  __syncthreads();
  if (issuer)
    for (int q = kPSlots; q < min(kPSlots + kHalo, p_planes); ++q) request_p(q);
#pragma unroll
  for (int d = kHalo; d < kQueue - 1; ++d) {
    wait_p(d);
    queue_s[d] = *reinterpret_cast<const float4*>(p_tile(d, 0) + p_centre);
    queue_r[d] = *reinterpret_cast<const float4*>(p_tile(d, 1) + p_centre);
  }

  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;
  float* s_out = s_prev_next + cell_index;
  float* r_out = r_prev_next + cell_index;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;
  // The image's rows of these cells: dense [z][y][x] over the box (interior cells only).
  const bool row_in_box = kImage && cells_inside && j >= b.y0 && j < b.y1;
  if (kImage && row_in_box && k_begin >= b.z0 && k_begin < b.z1 && planes > 0)
    prefetch_image_four(x, j, k_begin, b, image, illumination);

  for (int m = 0; m < planes; ++m) {
    const int k = k_begin + m;
    const int front = m + 2 * kHalo; // p plane k + 4
    wait_p(front);
    queue_s[kQueue - 1] = *reinterpret_cast<const float4*>(p_tile(front, 0) + p_centre);
    queue_r[kQueue - 1] = *reinterpret_cast<const float4*>(p_tile(front, 1) + p_centre);
    wait_cells(m);
    const float* cells = cell_ring + (m % kCellSlots) * kCellSlotFloats + cell_offset;
    const float4 v = *reinterpret_cast<const float4*>(cells + 2 * kCellTileFloats);
    const float* centre_s = p_tile(m + kHalo, 0) + p_centre; // plane k, waited for 4 planes ago
    const float* centre_r = centre_s + kPTileFloats;

    // The fields one after the other, each exactly as tma_ring_kernel steps one.
    {
      float row[kRowWindow<4>], lap[4];
      plane_laplacian<4, kRowFloats>(w, centre_s,
                                     [&](int d, int l) { return lane(queue_s[d], l); }, row, lap);
      if (cells_inside) {
        const float4 p_prev = *reinterpret_cast<const float4*>(cells);
        const float4 next = advance_four<kDamped>(row, p_prev, v, lap, e_x, e_y, damp_z, k);
        store_four(s_out + k * g.plane, next, x, g.nx);
      }
    }
    {
      float row[kRowWindow<4>], lap[4];
      plane_laplacian<4, kRowFloats>(w, centre_r,
                                     [&](int d, int l) { return lane(queue_r[d], l); }, row, lap);
      if (cells_inside) {
        const float4 p_prev = *reinterpret_cast<const float4*>(cells + kCellTileFloats);
        const float4 next = advance_four<kDamped>(row, p_prev, v, lap, e_x, e_y, damp_z, k);
        store_four(r_out + k * g.plane, next, x, g.nx);
      }
    }

    // The imaging condition of S[n] R[n+1] at plane k: both centres, from the tiles (what
    // accumulate_image_box reads from memory: the steps leave S[n] and R[n+1] as they are).
    if (kImage && row_in_box && k >= b.z0 && k < b.z1)
      image_four(*reinterpret_cast<const float4*>(centre_s),
                 *reinterpret_cast<const float4*>(centre_r), x, j, k, b, weight, image,
                 illumination);
    if (kImage && row_in_box && k + 1 >= b.z0 && k + 1 < b.z1 && m + 1 < planes)
      prefetch_image_four(x, j, k + 1, b, image, illumination);

#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d) {
      queue_s[d] = queue_s[d + 1];
      queue_r[d] = queue_r[d + 1];
    }

    // Everyone is done with p plane k (the slot pair of q = m + 4) and the cell slot of plane k.
    __syncthreads();
    if (issuer) {
      if (m + kHalo + kPSlots < p_planes) request_p(m + kHalo + kPSlots);
      if (m + kCellSlots < planes) request_cells(m + kCellSlots);
    }
  }
#else
  __trap(); // the launcher refuses devices before sm_90
#endif
}

using Shape = PairRingShape<16, 16, 6, 2>;
static_assert(Shape::kSharedBytes <= 113 * 1024, "2 blocks per SM on sm_90 (228 KB per SM)");

template <bool kDamped, bool kImage> void launch(const FusedBackwardArgs& a, cudaStream_t stream) {
  constexpr int kTileX = Shape::kTileX, kTileY = Shape::kTileY;
  constexpr size_t kSharedBytes = Shape::kSharedBytes;
  const char* name = kDamped ? "fused backward step on tma_ring (damped)"
                             : "fused backward step on tma_ring";
  const auto kernel = fused_ring_kernel<Shape, kDamped, kImage>;
  static const int resident_per_sm =
      tma_ring::bulk_copy_blocks_per_sm(kernel, Shape::kThreads, kSharedBytes, name);
  const WaveStepArgs& s = a.source;
  const GridLayout& g = s.layout;
  auto p_map = [&](const void* p) {
    return make_plane_tensor_map(static_cast<const float*>(p), g, Shape::kRowFloats, Shape::kRows);
  };
  auto cell_map = [&](const void* p) {
    return make_plane_tensor_map(static_cast<const float*>(p), g, kTileX, kTileY);
  };
  const int blocks_x = (g.nx + kTileX - 1) / kTileX, blocks_y = (g.ny + kTileY - 1) / kTileY;
  const int chunk =
      tma_ring::ring_chunk(g, int64_t(blocks_x) * blocks_y, resident_per_sm * s.sm_count);
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  kernel<<<grid, dim3(Shape::kBX, Shape::kBY), kSharedBytes, stream>>>(
      p_map(s.p_cur), p_map(a.receiver_cur), cell_map(s.p_prev_next),
      cell_map(a.receiver_prev_next), cell_map(s.v2dt2), g, s.weights, static_cast<float*>(s.p_prev_next),
      static_cast<float*>(a.receiver_prev_next), s.damp_x, s.damp_y, s.damp_z, chunk, a.box,
      a.weight, a.image, a.illumination);
  CUDA_CHECK_LAUNCH(name);
}

} // namespace

void launch_fused_backward_tma_ring(const FusedBackwardArgs& a, cudaStream_t stream) {
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
