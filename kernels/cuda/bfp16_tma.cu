// bfp16_tma and bfp16_model16_tma: bfp16's storage and arithmetic (bfp16.cu; the format in
// solvers/contracts/bfp16.h: int16 mantissas, an exponent byte per 16 cells of a row) fed the way
// tma_ring is (tma_ring.cuh, bulk_tensor_copy.cuh): the copy engine streams planes into a shared
// ring completed on mbarriers, so no register holds data in flight (docs/tuning-log.md section 11).
// bfp16_tma reads v2dt2 in float32 (10.19 bytes per cell), bfp16_model16_tma as unsigned 16-bit
// mantissas with their exponents (8.25), as bfp16 and bfp16_model16 do.
//
// What moves, per plane, into the slots of two rings (one mbarrier per slot):
//   - p[n]: the 80x24 box of int16 mantissas (the block's 64x16 cells with 4-cell x and y halos,
//     and 4 more unused cells each side in x) by one bulk tensor copy, in a ring of kPSlots
//     slots, used twice as in tma_ring: as the queue's front (the thread's own 4 cells, decoded
//     into the float register queue) and, 4 planes later, for its halo pieces. The box starts at
//     x0 - 8, not x0 - 4: the copy engine needs a box's first x coordinate at a multiple of 16
//     bytes (it stops the kernel with an illegal instruction otherwise), and x0 - 4 is 8 bytes
//     into the int16 tensor's row (tma_ring's float boxes start 0 or 16 bytes into theirs);
//   - p[n-1] and v2dt2: their 64x16 boxes (int16, and float or uint16) in a ring of kCellSlots;
//   - the exponents of every row of those boxes. An exponent row of the padded layout is pitch/16
//     bytes long, which is no multiple of 16, and the copy engine needs every stride of a tensor
//     to be one: the exponent bytes cannot be a tensor. They move as 4-byte cp.async copies
//     instead, one aligned word per thread and slot fill (a p row's 6 blocks, x0-4 .. x0+67, lie
//     in 3 aligned words, a cell row's 4 blocks in 2), each thread then arriving on the slot's
//     mbarrier when its copy lands (cp.async.mbarrier.arrive.noinc): the barrier of a p slot
//     expects 1 + 72 arrivals (the copy-engine request, the 72 word copies), that of a cell slot
//     1 + 32 (+ 32 for the model's exponents). The layout of the fields is bfp16's, unchanged: the
//     words are read where they lie, and each row's bytes start at the offset of its first block
//     within its aligned word (`address_low` below). Words past the end of an exponent array
//     (whose length is only even) or of rows outside the tensor are zero-filled, not read.
// Per plane, each thread decodes its front (queue), then its halo piece of plane k into a float
// tile (double-buffered, as bfp16.cu's; the centre comes from the queue), and its p[n-1] and
// v2dt2; one __syncthreads; the slots of plane k are then refilled, and the arithmetic is
// tma_ring's (plane_laplacian, advance_four: the CPU reference's order), the output encoded as
// bfp16.cu does (bfp16_encode_store_four), mantissas with a streaming store.
// p[n+1] overwrites p[n-1] in place: the block writes plane k's mantissas and exponents only after
// its slot's barrier said plane k's copies have landed; the aligned words may also hold bytes of
// the neighbouring tiles' blocks, which this block reads but never uses.
#include <cuda.h>

#include <cstdint>
#include <stdexcept>

#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/bfp16_io.cuh"
#include "kernels/cuda/tma_ring.cuh"

namespace rtm::cuda {
namespace {

// The block's shape and ring depths; kModel16: v2dt2 as unsigned 16-bit mantissas with exponents.
template <int kBXp, int kBYp, int kPSlotsp, int kCellSlotsp, bool kModel16p> struct Bfp16RingShape {
  static constexpr bool kModel16 = kModel16p;
  static constexpr int kBX = kBXp, kBY = kBYp; // threads; 4 cells each along x
  static constexpr int kThreads = kBX * kBY;
  static constexpr int kTileX = 4 * kBX, kTileY = kBY;
  static constexpr int kRowCells = kTileX + 2 * kHalo; // a float tile row: the tile's x halos
  static constexpr int kRows = kTileY + 2 * kHalo;
  static constexpr int kTileCells = kRowCells * kRows; // the float tile
  // A p box row: cells x0 - 2 kHalo .. x0 + kTileX + 2 kHalo - 1, so that it starts on a 16-byte
  // boundary (the file's header); the cell of float tile column c is box column c + kHalo.
  static constexpr int kPRowCells = kTileX + 4 * kHalo;
  static constexpr int kPBoxCells = kPRowCells * kRows;
  static constexpr int kCells = kTileX * kTileY;       // the p[n-1] and v2dt2 boxes
  static constexpr int kPSlots = kPSlotsp, kCellSlots = kCellSlotsp;
  static constexpr int kPSlotBytes = kPBoxCells * int(sizeof(int16_t));
  static constexpr int kModelBytes = kModel16 ? int(sizeof(uint16_t)) : int(sizeof(float));
  // A cell slot: the p[n-1] mantissas, then v2dt2 (float, or uint16 mantissas).
  static constexpr int kCellSlotBytes = kCells * (int(sizeof(int16_t)) + kModelBytes);
  static constexpr int kFloatTileBytes = kTileCells * int(sizeof(float));
  // Exponents: aligned 4-byte words per row; a cell slot's rows for p[n-1], then for v2dt2.
  static constexpr int kPExpWords = 3, kCellExpWords = 2;
  static constexpr int kPExpRowBytes = 4 * kPExpWords, kCellExpRowBytes = 4 * kCellExpWords;
  static constexpr int kCellExpArrays = kModel16 ? 2 : 1;
  static constexpr int kPExpSlotBytes = kRows * kPExpRowBytes;
  static constexpr int kCellExpSlotBytes = kCellExpArrays * kTileY * kCellExpRowBytes;
  // The threads that copy exponent words: tid < kPExpJobs for p, the next kCellExpJobs for cells.
  static constexpr int kPExpJobs = kRows * kPExpWords;
  static constexpr int kCellExpJobs = kCellExpArrays * kTileY * kCellExpWords;
  // Dynamic shared memory: p ring, cell ring, 2 float tiles, exponent rings, barriers.
  static constexpr size_t kCellRingAt = size_t(kPSlots) * kPSlotBytes;
  static constexpr size_t kFloatTilesAt = kCellRingAt + size_t(kCellSlots) * kCellSlotBytes;
  static constexpr size_t kPExpAt = kFloatTilesAt + 2 * size_t(kFloatTileBytes);
  static constexpr size_t kCellExpAt = kPExpAt + size_t(kPSlots) * kPExpSlotBytes;
  static constexpr size_t kBarriersAt = kCellExpAt + size_t(kCellSlots) * kCellExpSlotBytes;
  static constexpr size_t kSharedBytes = kBarriersAt + sizeof(uint64_t) * (kPSlots + kCellSlots);

  static_assert(kBX % 4 == 0, "a 16-cell block must be held by 4 threads of one row");
  static_assert(kPSlotBytes % 128 == 0 && kCellSlotBytes % 128 == 0 &&
                    kCells * sizeof(int16_t) % 128 == 0,
                "copy destinations stay 128-byte aligned");
  static_assert(kPRowCells * sizeof(int16_t) % 16 == 0 && kTileX * sizeof(int16_t) % 16 == 0,
                "a box row is a multiple of 16 bytes (the copy engine's rule)");
  // Every box starts at a tile's x0 (cells) or 2 kHalo cells left of it (p), and the 16-bit
  // tensors start at x = -2 kHalo on a 16-byte boundary: the copies' first x coordinates, x0 for
  // p and x0 + 2 kHalo for the cells (and x0 + kHalo in a float tensor), are multiples of 16 bytes.
  static_assert(2 * kHalo * sizeof(int16_t) % 16 == 0 && kHalo * sizeof(float) % 16 == 0,
                "every copy's first x coordinate on a 16-byte boundary (the copy engine's rule)");
  static_assert(kPRowCells <= 256 && kRows <= 256, "a copy box is at most 256 cells a side");
  static_assert(kFloatTileBytes % 16 == 0 && kBarriersAt % 8 == 0, "float4 tiles, 8-byte barriers");
  static_assert(kPSlots >= 2 * kHalo, "the prologue holds the queue's first 8 planes at once");
  static_assert(kPExpJobs + kCellExpJobs <= kThreads, "one exponent word per thread and fill");
  // The exponent words of a row (see address_low): a p row's blocks first .. first + 5 and a cell
  // row's first .. first + 3 start at byte (first & 3) of the row's words.
  static_assert(3 + 5 < kPExpRowBytes && 3 + 3 < kCellExpRowBytes, "a row's blocks fit its words");
  static_assert(kTileX == 4 * bfp16::kBlock, "a p row holds the tile's 4 blocks and one each side");
};

constexpr int kQueue = 2 * kHalo + 1;

// The low 32 bits of the address of block `block` of the exponent array `e`: its two lowest bits
// say where the block lies within its aligned 4-byte word (the arrays start on even bytes only:
// shifted by whole planes for plane ranges, plane / 16 bytes each). Moving by q planes adds
// q (plane / 16) to it, and the two bits stay right in 32-bit arithmetic.
__device__ __forceinline__ uint32_t address_low(const int8_t* e, int64_t block) {
  return uint32_t(reinterpret_cast<uintptr_t>(e)) + uint32_t(block);
}

template <class Shape, bool kDamped>
__global__ void __launch_bounds__(Shape::kThreads)
    bfp16_tma_kernel(const __grid_constant__ CUtensorMap p_map,
                     const __grid_constant__ CUtensorMap prev_map,
                     const __grid_constant__ CUtensorMap model_map, const GridLayout g,
                     const LaplacianWeights w, int16_t* __restrict__ p_prev_next,
                     const int8_t* __restrict__ e_cur, int8_t* __restrict__ e_prev_next,
                     const int8_t* __restrict__ e_model, const float* __restrict__ damp_x,
                     const float* __restrict__ damp_y, const float* __restrict__ damp_z, int chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = Shape;
  constexpr int kBX = S::kBX, kThreads = S::kThreads, kTileX = S::kTileX, kTileY = S::kTileY;
  constexpr int kRowCells = S::kRowCells, kCells = S::kCells;
  constexpr int kPSlots = S::kPSlots, kCellSlots = S::kCellSlots;
  constexpr int kXHaloJobs = 2 * kTileY;               // 4 cells left and right of each row
  constexpr int kYHaloJobs = 2 * kHalo * (kTileX / 4); // 4 rows above and below, 4 cells a job
  constexpr int kHaloJobs = kXHaloJobs + kYHaloJobs;
  constexpr int kJobsPerThread = (kHaloJobs + kThreads - 1) / kThreads;
  extern __shared__ __align__(128) unsigned char shared[];
  unsigned char* p_ring = shared;
  unsigned char* cell_ring = shared + S::kCellRingAt;
  float* tiles = reinterpret_cast<float*>(shared + S::kFloatTilesAt);
  unsigned char* p_exp_ring = shared + S::kPExpAt;
  unsigned char* cell_exp_ring = shared + S::kCellExpAt;
  uint64_t* p_full = reinterpret_cast<uint64_t*>(shared + S::kBarriersAt);
  uint64_t* cell_full = p_full + kPSlots;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kBX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int x = x0 + 4 * tx, j = y0 + ty;
  const int k_begin = blockIdx.z * chunk;
  const int k_end = min(k_begin + chunk, g.nz);
  const int planes = k_end - k_begin;      // planes computed
  const int p_planes = planes + 2 * kHalo; // p planes read: k_begin - 4 .. k_end + 3
  const bool issuer = tid == 0;
  const int64_t plane_blocks = g.plane / bfp16::kBlock; // exact: a plane is a multiple of 32

  // The block (exponent index) of cell (x0, jj, kk): the tile's first block of that row.
  auto block_of = [&](int jj, int kk) { return g.index(x0, jj, kk) >> 4; };

  // This thread's exponent word, if it has one: word `word` of row `row` of the p box (p_exp_job),
  // or of the p[n-1] (array 0) or v2dt2 (array 1) box (cell_exp_job), every time a slot is filled.
  const bool p_exp_job = tid < S::kPExpJobs;
  const int cell_job = tid - S::kPExpJobs;
  const bool cell_exp_job = cell_job >= 0 && cell_job < S::kCellExpJobs;
  const int cell_job_array = cell_job / (kTileY * S::kCellExpWords);
  const int job_row = p_exp_job ? tid / S::kPExpWords : (cell_job / S::kCellExpWords) % kTileY;
  const int job_word = p_exp_job ? tid % S::kPExpWords : cell_job % S::kCellExpWords;
  const int8_t* job_e = p_exp_job ? e_cur : cell_job_array == 0 ? e_prev_next : e_model;
  // Its row: grid row, the blocks it needs (p: x0-4 .. x0+67; cells: x0 .. x0+63), and the address
  // of the first of them in plane q = 0 (p) or m = 0 (cells); rows outside the tensor read nothing.
  const int job_j = p_exp_job ? y0 - kHalo + job_row : y0 + job_row;
  const bool job_row_inside = p_exp_job ? job_j < g.ny + kHalo : job_j < g.ny;
  const int job_blocks = p_exp_job ? kTileX / bfp16::kBlock + 2 : kTileX / bfp16::kBlock;
  const uintptr_t job_first_at =
      reinterpret_cast<uintptr_t>(job_e) +
      uintptr_t(p_exp_job ? block_of(job_j, k_begin - kHalo) - 1 : block_of(job_j, k_begin));
  // The last aligned word wholly inside the array (its length, size / 16, is only even).
  const uintptr_t job_last_word =
      (reinterpret_cast<uintptr_t>(job_e + g.size / bfp16::kBlock) & ~uintptr_t(3)) - 4;
  unsigned char* const job_dst =
      p_exp_job ? p_exp_ring + job_row * S::kPExpRowBytes + 4 * job_word
                : cell_exp_ring + (cell_job_array * kTileY + job_row) * S::kCellExpRowBytes +
                      4 * job_word;

  // Copies this thread's word of plane `n` (q or m) into slot `s` of its exponent ring: the
  // aligned word `job_word` of those that hold the row's blocks. Words that hold none of them, lie
  // past the array's last whole word, or belong to a row outside the tensor are zero-filled
  // without a read (a zero exponent decodes the tensor's zero fill as zeros).
  auto copy_exponent_word = [&](int n, int s, int slot_bytes) {
    const uintptr_t first_at = job_first_at + uintptr_t(n) * uintptr_t(plane_blocks);
    const uintptr_t src = (first_at & ~uintptr_t(3)) + 4 * uintptr_t(job_word);
    const bool valid =
        job_row_inside && src <= first_at + uintptr_t(job_blocks - 1) && src <= job_last_word;
    cp_async_4(job_dst + s * slot_bytes, reinterpret_cast<const void*>(valid ? src : job_last_word),
               valid);
  };

  // p plane number q counts from k_begin - 4 (q = 0): grid plane k_begin - 4 + q, tensor z
  // coordinate k_begin + q; the int16 tensor's x coordinate of cell x is x + 2 kHalo
  // (bulk_tensor_copy.cuh), so the box from x0 - 2 kHalo starts at x0. Cell planes count from
  // k_begin (m = 0). Every thread calls these (block-uniform conditions): the issuer asks the copy
  // engine, the exponent threads copy their words; each arrives once on the slot's barrier.
  auto request_p = [&](int q) {
    const int s = q % kPSlots;
    if (issuer) {
      mbarrier_arrive_expect_bytes(&p_full[s], S::kPSlotBytes);
      bulk_tensor_load_3d(p_ring + s * S::kPSlotBytes, &p_map, x0, y0, k_begin + q, &p_full[s],
                          l2_evict_last_policy());
    }
    if (p_exp_job) {
      copy_exponent_word(q, s, S::kPExpSlotBytes);
      cp_async_mbarrier_arrive_noinc(&p_full[s]);
    }
  };
  auto request_cells = [&](int m) {
    const int s = m % kCellSlots;
    const int kz = k_begin + m;
    unsigned char* dst = cell_ring + s * S::kCellSlotBytes;
    if (issuer) {
      mbarrier_arrive_expect_bytes(&cell_full[s], S::kCellSlotBytes);
      const uint64_t read_once = l2_evict_first_policy();
      bulk_tensor_load_3d(dst, &prev_map, x0 + 2 * kHalo, y0 + kHalo, kz + kHalo, &cell_full[s],
                          read_once);
      // A float tensor starts at x = -kHalo, a 16-bit one at -2 kHalo (bulk_tensor_copy.cuh).
      bulk_tensor_load_3d(dst + kCells * sizeof(int16_t), &model_map,
                          x0 + (S::kModel16 ? 2 * kHalo : kHalo), y0 + kHalo, kz + kHalo,
                          &cell_full[s], read_once);
    }
    if (cell_exp_job) {
      copy_exponent_word(m, s, S::kCellExpSlotBytes);
      cp_async_mbarrier_arrive_noinc(&cell_full[s]);
    }
  };
  // Each slot's barrier completes once per use, so use u of a slot has phase parity u & 1.
  auto wait_p = [&](int q) { mbarrier_wait(&p_full[q % kPSlots], (q / kPSlots) & 1); };
  auto wait_cells = [&](int m) { mbarrier_wait(&cell_full[m % kCellSlots], (m / kCellSlots) & 1); };

  const uint32_t plane_low = uint32_t(plane_blocks); // address_low's step per plane
  // 4 cells of p plane q, row r of the box, from float tile column c (cell x0 - kHalo + c, box
  // column c + kHalo; c a multiple of 4), decoded. `first_low`: address_low of the row's first
  // block (x0 - 16 .. x0 - 1) in plane q = 0.
  auto p_cells = [&](int q, int r, int c, uint32_t first_low) {
    const unsigned char* slot = p_ring + (q % kPSlots) * S::kPSlotBytes;
    const int8_t* exps =
        reinterpret_cast<const int8_t*>(p_exp_ring + (q % kPSlots) * S::kPExpSlotBytes);
    const uint2 q4 =
        *reinterpret_cast<const uint2*>(slot + (r * S::kPRowCells + c + kHalo) * sizeof(int16_t));
    // The row's first block lies at byte (address & 3) of its words; the block of cell
    // x0 - kHalo + c, (c + 12) / 16 blocks further.
    const int byte = int((first_low + uint32_t(q) * plane_low) & 3u) + ((c + 3 * kHalo) >> 4);
    return bfp16_unpack({q4, int(exps[r * S::kPExpRowBytes + byte])});
  };

  if (issuer) {
    for (int s = 0; s < kPSlots; ++s) mbarrier_init(&p_full[s], 1 + S::kPExpJobs);
    for (int s = 0; s < kCellSlots; ++s) mbarrier_init(&cell_full[s], 1 + S::kCellExpJobs);
    mbarrier_init_fence();
  }
  __syncthreads();
  for (int q = 0; q < min(kPSlots, p_planes); ++q) request_p(q);
  for (int m = 0; m < min(kCellSlots, planes); ++m) request_cells(m);

  // The thread's own 4 cells in a p box (row ty + 4, column 4 + 4 tx) and their row's first block.
  const int front_row = ty + kHalo, front_col = kHalo + 4 * tx;
  const uint32_t front_first = address_low(e_cur, block_of(j, k_begin - kHalo) - 1);

  // Prologue: the queue's first 8 planes, k_begin - 4 .. k_begin + 3.
  float4 queue[kQueue];
#pragma unroll
  for (int d = 0; d < kQueue - 1; ++d) {
    wait_p(d);
    queue[d] = p_cells(d, front_row, front_col, front_first);
  }
  __syncthreads(); // planes q = 0..3 are only needed by the queue: their slots are free
  for (int q = kPSlots; q < min(kPSlots + kHalo, p_planes); ++q) request_p(q);

  // Halo jobs (bfp16.cu's): each decodes 4 cells of a p box into the float tile, every plane.
  int halo_at[kJobsPerThread];          // element index in the box and in the float tile
  int halo_row[kJobsPerThread], halo_col[kJobsPerThread];
  uint32_t halo_first[kJobsPerThread];  // address_low of its row's first block, q = 0
  bool halo_job[kJobsPerThread];
#pragma unroll
  for (int h = 0; h < kJobsPerThread; ++h) {
    const int job = tid + h * kThreads;
    int at = 0;
    if (job < kXHaloJobs) {
      const int r = job / 2, right = job % 2;
      at = (r + kHalo) * kRowCells + (right ? kTileX + kHalo : 0);
    } else {
      const int u = job - kXHaloJobs;
      const int rr = u / (kTileX / 4), c4 = u % (kTileX / 4); // rr 0..3 above, 4..7 below
      const int shared_row = rr < kHalo ? rr : kTileY + rr;
      at = shared_row * kRowCells + kHalo + 4 * c4;
    }
    halo_job[h] = job < kHaloJobs;
    halo_at[h] = at;
    halo_row[h] = at / kRowCells;
    halo_col[h] = at % kRowCells;
    halo_first[h] = address_low(e_cur, block_of(y0 - kHalo + halo_row[h], k_begin - kHalo) - 1);
  }

  const bool cells_inside = x < g.nx && j < g.ny;
  const int64_t cell_index = cells_inside ? g.index(x, j, 0) : 0;
  // address_low of the first block of the thread's row of the p[n-1] and v2dt2 boxes, plane m = 0.
  const uint32_t prev_first = address_low(e_prev_next, block_of(j, k_begin));
  const uint32_t model_first = address_low(e_model, block_of(j, k_begin));
  const int cell_offset = ty * kTileX + 4 * tx;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float4 e_x = kDamped && cells_inside ? *reinterpret_cast<const float4*>(damp_x + x) : zero;
  const float e_y = kDamped && cells_inside ? damp_y[j] : 0.0f;
  // The interior cells among the thread's 4: lanes 0 .. last_lane (-1: none).
  const int last_lane = cells_inside ? min(g.nx - x, 4) - 1 : -1;

  for (int m = 0; m < planes; ++m) {
    const int k = k_begin + m;
    const int front = m + 2 * kHalo; // p plane k + 4
    wait_p(front);
    queue[kQueue - 1] = p_cells(front, front_row, front_col, front_first);

    // Plane k's float tile: the centre from the queue, the halos from its p slot (q = m + 4,
    // waited for 4 planes ago as the front).
    float* tile = tiles + (m & 1) * S::kTileCells;
    float* centre = tile + front_row * kRowCells + front_col;
    *reinterpret_cast<float4*>(centre) = queue[kHalo];
#pragma unroll
    for (int h = 0; h < kJobsPerThread; ++h)
      if (halo_job[h])
        *reinterpret_cast<float4*>(tile + halo_at[h]) =
            p_cells(m + kHalo, halo_row[h], halo_col[h], halo_first[h]);

    wait_cells(m);
    const unsigned char* cells = cell_ring + (m % kCellSlots) * S::kCellSlotBytes;
    const int8_t* cell_exps =
        reinterpret_cast<const int8_t*>(cell_exp_ring + (m % kCellSlots) * S::kCellExpSlotBytes) +
        ty * S::kCellExpRowBytes + (tx >> 2);
    const uint32_t cell_planes_low = uint32_t(m) * plane_low;
    const float4 p_prev = bfp16_unpack(
        {*reinterpret_cast<const uint2*>(cells + cell_offset * sizeof(int16_t)),
         int(cell_exps[(prev_first + cell_planes_low) & 3u])});
    const unsigned char* model = cells + kCells * sizeof(int16_t);
    float4 v;
    if constexpr (S::kModel16)
      v = bfp16_unpack_unsigned(
          {*reinterpret_cast<const uint2*>(model + cell_offset * sizeof(uint16_t)),
           int(cell_exps[kTileY * S::kCellExpRowBytes + ((model_first + cell_planes_low) & 3u)])});
    else
      v = *reinterpret_cast<const float4*>(model + cell_offset * sizeof(float));

    // The tile is whole; everyone is done with p plane k's slot (q = m + 4) and the cell slot of
    // plane k: refill them. (The tile written next plane is the other one; the one after, this
    // one again, only once every thread has passed the next barrier, after this plane's compute.)
    __syncthreads();
    if (m + kHalo + kPSlots < p_planes) request_p(m + kHalo + kPSlots);
    if (m + kCellSlots < planes) request_cells(m + kCellSlots);

    float row[kRowWindow<4>], lap[4];
    plane_laplacian<4, kRowCells>(w, centre, [&](int d, int l) { return lane(queue[d], l); }, row,
                                  lap);
    const float4 n4 = advance_four<kDamped>(row, p_prev, v, lap, e_x, e_y, damp_z, k);
    const float next[4] = {n4.x, n4.y, n4.z, n4.w};
    // Every lane takes part (the block exponent's shuffles); only interior cells are stored.
    bfp16_encode_store_four<true>(next, last_lane, cells_inside, x, g.nx, (tx & 3) == 0,
                                  p_prev_next, e_prev_next, cell_index + int64_t(k) * g.plane);
#pragma unroll
    for (int d = 0; d < kQueue - 1; ++d) queue[d] = queue[d + 1];
  }
#else
  __trap(); // the launcher refuses devices before sm_90
#endif
}

template <class Shape, bool kDamped>
void launch(const WaveStepArgs& a, cudaStream_t stream, const char* name) {
  constexpr int kTileX = Shape::kTileX, kTileY = Shape::kTileY;
  const auto kernel = bfp16_tma_kernel<Shape, kDamped>;
  static const int resident_per_sm =
      tma_ring::prepare_bulk_copy_kernel(kernel, Shape::kThreads, Shape::kSharedBytes, name);
  const GridLayout& g = a.layout;
  const CUtensorMap p_map = make_plane_tensor_map(static_cast<const int16_t*>(a.p_cur), g,
                                                  Shape::kPRowCells, Shape::kRows);
  const CUtensorMap prev_map =
      make_plane_tensor_map(static_cast<const int16_t*>(a.p_prev_next), g, kTileX, kTileY);
  // bfp16_model16_tma: v2dt2 points at the model's uint16 mantissas (copied as 16-bit bits).
  const CUtensorMap model_map =
      Shape::kModel16 ? make_plane_tensor_map(static_cast<const int16_t*>(a.v2dt2), g, kTileX, kTileY)
                      : make_plane_tensor_map(static_cast<const float*>(a.v2dt2), g, kTileX, kTileY);
  int chunk = 0;
  const dim3 grid = tma_ring::ring_grid(g, kTileX, kTileY, resident_per_sm, a.sm_count, chunk);
  kernel<<<grid, dim3(Shape::kBX, Shape::kBY), Shape::kSharedBytes, stream>>>(
      p_map, prev_map, model_map, g, a.weights, static_cast<int16_t*>(a.p_prev_next),
      a.p_cur_exponents, a.p_prev_next_exponents, a.v2dt2_exponents, a.damp_x, a.damp_y,
      a.damp_z, chunk);
  CUDA_CHECK_LAUNCH(name);
}

// tma_ring's block (16x16 threads, 64x16 cells), rings at least as deep in bytes in flight: the p
// slots are about half as large (3840 B), so 16 of them (11 planes in flight) and 4 cell slots (3
// in flight); powers of two, so that slot numbers and phases are masks and shifts (12 slots cost
// ~20 more instructions a plane). 102.7 KB (bfp16_tma) / 95.2 KB (bfp16_model16_tma) of shared
// memory: 2 blocks per SM as tma_ring (113-119 registers a thread, no spills).
using Bfp16Shape = Bfp16RingShape<16, 16, 16, 4, false>;
using Bfp16Model16Shape = Bfp16RingShape<16, 16, 16, 4, true>;

} // namespace

void launch_bfp16_tma(const WaveStepArgs& a, cudaStream_t stream) {
  if (!a.p_cur_exponents || !a.p_prev_next_exponents)
    throw std::logic_error("bfp16_tma: the step needs the exponents of both wavefields");
  if (a.damped())
    launch<Bfp16Shape, true>(a, stream, "bfp16_tma (damped)");
  else
    launch<Bfp16Shape, false>(a, stream, "bfp16_tma");
}

void launch_bfp16_model16_tma(const WaveStepArgs& a, cudaStream_t stream) {
  if (!a.p_cur_exponents || !a.p_prev_next_exponents || !a.v2dt2_exponents)
    throw std::logic_error(
        "bfp16_model16_tma: the step needs the exponents of both wavefields and v2dt2");
  if (a.damped())
    launch<Bfp16Model16Shape, true>(a, stream, "bfp16_model16_tma (damped)");
  else
    launch<Bfp16Model16Shape, false>(a, stream, "bfp16_model16_tma");
}

} // namespace rtm::cuda
