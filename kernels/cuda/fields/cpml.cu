// The C-PML on a GPU in one pass per region (kernels/cuda/fields/cpml.cuh; docs/tuning-log.md section 9).
// The layer cells of a plane range are covered once each by three regions: the x layers (every j),
// the y layers less the x layers, and the z layers less both. Each region's kernel walks its own
// axis with p and psi[n] at hand: the x layers' blocks hold p and psi[n] of a group of rows of
// one side in shared memory, a thread per layer cell (warps owning a segment of a row and taking
// their neighbours by shuffles remain for x interiors thinner than kHalo); the y and z layers'
// threads walk a column through the layer with a register queue of p (2 kHalo cells each way) and
// of psi[n] (kHalo each way) and the loads of the next four cells in flight (a ring of register
// slots, cpml_walk). The y layers' cells inside the z layers (the edges along x) walk z in blocks
// that share each plane's p and psi[n] along y through shared memory. psi[n] along
// the walking axis is computed once per cell, stored for the next step, and used by the same pass
// for the neighbours' corrections; nothing reads psi[n] that another thread stored, so the two
// passes of solvers/contracts/cpml.h become one. A cell of the x layers also in another axis'
// layers (the other edges of the box) adds that axis' term from 4 kHalo + 1 values of p along that
// axis, recomputing the neighbours' psi[n] from them; the edges along x recompute psi[n] along y
// the same way, once per block and row.
// Every value goes through the per-cell arithmetic of solvers/contracts/cpml.h in its order (the
// compiler may still contract a multiply-add differently in two kernels: the last bit, which the
// tests' float32 tolerance against the CPU covers).
#include "kernels/cuda/fields/cpml.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8; // warps per block (x layers), or rows of threads (y, z layers)
// A warp of the x layers owns a segment of a layer row: the correction at a cell reads psi[n] and p
// kHalo cells away, and psi[n] there reads p kHalo further. Lanes cover the segment and those
// cells; at the grid's face psi[n] is 0 beyond it, so kHalo lanes suffice on that side.
constexpr int kFaceSegment = kWarp - 3 * kHalo;  // 20 owned cells: the segment at the face
constexpr int kInnerSegment = kWarp - 4 * kHalo; // 16: further in, for layers wider than 20

__host__ __device__ inline int side_segments(int width) {
  if (width <= 0) return 0;
  return width <= kFaceSegment ? 1 : 1 + (width - kFaceSegment + kInnerSegment - 1) / kInnerSegment;
}

// Segment m (lo side first, then the hi side): owned positions [s, e) along x, lane 0 at `base`.
__device__ inline void x_segment(const CpmlAxisView& x, int m, int lo_segments, int& s, int& e,
                                 int& base) {
  if (m < lo_segments) {
    s = m == 0 ? 0 : kFaceSegment + (m - 1) * kInnerSegment;
    e = min(s + (m == 0 ? kFaceSegment : kInnerSegment), x.lo);
    base = s - (m == 0 ? kHalo : 2 * kHalo);
  } else {
    m -= lo_segments;
    e = m == 0 ? x.n : x.n - kFaceSegment - (m - 1) * kInnerSegment;
    s = max(e - (m == 0 ? kFaceSegment : kInnerSegment), x.n - x.hi);
    base = e + (m == 0 ? kHalo : 2 * kHalo) - kWarp;
  }
}

// p at position u of a column along axis w (c0: the field index of position 0); 0 outside
// [-kHalo, n + kHalo), where no value is ever used.
template <class T>
__device__ __forceinline__ float column_p(const CpmlAxisView& w, const T* __restrict__ p_cur,
                                          int64_t c0, int u) {
  return u >= -kHalo && u < w.n + kHalo ? cpml_load(p_cur, c0 + u * w.field_stride) : 0.0f;
}

// psi[n-1] at position u of a column (q0: the compact index less the position's part); 0 where
// psi is 0 (outside the grid or the layers), with no load.
__device__ __forceinline__ float column_psi_old(const CpmlAxisView& w, int64_t q0, int u) {
  if (u < 0 || u >= w.n || !w.in_layer(u)) return 0.0f;
  return w.psi_old[q0 + int64_t(w.layer_index(u)) * w.compact_stride];
}

// psi[n] at position u of a column from psi[n-1] and p_at(r) = p at u + r, wherever the caller
// keeps p: cpml_psi on values.
template <class P>
__device__ __forceinline__ float column_psi_at(const CpmlAxisView& w, int u, float psi_old,
                                               P p_at) {
  if (u < 0 || u >= w.n || !w.in_layer(u)) return 0.0f;
  const float dp = cpml_first_derivative_at(w, p_at);
  return cpml_psi_of(w, u, psi_old, dp);
}

// The same with pc[r] holding p at u + r.
__device__ __forceinline__ float column_psi_from(const CpmlAxisView& w, int u, float psi_old,
                                                 const float* pc) {
  return column_psi_at(w, u, psi_old, [&](int r) { return pc[r]; });
}

// The same with psi[n-1] loaded here, after the layer check (no load outside the layers). Its own
// body: written as column_psi_from(..., column_psi_old(...)) it kept both layer checks and took
// more registers in the x tiles' edge instance.
__device__ __forceinline__ float column_psi(const CpmlAxisView& w, int64_t q0, int u, const float* pc) {
  if (u < 0 || u >= w.n || !w.in_layer(u)) return 0.0f;
  const float dp = cpml_first_derivative_at(w, [&](int r) { return pc[r]; });
  return cpml_psi_of(w, u, w.psi_old[q0 + int64_t(w.layer_index(u)) * w.compact_stride], dp);
}

// The register queues of a column walk along w from position `first` (c0, q0 as column_p and
// column_psi_old): pq[m] p at first - 2 kHalo + m, sq[m] psi[n] at first - kHalo + m, all but the
// last entry, which each cell of the walk fills; shift_walk_queues moves them on by a cell.
constexpr int kWalkP = 4 * kHalo + 1, kWalkS = 2 * kHalo + 1;
template <class T>
__device__ __forceinline__ void fill_walk_queues(const CpmlAxisView& w, const T* __restrict__ p_cur,
                                                 int64_t c0, int64_t q0, int first,
                                                 float (&pq)[kWalkP], float (&sq)[kWalkS]) {
#pragma unroll
  for (int m = 0; m < kWalkP - 1; ++m) pq[m] = column_p(w, p_cur, c0, first - 2 * kHalo + m);
#pragma unroll
  for (int m = 0; m < kWalkS - 1; ++m) sq[m] = column_psi(w, q0, first - kHalo + m, &pq[m + kHalo]);
}
__device__ __forceinline__ void shift_walk_queues(float (&pq)[kWalkP], float (&sq)[kWalkS]) {
#pragma unroll
  for (int m = 0; m < kWalkP - 1; ++m) pq[m] = pq[m + 1];
#pragma unroll
  for (int m = 0; m < kWalkS - 1; ++m) sq[m] = sq[m + 1];
}

// The term of an axis other than the kernel's own at a cell in that axis' layers (position pos
// along it, field index c, compact index q): the 4 kHalo + 1 values of p along the axis loaded
// once, psi[n] at the cell and its 2 kHalo neighbours computed from them (cpml_psi on values;
// the cell's stored), then the correction; as cpml_axis_correction with every neighbour
// recomputed, at a quarter of its loads.
template <class T>
__device__ __forceinline__ float other_axis_term(const CpmlAxisView& w, const T* __restrict__ p_cur,
                                                 int pos, int64_t c, int64_t q) {
  const int64_t c0 = c - pos * w.field_stride;
  const int64_t q0 = q - int64_t(w.layer_index(pos)) * w.compact_stride;
  float pa[4 * kHalo + 1], sa[2 * kHalo + 1];
#pragma unroll
  for (int m = 0; m <= 4 * kHalo; ++m) pa[m] = column_p(w, p_cur, c0, pos - 2 * kHalo + m);
#pragma unroll
  for (int m = 0; m <= 2 * kHalo; ++m) sa[m] = column_psi(w, q0, pos - kHalo + m, &pa[m + kHalo]);
  w.psi_new[q] = sa[kHalo];
  float zeta = w.zeta[q];
  const float correction = cpml_axis_correction_at(w, pos, zeta, [&](int r) { return sa[kHalo + r]; },
                                                   [&](int r) { return pa[2 * kHalo + r]; });
  w.zeta[q] = zeta;
  return correction;
}

// p[n+1] += v2dt2 * correction, as cpml_cell.
template <class T>
__device__ __forceinline__ void add_correction(const T* v2dt2, T* p_next, int64_t c, float correction) {
  p_next[c] = T(cpml_load(p_next, c) + cpml_load(v2dt2, c) * correction);
}

// The x layers: a warp per (segment, row j, plane k); every cell's x term, and the y and z terms
// of the cells also in those layers.
template <class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock)
    cpml_x_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                  const T* __restrict__ v2dt2, T* __restrict__ p_next, int k_first, int lo_segments) {
  const int j = int(blockIdx.x) * kRowsPerBlock + int(threadIdx.y);
  if (j >= g.ny) return; // the whole warp
  const int k = k_first + int(blockIdx.z);
  const int lane = int(threadIdx.x);
  const CpmlAxisView& x = v.x;
  int s = 0, e = 0, base = 0;
  x_segment(x, int(blockIdx.y), lo_segments, s, e, base);
  const int t = base + lane;
  const int64_t c = g.index(t, j, k);
  // p exists on [-kHalo, n + kHalo); lanes beyond hold 0 and their values are never used.
  const float p = t >= -kHalo && t < x.n + kHalo ? cpml_load(p_cur, c) : 0.0f;
  float pn[2 * kHalo + 1]; // p at t + r, r = -kHalo..kHalo (valid where the lanes reach)
#pragma unroll
  for (int r = -kHalo; r <= kHalo; ++r)
    pn[r + kHalo] = r > 0 ? __shfl_down_sync(kFullMask, p, r)
                          : r < 0 ? __shfl_up_sync(kFullMask, p, -r) : p;
  const float dp = cpml_first_derivative_at(x, [&](int r) { return pn[r + kHalo]; });
  const bool in_layer = t >= 0 && t < x.n && x.in_layer(t);
  const int64_t q = (int64_t(k) * g.ny + j) * x.length + (in_layer ? x.layer_index(t) : 0);
  const float psi = in_layer ? cpml_psi_of(x, t, x.psi_old[q], dp) : 0.0f; // as cpml_psi
  float sn[2 * kHalo + 1]; // psi[n] at t + r
#pragma unroll
  for (int r = -kHalo; r <= kHalo; ++r)
    sn[r + kHalo] = r > 0 ? __shfl_down_sync(kFullMask, psi, r)
                          : r < 0 ? __shfl_up_sync(kFullMask, psi, -r) : psi;
  if (t < s || t >= e) return; // halo lanes: their part is done
  x.psi_new[q] = psi;
  float correction = 0.0f;
  float zeta = x.zeta[q];
  correction += cpml_axis_correction_at(x, t, zeta, [&](int r) { return sn[r + kHalo]; },
                                        [&](int r) { return pn[r + kHalo]; });
  x.zeta[q] = zeta;
  if (v.y.in_layer(j))
    correction += other_axis_term(v.y, p_cur, j, c, cpml_index_y(v, t, j, k, g.nx));
  if (v.z.in_layer(k))
    correction += other_axis_term(v.z, p_cur, k, c, cpml_index_z(v, t, j, k, g.nx, g.ny));
  add_correction(v2dt2, p_next, c, correction);
}

// Planes (or rows) of a launch: count0 from first0, then the rest from first1 (two intervals: the
// two z layers inside a plane range, or one interval when count0 covers them all).
struct PlaneSet {
  int first0 = 0, count0 = 0, first1 = 0, count = 0;
  __device__ int plane(int n) const { return n < count0 ? first0 + n : first1 + (n - count0); }
};

// The x layers, one side (x0: its first position, width: its cells) of a group of rows (j0 + r,
// plane k) per block, a thread per layer cell (consecutive threads along x, then the next row: no
// idle lanes). The block's p over [x0 - kHalo, x0 + width + kHalo) and psi[n] over the same
// positions (0 outside the side's layer) sit in shared memory. Each thread issues all its own loads
// (psi[n-1], zeta, p[n+1], v2dt2) before the tile's, so that one memory round trip covers them.
// Needs an interior of at least kHalo cells (no neighbour of this side's cells in the other
// layer) and width <= kXThreads; cpml_x_kernel takes the other shapes. Measured: the warp-segment
// kernel moved 52 B/cell at 25% of the DRAM bandwidth with 12 of 32 lanes on halo only
// (docs/tuning-log.md section 9).
constexpr int kXThreads = 256;

// kEdges: the rows or planes hold cells also in the y or z layers, which add those terms (an
// instance of its own: their values took 62 registers, the x term alone far fewer).
template <bool kEdges, class T>
__global__ void __launch_bounds__(kXThreads)
    cpml_x_side_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                       const T* __restrict__ v2dt2, T* __restrict__ p_next, const PlaneSet rows,
                       const PlaneSet planes, int x0, int width) {
  extern __shared__ float tile[]; // p, then psi[n]: block_rows x (width + 2 kHalo) each
  const int w = width + 2 * kHalo;
  const int block_rows = kXThreads / width;
  float* ps = tile;
  float* ss = tile + block_rows * w;
  const int n0 = int(blockIdx.x) * block_rows; // the block's first row in `rows`
  const int k = planes.plane(int(blockIdx.y));
  const int f = int(threadIdx.x);
  const int r = f / width;      // the thread's row in the block
  const int u = f - r * width;  // its cell's position in the side's layer
  const bool active = r < block_rows && n0 + r < rows.count;
  const int j = rows.plane(n0 + r);
  const CpmlAxisView& x = v.x;
  const int t = x0 + u;
  int64_t c = 0, q = 0;
  float psi_old = 0.0f, zeta = 0.0f, p_next_old = 0.0f, v2 = 0.0f;
  if (active) {
    c = g.index(t, j, k);
    q = (int64_t(k) * g.ny + j) * x.length + x.layer_index(t);
    psi_old = x.psi_old[q];
    zeta = x.zeta[q];
    p_next_old = cpml_load(p_next, c);
    v2 = cpml_load(v2dt2, c);
  }
  for (int e = f; e < block_rows * w; e += kXThreads) {
    const int er = e / w;
    ps[e] = n0 + er < rows.count
                ? cpml_load(p_cur, g.index(x0 - kHalo + (e - er * w), rows.plane(n0 + er), k))
                : 0.0f;
    ss[e] = 0.0f; // psi[n] outside the side's layer (beyond the face, or in the interior)
  }
  __syncthreads();
  const int at = r * w + u + kHalo; // the cell in the tile
  float psi = 0.0f;
  if (active) {
    const float dp = cpml_first_derivative_at(x, [&](int d) { return ps[at + d]; });
    psi = cpml_psi_of(x, t, psi_old, dp); // as cpml_psi: t is in the layer
    ss[at] = psi;
  }
  __syncthreads();
  if (!active) return;
  x.psi_new[q] = psi;
  float correction = 0.0f;
  correction += cpml_axis_correction_at(x, t, zeta, [&](int d) { return ss[at + d]; },
                                        [&](int d) { return ps[at + d]; });
  x.zeta[q] = zeta;
  if constexpr (kEdges) {
    if (v.y.in_layer(j)) correction += other_axis_term(v.y, p_cur, j, c, cpml_index_y(v, t, j, k, g.nx));
    if (v.z.in_layer(k))
      correction += other_axis_term(v.z, p_cur, k, c, cpml_index_z(v, t, j, k, g.nx, g.ny));
  }
  p_next[c] = T(p_next_old + v2 * correction); // add_correction on the values loaded first
}

// x in a register of its own: a copy that ptxas keeps (it coalesces a plain assignment), made
// when the value has come, so that the register x came in is free for the next load.
__device__ __forceinline__ float register_copy(float x) {
  float y;
  asm volatile("mov.b32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The loads of one cell of a walk (cpml_walk): p 2 kHalo cells ahead and psi[n-1] kHalo cells
// ahead (the ends of the queues), and the cell's own zeta, p[n+1] and v2dt2. The fields stay in
// their storage type until the cell uses them: a conversion right after the load would wait for it.
template <class T>
struct WalkLoads {
  T p_far;
  float psi_old_far, zeta;
  T p_next_old, v2;
};
// Cells whose loads are in flight while a walk computes one: 4 x ~20 bytes per thread keep the
// memory busy at 37.5% occupancy, where one cell's (what the loop issued before) capped it near
// 2.6 TB/s (docs/tuning-log.md section 9a).
constexpr int kWalkAhead = 4;
// Slots of the ring: one more than the cells in flight, so that cell t + kWalkAhead's loads go
// into the slot that cell t - 1 has finished with and cell t's values stay where they were
// loaded. With kWalkAhead slots the new loads would land in registers still in use by cell t and
// the compiler would copy them at the loop's back edge, waiting there for every load in flight.
constexpr int kWalkSlots = kWalkAhead + 1;

// One thread's walk along axis w through the layer cells [first, last) of a column: c0 and q0 are
// the field and compact indices of the column's position 0 (the compact index less the position's
// part). other(pos, c, correction) adds the terms of later axes. p and psi[n] ride in register
// queues: pq[m] holds p at t - 2 kHalo + m, sq[m] psi[n] at t - kHalo + m. Each cell's loads
// (WalkLoads) are issued kWalkAhead cells ahead into a ring of kWalkSlots register slots, the
// loop unrolled kWalkSlots times so that every slot is named at compile time (registers, no local
// memory): while cell t computes and stores, the loads of cells t + 1 .. t + kWalkAhead are in
// flight. The loads of cell t + kWalkAhead come before cell t's stores in program order: the
// compiler may not move a load across a store that it cannot prove apart (psi[n], zeta and p[n+1]
// are stored through pointers that may alias the loads), so program order is issue order. No
// load reads a value this thread or another stores in the step: p[n], psi[n-1] and v2dt2 are
// never stored, and zeta and p[n+1] of cell t + kWalkAhead are stored by this thread only, after
// that load (docs/tuning-log.md section 9a).
template <class T, class Other>
__device__ __forceinline__ void cpml_walk(const CpmlAxisView& w, const T* __restrict__ p_cur,
                                          const T* __restrict__ v2dt2, T* __restrict__ p_next,
                                          int64_t c0, int64_t q0, int first, int last, Other other) {
  constexpr int kP = kWalkP, kS = kWalkS;
  float pq[kP], sq[kS];
  fill_walk_queues(w, p_cur, c0, q0, first, pq, sq);
  auto load = [&](int t, WalkLoads<T>& l) {
    const int u = t + 2 * kHalo; // as column_p
    l.p_far = u < w.n + kHalo ? p_cur[c0 + u * w.field_stride] : T(0.0f);
    l.psi_old_far = column_psi_old(w, q0, t + kHalo);
    const int64_t c = c0 + t * w.field_stride;
    l.zeta = w.zeta[q0 + int64_t(w.layer_index(t)) * w.compact_stride];
    l.p_next_old = p_next[c];
    l.v2 = v2dt2[c];
  };
  // Cell t from its loads: psi[n] kHalo ahead into the queue, then the correction and the stores.
  auto cell = [&](int t, const WalkLoads<T>& l) {
    // p stays in the queue for 4 kHalo cells, so it needs a register of its own: left to itself,
    // ptxas kept it in the slot's register and copied the slot's next load at the loop's back
    // edge, waiting there for that load.
    pq[kP - 1] = register_copy(float(l.p_far));
    sq[kS - 1] = column_psi_from(w, t + kHalo, l.psi_old_far, &pq[3 * kHalo]);
    const int64_t c = c0 + t * w.field_stride;
    const int64_t q = q0 + int64_t(w.layer_index(t)) * w.compact_stride;
    w.psi_new[q] = sq[kHalo];
    float correction = 0.0f;
    float zeta = l.zeta;
    correction += cpml_axis_correction_at(w, t, zeta, [&](int r) { return sq[kHalo + r]; },
                                          [&](int r) { return pq[2 * kHalo + r]; });
    w.zeta[q] = zeta;
    other(t, c, correction);
    p_next[c] = T(float(l.p_next_old) + float(l.v2) * correction); // add_correction, loaded ahead
    shift_walk_queues(pq, sq);
  };
  WalkLoads<T> ring[kWalkSlots] = {};
#pragma unroll
  for (int s = 0; s < kWalkAhead; ++s)
    if (first + s < last) load(first + s, ring[s]);
  // Cell t0 + s in slot s; the walk may end at any s (a layer of any width, a plane range's end).
#pragma unroll 1
  for (int t0 = first; t0 < last; t0 += kWalkSlots) {
#pragma unroll
    for (int s = 0; s < kWalkSlots; ++s) {
      const int t = t0 + s;
      if (t >= last) break;
      // Past the walk's end the last cell's loads again (unused): predicated loads spilled.
      load(min(t + kWalkAhead, last - 1), ring[(s + kWalkAhead) % kWalkSlots]);
      cell(t, ring[s]);
    }
  }
}

// The y layers less the x layers, on the planes between the z layers: a thread per (i, k) walks j
// through one side's layer (blockIdx.z: 0 low, 1 high). 3 blocks per SM: the walk's ring takes
// 76-80 registers (4 blocks would cap them at 64 and spill).
template <class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock, 3)
    cpml_y_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                  const T* __restrict__ v2dt2, T* __restrict__ p_next, const PlaneSet planes) {
  const int i = v.x.lo + int(blockIdx.x) * kWarp + int(threadIdx.x);
  const int n = int(blockIdx.y) * kRowsPerBlock + int(threadIdx.y);
  if (i >= g.nx - v.x.hi || n >= planes.count) return;
  const int k = planes.plane(n);
  const CpmlAxisView& y = v.y;
  const int first = blockIdx.z == 0 ? 0 : g.ny - y.hi;
  const int last = blockIdx.z == 0 ? y.lo : g.ny;
  if (first >= last) return; // no layer on this side
  cpml_walk(y, p_cur, v2dt2, p_next, g.index(i, 0, k), int64_t(k) * y.length * g.nx + i, first,
            last, [](int, int64_t, float&) {});
}

// The y layers' cells inside the z layers, less the x layers (the box's edges along x): both
// terms per cell, from values that neighbouring cells share. A block of kWarp x kEdgeRows threads
// owns a chunk of at most kEdgeRows rows j of one y layer (a thread per (i, j)) and walks a run of
// at most kEdgePlanes planes k of one z layer; each thread keeps its column's p and psi[n] along z
// in register queues (the z term, as cpml_walk), and the block puts each plane's p over the
// chunk's rows and 2 kHalo beyond into shared memory, then psi[n] along y over the rows and kHalo
// beyond (the y term). A cell then costs ~12 loads (p: ~3 along y, 1 along z; psi[n-1] ~2 along y,
// 1 along z; two zetas, p[n+1], v2dt2), where a thread per cell issued ~60 (17 values of p and 9
// of psi[n-1] per axis, little reuse) and waited on them: 75 us for 0.8 M cells at 12.6% of the
// DRAM bandwidth and 32% warps active (H100, docs/tuning-log.md section 9b). The slice's p of the
// next plane is loaded while this plane computes; the plane's other loads go out before its two
// barriers. 3 blocks per SM at 80 registers: psi[n-1] along y in the next plane's slot too took
// more and spilled. A walk along j alone gave 160 blocks at 15% occupancy, and its queue with the
// z term's values spilled (section 9).
constexpr int kEdgeRows = kRowsPerBlock;           // thread rows; a chunk's rows j (at most)
constexpr int kEdgeP = kEdgeRows + 4 * kHalo;      // rows of a plane's p in shared memory
constexpr int kEdgeS = kEdgeRows + 2 * kHalo;      // rows of its psi[n] along y
constexpr int kEdgePRounds = (kEdgeP + kEdgeRows - 1) / kEdgeRows; // p rows a thread loads
constexpr int kEdgeSRounds = (kEdgeS + kEdgeRows - 1) / kEdgeRows; // psi[n] rows it computes
constexpr int kEdgePlanes = 10; // planes a block walks, about: a z layer's run split evenly
constexpr int kEdgeSlots = 2;  // planes of p and psi[n] in shared memory
constexpr size_t kEdgeShared = size_t(kEdgeSlots) * (kEdgeP + kEdgeS) * kWarp * sizeof(float);

// A run of n cells in pieces of at most `most`, as even as can be: how many, and how long.
__host__ __device__ inline int pieces(int n, int most) { return (n + most - 1) / most; }
__host__ __device__ inline int piece_length(int n, int most) {
  return n <= 0 ? 0 : (n + pieces(n, most) - 1) / pieces(n, most);
}

// Piece `b` of two runs split so (count0 cells from first0, then count1 from first1): its first
// cell and its length.
__device__ inline void run_piece(int b, int first0, int count0, int first1, int count1, int most,
                                 int& first, int& length) {
  const int n0 = count0 > 0 ? pieces(count0, most) : 0;
  const bool second = b >= n0;
  const int count = second ? count1 : count0, len = piece_length(count, most);
  const int p = second ? b - n0 : b;
  first = (second ? first1 : first0) + p * len;
  length = min(len, count - p * len);
}

// The slice's loads of a plane: p at a thread's rows of it (storage type until use, as WalkLoads).
template <class T>
struct EdgeSlice {
  T p[kEdgePRounds];
};

template <class T>
__global__ void __launch_bounds__(kWarp* kEdgeRows, 3)
    cpml_yz_edge_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                        const T* __restrict__ v2dt2, T* __restrict__ p_next, const PlaneSet planes) {
  extern __shared__ float edge_tile[]; // kEdgeSlots x (p: kEdgeP rows, psi[n]: kEdgeS rows) x kWarp
  const CpmlAxisView& y = v.y;
  const CpmlAxisView& z = v.z;
  const int lane = int(threadIdx.x), ty = int(threadIdx.y);
  int j0 = 0, rows = 0, kf = 0, kn = 0;
  run_piece(int(blockIdx.y), 0, y.lo, g.ny - y.hi, y.hi, kEdgeRows, j0, rows);
  run_piece(int(blockIdx.z), planes.first0, planes.count0, planes.first1,
            planes.count - planes.count0, kEdgePlanes, kf, kn);
  const int kl = kf + kn;
  const int i_end = g.nx - v.x.hi;
  const int i_cell = v.x.lo + int(blockIdx.x) * kWarp + lane;
  // Threads beyond the x interior or the chunk's rows load for a cell of the block (never used but
  // valid addresses, no predicates) and store nothing; all of them take part in the barriers.
  const bool active = i_cell < i_end && ty < rows;
  const int i = min(i_cell, i_end - 1), r = min(ty, rows - 1), j = j0 + r;
  const int64_t cy0 = g.index(i, 0, 0), cz0 = g.index(i, j, 0); // columns along y (less k), z
  const int64_t qz0 = int64_t(j) * g.nx + i;
  // The z queues, as cpml_walk: pq[m] p at t - 2 kHalo + m, sq[m] psi[n] at t - kHalo + m.
  constexpr int kP = kWalkP, kS = kWalkS;
  float pq[kP], sq[kS];
  fill_walk_queues(z, p_cur, cz0, qz0, kf, pq, sq);
  auto load = [&](int t, EdgeSlice<T>& l) {
    const int64_t ct = cy0 + int64_t(t) * g.plane;
#pragma unroll
    for (int n = 0; n < kEdgePRounds; ++n) { // slice row m: p at j0 - 2 kHalo + m, as column_p
      const int m = ty + n * kEdgeRows, u = j0 - 2 * kHalo + m;
      l.p[n] = m < kEdgeP && u >= -kHalo && u < y.n + kHalo ? p_cur[ct + u * y.field_stride]
                                                            : T(0.0f);
    }
  };
  // Plane t from its loads, in shared slot `slot`: the y term from the block's rows, then the z
  // term from the queues (in other_axis_term's order: y, then z).
  auto cell = [&](int t, const EdgeSlice<T>& l, int slot) {
    // This plane's other loads first, in flight across the barriers (the slice's came a plane
    // ahead; the psi[n-1] along y here too: in the ring with the slice they took 4 more registers
    // than the 80 of 3 blocks per SM, and spilled).
    float psi_old_y[kEdgeSRounds]; // at the thread's rows of psi[n]: row s at j0 - kHalo + s
#pragma unroll
    for (int n = 0; n < kEdgeSRounds; ++n)
      psi_old_y[n] =
          column_psi_old(y, int64_t(t) * y.length * g.nx + i, j0 - kHalo + ty + n * kEdgeRows);
    const int u = t + 2 * kHalo; // as column_p
    const T p_far = u < z.n + kHalo ? p_cur[cz0 + u * z.field_stride] : T(0.0f);
    const float psi_old_far = column_psi_old(z, qz0, t + kHalo);
    const int64_t qy = cpml_index_y(v, i, j, t, g.nx);
    const int64_t qz = qz0 + int64_t(z.layer_index(t)) * z.compact_stride; // cpml_index_z
    const int64_t c = cz0 + int64_t(t) * z.field_stride;
    const float zeta_y = y.zeta[qy], zeta_z = z.zeta[qz];
    const T p_next_old = p_next[c], v2 = v2dt2[c];
    float* ps = edge_tile + slot * (kEdgeP + kEdgeS) * kWarp; // p: row m at j0 - 2 kHalo + m
    float* ss = ps + kEdgeP * kWarp;                             // psi[n]: row s at j0 - kHalo + s
#pragma unroll
    for (int n = 0; n < kEdgePRounds; ++n) {
      const int m = ty + n * kEdgeRows;
      if (m < kEdgeP) ps[m * kWarp + lane] = float(l.p[n]);
    }
    __syncthreads();
#pragma unroll
    for (int n = 0; n < kEdgeSRounds; ++n) {
      const int s = ty + n * kEdgeRows;
      if (s < kEdgeS)
        ss[s * kWarp + lane] = column_psi_at(y, j0 - kHalo + s, psi_old_y[n], [&](int d) {
          return ps[(s + kHalo + d) * kWarp + lane];
        });
    }
    __syncthreads();
    pq[kP - 1] = register_copy(float(p_far));
    sq[kS - 1] = column_psi_from(z, t + kHalo, psi_old_far, &pq[3 * kHalo]);
    if (active) {
      const float* pc = ps + (r + 2 * kHalo) * kWarp + lane; // the cell's p, then psi[n]
      const float* sc = ss + (r + kHalo) * kWarp + lane;
      y.psi_new[qy] = sc[0];
      float correction = 0.0f;
      float zeta = zeta_y;
      correction += cpml_axis_correction_at(y, j, zeta, [&](int d) { return sc[d * kWarp]; },
                                            [&](int d) { return pc[d * kWarp]; });
      y.zeta[qy] = zeta;
      z.psi_new[qz] = sq[kHalo];
      zeta = zeta_z;
      correction += cpml_axis_correction_at(z, t, zeta, [&](int d) { return sq[kHalo + d]; },
                                            [&](int d) { return pq[2 * kHalo + d]; });
      z.zeta[qz] = zeta;
      p_next[c] = T(float(p_next_old) + float(v2) * correction); // add_correction, loaded first
    }
    shift_walk_queues(pq, sq);
  };
  // The slice's loads one plane ahead; the shared memory alternates between two slots, so that a
  // plane's stores into it wait only for the barriers that the plane two back passed after its
  // reads. The run's bounds are the block's, so every thread takes every barrier.
  EdgeSlice<T> next;
  load(kf, next);
#pragma unroll 1
  for (int t = kf; t < kl; ++t) {
    const EdgeSlice<T> now = next; // loaded a plane ago
    load(min(t + 1, kl - 1), next); // past the run's end the last plane again (unused)
    cell(t, now, (t - kf) & 1);
  }
}

// The z layers less the x and y layers: a thread per (i, j) walks k through one side's planes
// inside [k_begin, k_end) (blockIdx.z: 0 low, 1 high). 3 blocks per SM, as cpml_y_kernel.
template <class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock, 3)
    cpml_z_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                  const T* __restrict__ v2dt2, T* __restrict__ p_next, int k_begin, int k_end) {
  const int i = v.x.lo + int(blockIdx.x) * kWarp + int(threadIdx.x);
  const int j = v.y.lo + int(blockIdx.y) * kRowsPerBlock + int(threadIdx.y);
  if (i >= g.nx - v.x.hi || j >= g.ny - v.y.hi) return;
  const CpmlAxisView& z = v.z;
  const int first = max(k_begin, blockIdx.z == 0 ? 0 : g.nz - z.hi);
  const int last = min(k_end, blockIdx.z == 0 ? z.lo : g.nz);
  if (first >= last) return;
  cpml_walk(z, p_cur, v2dt2, p_next, g.index(i, j, 0), int64_t(j) * g.nx + i, first, last,
            [](int, int64_t, float&) {});
}

template <class T>
void launch_regions(const CpmlView& v, const GridLayout& g, const T* p_cur, const T* v2dt2,
                    T* p_next, int k_begin, int k_end, cudaStream_t stream) {
  const dim3 block(kWarp, kRowsPerBlock);
  auto blocks = [](int n, int b) { return unsigned((n + b - 1) / b); };
  const int lo_segments = side_segments(v.x.lo);
  const int segments = lo_segments + side_segments(v.x.hi);
  const int planes = k_end - k_begin;
  // The range's planes in the z layers ([0, lo) and [nz - hi, nz)) and between them.
  const int z_lo_end = std::min(k_end, v.z.lo), z_hi_begin = std::max(k_begin, g.nz - v.z.hi);
  PlaneSet in_z, between;
  in_z.first0 = k_begin;
  in_z.count0 = std::max(0, z_lo_end - k_begin);
  in_z.first1 = z_hi_begin;
  in_z.count = in_z.count0 + std::max(0, k_end - z_hi_begin);
  between.first0 = std::max(k_begin, v.z.lo);
  between.count0 = between.count = std::max(0, std::min(k_end, g.nz - v.z.hi) - between.first0);
  // Rows j of the y layers ([0, lo) and [ny - hi, ny)), between them, and all of them.
  PlaneSet y_rows, inner_rows, all_rows;
  y_rows.first0 = 0;
  y_rows.count0 = v.y.lo;
  y_rows.first1 = g.ny - v.y.hi;
  y_rows.count = v.y.lo + v.y.hi;
  inner_rows.first0 = v.y.lo;
  inner_rows.count0 = inner_rows.count = std::max(0, g.ny - v.y.lo - v.y.hi);
  all_rows.count0 = all_rows.count = g.ny;
  // The tile kernel where no neighbour of a side's cells lies in the other layer and a row of
  // the side fits a block; the warp-segment kernel otherwise (thin interiors, very wide layers).
  const bool x_tiles = g.nx - v.x.lo - v.x.hi >= kHalo && std::max(v.x.lo, v.x.hi) <= kXThreads;
  if (segments > 0 && x_tiles) {
    for (int side = 0; side < 2; ++side) {
      const int x0 = side == 0 ? 0 : g.nx - v.x.hi, width = side == 0 ? v.x.lo : v.x.hi;
      if (width == 0) continue;
      const int rows = kXThreads / width;
      const size_t shared = size_t(2) * rows * (width + 2 * kHalo) * sizeof(float);
      auto launch = [&](auto kernel, const PlaneSet& row_set, const PlaneSet& plane_set) {
        if (row_set.count == 0 || plane_set.count == 0) return;
        kernel<<<dim3(blocks(row_set.count, rows), unsigned(plane_set.count)), kXThreads, shared,
                 stream>>>(v, g, p_cur, v2dt2, p_next, row_set, plane_set, x0, width);
        CUDA_CHECK_LAUNCH("cpml_x_side_kernel");
      };
      launch(cpml_x_side_kernel<false, T>, inner_rows, between); // the x term only
      launch(cpml_x_side_kernel<true, T>, y_rows, between);
      launch(cpml_x_side_kernel<true, T>, all_rows, in_z);
    }
  } else if (segments > 0) {
    cpml_x_kernel<T><<<dim3(blocks(g.ny, kRowsPerBlock), unsigned(segments), unsigned(planes)), block,
                       0, stream>>>(v, g, p_cur, v2dt2, p_next, k_begin, lo_segments);
    CUDA_CHECK_LAUNCH("cpml_x_kernel");
  }
  const int inner_x = g.nx - v.x.lo - v.x.hi; // columns outside the x layers
  if (v.y.lo + v.y.hi > 0 && inner_x > 0) {
    if (between.count > 0) {
      cpml_y_kernel<T><<<dim3(blocks(inner_x, kWarp), blocks(between.count, kRowsPerBlock), 2),
                                block, 0, stream>>>(v, g, p_cur, v2dt2, p_next, between);
      CUDA_CHECK_LAUNCH("cpml_y_kernel");
    }
    if (in_z.count > 0) {
      const int row_pieces = (v.y.lo > 0 ? pieces(v.y.lo, kEdgeRows) : 0) +
                             (v.y.hi > 0 ? pieces(v.y.hi, kEdgeRows) : 0);
      const int count1 = in_z.count - in_z.count0;
      const int plane_pieces = (in_z.count0 > 0 ? pieces(in_z.count0, kEdgePlanes) : 0) +
                               (count1 > 0 ? pieces(count1, kEdgePlanes) : 0);
      cpml_yz_edge_kernel<T><<<dim3(blocks(inner_x, kWarp), unsigned(row_pieces),
                                    unsigned(plane_pieces)),
                               dim3(kWarp, kEdgeRows), kEdgeShared, stream>>>(v, g, p_cur, v2dt2,
                                                                             p_next, in_z);
      CUDA_CHECK_LAUNCH("cpml_yz_edge_kernel");
    }
  }
  const int inner_y = g.ny - v.y.lo - v.y.hi;
  if (in_z.count > 0 && inner_x > 0 && inner_y > 0) {
    cpml_z_kernel<T><<<dim3(blocks(inner_x, kWarp), blocks(inner_y, kRowsPerBlock), 2), block, 0,
                       stream>>>(v, g, p_cur, v2dt2, p_next, k_begin, k_end);
    CUDA_CHECK_LAUNCH("cpml_z_kernel");
  }
}

int64_t axis_cells(const CpmlProfiles& c, const GridLayout& g, int axis) {
  return axis == 0 ? cpml_cells_x(c, g) : axis == 1 ? cpml_cells_y(c, g) : cpml_cells_z(c, g);
}

} // namespace

size_t DeviceCpml::bytes(const CpmlProfiles& c, const GridLayout& g) {
  if (c.empty()) return 0;
  return size_t(cpml_memory_floats(c, g) + 2 * (int64_t(g.nx) + g.ny + g.nz)) * sizeof(float);
}

DeviceCpml::DeviceCpml(const CpmlProfiles& c, const GridLayout& g, int device, cudaStream_t stream)
    : layout_(g), host_(c) {
  if (c.empty()) return;
  const CpmlAxis* axes[3] = {&c.x, &c.y, &c.z};
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int d = 0; d < 3; ++d) {
    if (axes[d]->n != n[d] || (axes[d]->layer_cells() > 0 && (int(axes[d]->a.size()) != n[d] ||
                                                              int(axes[d]->b.size()) != n[d])))
      throw std::invalid_argument("C-PML profiles must be for an nx x ny x nz grid");
    if (axes[d]->layer_cells() > 0) {
      for (auto [dst, src] : {std::pair{&a_[d], &axes[d]->a}, std::pair{&b_[d], &axes[d]->b}}) {
        *dst = DeviceBuffer(src->size() * sizeof(float), AllocationKind::plain, device);
        CUDA_CHECK(cudaMemcpyAsync(dst->data(), src->data(), dst->bytes(), cudaMemcpyHostToDevice, stream));
      }
    }
    const size_t bytes = size_t(axis_cells(c, g, d)) * sizeof(float);
    if (bytes == 0) continue;
    psi_[0][d] = DeviceBuffer(bytes, AllocationKind::plain, device);
    psi_[1][d] = DeviceBuffer(bytes, AllocationKind::plain, device);
    zeta_[d] = DeviceBuffer(bytes, AllocationKind::plain, device);
  }
  active_ = true;
  zero(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream)); // the host profiles' uploads are done
}

void DeviceCpml::zero(cudaStream_t stream) {
  for (int d = 0; d < 3; ++d)
    for (DeviceBuffer* buffer : {&psi_[0][d], &psi_[1][d], &zeta_[d]})
      if (buffer->bytes() > 0) CUDA_CHECK(cudaMemsetAsync(buffer->data(), 0, buffer->bytes(), stream));
}

void DeviceCpml::apply(Storage storage, const void* p_cur, const void* v2dt2, void* p_next,
                       int k_begin, int k_end, cudaStream_t stream) {
  if (!active_ || k_begin >= k_end) return;
  const GridLayout& g = layout_;
  CpmlView v;
  v.x = make_cpml_axis_view(host_.x, 1, 1);
  v.y = make_cpml_axis_view(host_.y, g.pitch, g.nx);
  v.z = make_cpml_axis_view(host_.z, g.plane, int64_t(g.nx) * g.ny);
  CpmlAxisView* axes[3] = {&v.x, &v.y, &v.z};
  for (int d = 0; d < 3; ++d) {
    axes[d]->a = a_[d].as<float>();
    axes[d]->b = b_[d].as<float>();
    axes[d]->psi_old = psi_[old_][d].as<float>();
    axes[d]->psi_new = psi_[1 - old_][d].as<float>();
    axes[d]->zeta = zeta_[d].as<float>();
  }
  // No kernel reads psi[n] that another thread stored (the fresh ranges go unread): a plane range
  // needs no special case.
  if (storage == Storage::fp32) {
    launch_regions(v, g, static_cast<const float*>(p_cur), static_cast<const float*>(v2dt2),
                   static_cast<float*>(p_next), k_begin, k_end, stream);
  } else {
    launch_regions(v, g, static_cast<const __half*>(p_cur), static_cast<const __half*>(v2dt2),
                   static_cast<__half*>(p_next), k_begin, k_end, stream);
  }
}

} // namespace rtm::cuda
