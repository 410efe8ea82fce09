// The tma_ring kernel, shared by tma_ring.cu (float32 v2dt2) and half_v2dt2.cu (v2dt2 read as half):
// the register-queue stencil fed by the Hopper bulk tensor copy (bulk_tensor_copy.cuh).
//
// Why: regqueue_vec4 moves the ideal bytes but its loads in flight live in registers, so at 126
// registers a thread only 24% occupancy fits and too few bytes are in flight to cover the
// latency of HBM3e (docs/tuning-log.md sections 1 and 4). Here one thread per block asks the copy
// engine for whole planes and no register holds data in flight:
//   - p[n]: one box per plane, the block's 64x16 cells with their 4-cell x and y halos (72x24
//     floats), in a ring of kPSlots shared slots. Plane q is used twice: its centre cells enter
//     the threads' z register queues when it is the queue's front (while plane q - 4 is
//     computed) and its rows give the x and y neighbours when plane q itself is computed.
//   - p[n-1] and v2dt2: one 64x16 box each per plane, in a ring of kCellSlots slots.
// L2 policies favour the lines read twice (p[n] boxes, whose halo rows the neighbouring tiles
// read too: evict-last) over those read once (p[n-1], v2dt2: evict-first) and the output
// (streaming stores).
// Each slot has an mbarrier that completes when its bytes have landed. After every plane the
// block passes one __syncthreads (everyone is done with the slots of that plane) and the issuing
// thread refills those slots with planes kPSlots - 4 (p) and kCellSlots (the rest) ahead.
// Each thread computes 4 consecutive cells of one row with register_queue.cuh's functions
// (plane_laplacian, advance_four: the same arithmetic in the same order) and stores them with one
// 16-byte store.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/steps/bulk_tensor_copy.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/plane_stencil.cuh"
#include "kernels/cuda/steps/register_queue.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {
namespace tma_ring {

// The block's shape and ring depths (tuned on an H200, docs/tuning-log.md section 7), and the
// type of v2dt2 (TM: float, or __half for half_v2dt2.cu).
template <int kBXp, int kBYp, int kPSlotsp, int kCellSlotsp, class TMp = float> struct RingShape {
  using TM = TMp;
  static constexpr int kBX = kBXp, kBY = kBYp;            // threads; 4 cells each along x
  static constexpr int kThreads = kBX * kBY;
  static constexpr int kTileX = 4 * kBX, kTileY = kBY;    // cells per block and plane
  static constexpr int kRowFloats = kTileX + 2 * kHalo;   // a p row with its x halos
  static constexpr int kRows = kTileY + 2 * kHalo;
  static constexpr int kPTileFloats = kRowFloats * kRows;
  static constexpr int kCellTileFloats = kTileX * kTileY;
  // p slots: the planes k .. k+4 in use while plane k is computed, the rest in flight.
  static constexpr int kPSlots = kPSlotsp;
  // p[n-1] / v2dt2 slots: plane k in use, kCellSlots - 1 in flight.
  static constexpr int kCellSlots = kCellSlotsp;
  // A cell slot: the p[n-1] tile (float), then the v2dt2 tile (TM).
  static constexpr int kCellSlotBytes = kCellTileFloats * int(sizeof(float) + sizeof(TM));
  static constexpr size_t kSharedBytes = sizeof(float) * kPSlots * kPTileFloats +
                                         size_t(kCellSlots) * kCellSlotBytes +
                                         sizeof(uint64_t) * (kPSlots + kCellSlots);
  // The v2dt2 tensor's x coordinate of cell x (bulk_tensor_copy.cuh: a half tensor starts 4
  // cells further left, for the copy engine's 16-byte alignment).
  static constexpr int kModelX = sizeof(TM) == sizeof(float) ? kHalo : 2 * kHalo;
  static_assert(kPTileFloats * sizeof(float) % 128 == 0, "copy destinations stay 128-byte aligned");
  static_assert(kCellTileFloats * sizeof(float) % 128 == 0, "copy destinations stay 128-byte aligned");
  static_assert(kCellTileFloats * sizeof(TM) % 128 == 0, "copy destinations stay 128-byte aligned");
  static_assert(kPSlots >= 2 * kHalo, "the prologue holds the queue's first 8 planes at once");
  static_assert(kRowFloats <= 256 && kRows <= 256, "a copy box is at most 256 cells a side");
};

constexpr int kQueue = 2 * kHalo + 1;
constexpr int kMinChunk = 32; // each chunk reads 8 extra planes of p[n]
constexpr int kMaxChunk = 96;

template <class Shape, bool kDamped>
__global__ void __launch_bounds__(Shape::kThreads)
    tma_ring_kernel(const __grid_constant__ CUtensorMap p_map,
                    const __grid_constant__ CUtensorMap prev_map,
                    const __grid_constant__ CUtensorMap v2dt2_map, const GridLayout g,
                    const LaplacianWeights w, float* __restrict__ p_prev_next,
                    const float* __restrict__ damp_x, const float* __restrict__ damp_y,
                    const float* __restrict__ damp_z, int chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kBX = Shape::kBX, kTileX = Shape::kTileX, kTileY = Shape::kTileY;
  constexpr int kRowFloats = Shape::kRowFloats, kPTileFloats = Shape::kPTileFloats;
  constexpr int kCellTileFloats = Shape::kCellTileFloats;
  constexpr int kPSlots = Shape::kPSlots, kCellSlots = Shape::kCellSlots;
  extern __shared__ __align__(128) unsigned char shared[];
  float* p_ring = reinterpret_cast<float*>(shared);
  using TM = typename Shape::TM;
  constexpr int kCellSlotBytes = Shape::kCellSlotBytes;
  // Cell slot s: [p[n-1] tile, float][v2dt2 tile, TM].
  unsigned char* cell_ring = reinterpret_cast<unsigned char*>(p_ring + kPSlots * kPTileFloats);
  uint64_t* p_full = reinterpret_cast<uint64_t*>(cell_ring + kCellSlots * kCellSlotBytes);
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

  // p plane number q counts from k_begin - 4 (q = 0); its tensor z coordinate is k + kHalo, i.e.
  // k_begin + q. Cell planes count from k_begin (m = 0).
  auto request_p = [&](int q) {
    const int s = q % kPSlots;
    mbarrier_arrive_expect_bytes(&p_full[s], kPTileFloats * sizeof(float));
    bulk_tensor_load_3d(p_ring + s * kPTileFloats, &p_map, x0, y0, k_begin + q, &p_full[s],
                        l2_evict_last_policy());
  };
  auto request_cells = [&](int m) {
    const int s = m % kCellSlots;
    unsigned char* dst = cell_ring + s * kCellSlotBytes;
    mbarrier_arrive_expect_bytes(&cell_full[s], kCellSlotBytes);
    const uint64_t read_once = l2_evict_first_policy();
    bulk_tensor_load_3d(dst, &prev_map, x0 + kHalo, y0 + kHalo, k_begin + m + kHalo,
                        &cell_full[s], read_once);
    bulk_tensor_load_3d(dst + kCellTileFloats * sizeof(float), &v2dt2_map, x0 + Shape::kModelX,
                        y0 + kHalo, k_begin + m + kHalo, &cell_full[s], read_once);
  };
  // Each slot's barrier completes once per use, so use u of a slot has phase parity u & 1.
  auto wait_p = [&](int q) { mbarrier_wait(&p_full[q % kPSlots], (q / kPSlots) & 1); };
  auto wait_cells = [&](int m) { mbarrier_wait(&cell_full[m % kCellSlots], (m / kCellSlots) & 1); };
  // This thread's 4 cells within a p slot (row ty + 4, column 4 + 4 tx) and within a cell tile.
  const int p_centre = (ty + kHalo) * kRowFloats + kHalo + 4 * tx;
  const int cell_offset = ty * kTileX + 4 * tx;
  auto p_slot = [&](int q) { return p_ring + (q % kPSlots) * kPTileFloats; };

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

  // Prologue: the queue's first 8 planes, k_begin - 4 .. k_begin + 3.
  float4 queue[kQueue];
#pragma unroll
  for (int d = 0; d < kQueue - 1; ++d) {
    wait_p(d);
    queue[d] = *reinterpret_cast<const float4*>(p_slot(d) + p_centre);
  }
  __syncthreads(); // planes q = 0..3 are only needed by the queue: their slots are free
  if (issuer)
    for (int q = kPSlots; q < min(kPSlots + kHalo, p_planes); ++q) request_p(q);

  const bool cells_inside = x < g.nx && j < g.ny;
  float* out = p_prev_next + (cells_inside ? g.index(x, j, 0) : 0);
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;

  for (int m = 0; m < planes; ++m) {
    const int k = k_begin + m;
    const int front = m + 2 * kHalo; // p plane k + 4
    wait_p(front);
    queue[kQueue - 1] = *reinterpret_cast<const float4*>(p_slot(front) + p_centre);
    wait_cells(m);
    const float* cells =
        reinterpret_cast<const float*>(cell_ring + (m % kCellSlots) * kCellSlotBytes) + cell_offset;
    const float4 p_prev = *reinterpret_cast<const float4*>(cells);
    // v2dt2's tile (TM elements) starts right after the p[n-1] tile's kCellTileFloats floats.
    const TM* model = reinterpret_cast<const TM*>(cells - cell_offset + kCellTileFloats) + cell_offset;
    const float4 v = Vec4Io<TM>::unpack(*reinterpret_cast<const typename Vec4Io<TM>::Raw*>(model));
    const float* centre = p_slot(m + kHalo) + p_centre; // plane k, waited for 4 planes ago

    float row[kRowWindow<4>], lap[4];
    plane_laplacian<4, kRowFloats>(w, centre, [&](int d, int l) { return lane(queue[d], l); }, row,
                                   lap);

    if (cells_inside) {
      const float4 next = advance_four<kDamped>(row, p_prev, v, lap, e_x, e_y, damp_z, k);
      float* dst = out + k * g.plane;
      if (x + 4 <= g.nx) {
        __stcs(reinterpret_cast<float4*>(dst), next); // streaming: not read again this step
      } else {
#pragma unroll
        for (int l = 0; l < 4; ++l)
          if (x + l < g.nx) dst[l] = lane(next, l);
      }
    }
#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d) queue[d] = queue[d + 1];

    // Everyone is done with p plane k (slot of q = m + 4) and the cell slot of plane k: refill.
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

// The resident blocks per SM of a bulk-copy kernel with `shared_bytes` of dynamic shared memory,
// after refusing a GPU before compute capability 9.0 (CudaError naming `name`) and allowing the
// kernel that much shared memory. Callers keep the result in a static (once per kernel).
template <class Kernel>
int bulk_copy_blocks_per_sm(Kernel kernel, int threads, size_t shared_bytes, const char* name) {
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    throw CudaError(std::string(name) + " needs the bulk tensor copy of compute capability 9.0 "
                    "or later; this GPU is " + std::to_string(major) + ".x");
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(shared_bytes)));
  return blocks_per_sm(kernel, threads, shared_bytes);
}

// The z-chunk length of a ring kernel's grid of `blocks_xy` tiles per plane.
inline int ring_chunk(const GridLayout& g, int64_t blocks_xy, int resident_blocks) {
  const int chunks = choose_z_chunks(blocks_xy, resident_blocks, g.nz, kMinChunk);
  // Chunks of at most kMaxChunk planes even where fewer would fill the GPU: blocks that start
  // together stay closer in z, so a tile's halo rows are still in L2 when its neighbours read them
  // (docs/tuning-log.md section 7: 1024x1024x512 0.80 -> 0.86 of the streaming limit).
  return std::min((g.nz + chunks - 1) / chunks, kMaxChunk);
}

template <class Shape, bool kDamped>
void launch(const WaveStepArgs& a, cudaStream_t stream, const char* name) {
  constexpr int kThreads = Shape::kThreads, kTileX = Shape::kTileX, kTileY = Shape::kTileY;
  constexpr size_t kSharedBytes = Shape::kSharedBytes;
  const auto kernel = tma_ring_kernel<Shape, kDamped>;
  static const int resident_per_sm = bulk_copy_blocks_per_sm(kernel, kThreads, kSharedBytes, name);
  const GridLayout& g = a.layout;
  const CUtensorMap p_map = make_plane_tensor_map(static_cast<const float*>(a.p_cur), g,
                                                  Shape::kRowFloats, Shape::kRows);
  const CUtensorMap prev_map = make_plane_tensor_map(static_cast<const float*>(a.p_prev_next), g,
                                                     kTileX, kTileY);
  const CUtensorMap v2dt2_map = make_plane_tensor_map(static_cast<const typename Shape::TM*>(a.v2dt2),
                                                      g, kTileX, kTileY);
  const int blocks_x = (g.nx + kTileX - 1) / kTileX, blocks_y = (g.ny + kTileY - 1) / kTileY;
  const int chunk = ring_chunk(g, int64_t(blocks_x) * blocks_y, resident_per_sm * a.sm_count);
  const dim3 grid(blocks_x, blocks_y, (g.nz + chunk - 1) / chunk);
  kernel<<<grid, dim3(Shape::kBX, Shape::kBY), kSharedBytes, stream>>>(
      p_map, prev_map, v2dt2_map, g, a.weights, static_cast<float*>(a.p_prev_next), a.damp_x,
      a.damp_y, a.damp_z, chunk);
  CUDA_CHECK_LAUNCH(name);
}

} // namespace tma_ring
} // namespace rtm::cuda
