// The C-PML on a GPU in one pass per region (kernels/cuda/cpml.cuh; docs/tuning-log.md section 9).
// The layer cells of a plane range are covered once each by three regions: the x layers (every j),
// the y layers less the x layers, and the z layers less both. Each region's kernel walks its own
// axis with p and psi[n] at hand: the x layers' warps own a segment of a row and take their
// neighbours along x by warp shuffles; the y and z layers' threads walk a column through the layer
// with a register queue of p (2 kHalo cells each way) and of psi[n] (kHalo each way). psi[n] along
// the walking axis is computed once per cell, stored for the next step, and used by the same pass
// for the neighbours' corrections; nothing reads psi[n] that another thread stored, so the two
// passes of solvers/contracts/cpml.h become one. A cell also in another axis' layers (the edges of
// the box) adds that axis' term from 4 kHalo + 1 values of p along that axis, recomputing the
// neighbours' psi[n] from them.
// Every value goes through the per-cell arithmetic of solvers/contracts/cpml.h in its order (the
// compiler may still contract a multiply-add differently in two kernels: the last bit, which the
// tests' float32 tolerance against the CPU covers).
#include "kernels/cuda/cpml.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.cuh"

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

// psi[n] at position u of a column (q0: the compact index less the position's part), pc[r]
// holding p at u + r: cpml_psi on values.
__device__ __forceinline__ float column_psi(const CpmlAxisView& w, int64_t q0, int u, const float* pc) {
  if (u < 0 || u >= w.n || !w.in_layer(u)) return 0.0f;
  const float dp = cpml_first_derivative_at(w, [&](int r) { return pc[r]; });
  return cpml_psi_of(w, u, w.psi_old[q0 + int64_t(w.layer_index(u)) * w.compact_stride], dp);
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
  if (v.y.in_layer(j)) correction += other_axis_term(v.y, p_cur, j, c, cpml_index_y(v, t, j, k, g.nx));
  if (v.z.in_layer(k))
    correction += other_axis_term(v.z, p_cur, k, c, cpml_index_z(v, t, j, k, g.nx, g.ny));
  add_correction(v2dt2, p_next, c, correction);
}

// One thread's walk along axis w through the layer cells [first, last) of a column: c0 and q0 are
// the field and compact indices of the column's position 0 (the compact index less the position's
// part). other(pos, c, correction) adds the terms of later axes. p and psi[n] ride in register
// queues: pq[m] holds p at t - 2 kHalo + m, sq[m] psi[n] at t - kHalo + m.
template <class T, class Other>
__device__ __forceinline__ void cpml_walk(const CpmlAxisView& w, const T* __restrict__ p_cur,
                                          const T* __restrict__ v2dt2, T* __restrict__ p_next,
                                          int64_t c0, int64_t q0, int first, int last, Other other) {
  constexpr int kP = 4 * kHalo + 1, kS = 2 * kHalo + 1;
  float pq[kP], sq[kS];
#pragma unroll
  for (int m = 0; m < kP - 1; ++m) pq[m] = column_p(w, p_cur, c0, first - 2 * kHalo + m);
#pragma unroll
  for (int m = 0; m < kS - 1; ++m) sq[m] = column_psi(w, q0, first - kHalo + m, &pq[m + kHalo]);
#pragma unroll 1
  for (int t = first; t < last; ++t) {
    pq[kP - 1] = column_p(w, p_cur, c0, t + 2 * kHalo);
    sq[kS - 1] = column_psi(w, q0, t + kHalo, &pq[3 * kHalo]);
    const int64_t c = c0 + t * w.field_stride;
    const int64_t q = q0 + int64_t(w.layer_index(t)) * w.compact_stride;
    w.psi_new[q] = sq[kHalo];
    float correction = 0.0f;
    float zeta = w.zeta[q];
    correction += cpml_axis_correction_at(w, t, zeta, [&](int r) { return sq[kHalo + r]; },
                                          [&](int r) { return pq[2 * kHalo + r]; });
    w.zeta[q] = zeta;
    other(t, c, correction);
    add_correction(v2dt2, p_next, c, correction);
#pragma unroll
    for (int m = 0; m < kP - 1; ++m) pq[m] = pq[m + 1];
#pragma unroll
    for (int m = 0; m < kS - 1; ++m) sq[m] = sq[m + 1];
  }
}

// Planes of a launch: count0 planes from first0, then the rest from first1 (two intervals: the
// two z layers inside a plane range, or one interval when count0 covers them all).
struct PlaneSet {
  int first0 = 0, count0 = 0, first1 = 0, count = 0;
  __device__ int plane(int n) const { return n < count0 ? first0 + n : first1 + (n - count0); }
};

// The y layers less the x layers: a thread per (i, k) walks j through one side's layer (blockIdx.z:
// 0 low, 1 high). kZLayers: the planes are in the z layers, whose cells add the z term (a launch
// of its own, so that the other planes' walk does not carry that code's registers).
template <bool kZLayers, class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock)
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
  if constexpr (kZLayers) {
    // The box's edges along x (7% of the layer cells at 552^3 with 20-cell layers): both terms
    // from values loaded per cell, no queue, so that two sets of register arrays are never live
    // at once (a queue and the z term's values took 128 registers and spilled).
#pragma unroll 1
    for (int j = first; j < last; ++j) {
      const int64_t c = g.index(i, j, k);
      float correction = 0.0f;
      correction += other_axis_term(y, p_cur, j, c, cpml_index_y(v, i, j, k, g.nx));
      correction += other_axis_term(v.z, p_cur, k, c, cpml_index_z(v, i, j, k, g.nx, g.ny));
      add_correction(v2dt2, p_next, c, correction);
    }
  } else {
    cpml_walk(y, p_cur, v2dt2, p_next, g.index(i, 0, k), int64_t(k) * y.length * g.nx + i, first,
              last, [](int, int64_t, float&) {});
  }
}

// The z layers less the x and y layers: a thread per (i, j) walks k through one side's planes
// inside [k_begin, k_end) (blockIdx.z: 0 low, 1 high).
template <class T>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock, 4)
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
  if (segments > 0) {
    cpml_x_kernel<T><<<dim3(blocks(g.ny, kRowsPerBlock), unsigned(segments), unsigned(planes)), block,
                       0, stream>>>(v, g, p_cur, v2dt2, p_next, k_begin, lo_segments);
    CUDA_CHECK_LAUNCH("cpml_x_kernel");
  }
  const int inner_x = g.nx - v.x.lo - v.x.hi; // columns outside the x layers
  // The range's planes in the z layers ([0, lo) and [nz - hi, nz)) and between them.
  const int z_lo_end = std::min(k_end, v.z.lo), z_hi_begin = std::max(k_begin, g.nz - v.z.hi);
  PlaneSet in_z, between;
  in_z.first0 = k_begin;
  in_z.count0 = std::max(0, z_lo_end - k_begin);
  in_z.first1 = z_hi_begin;
  in_z.count = in_z.count0 + std::max(0, k_end - z_hi_begin);
  between.first0 = std::max(k_begin, v.z.lo);
  between.count0 = between.count = std::max(0, std::min(k_end, g.nz - v.z.hi) - between.first0);
  if (v.y.lo + v.y.hi > 0 && inner_x > 0) {
    if (between.count > 0) {
      cpml_y_kernel<false, T><<<dim3(blocks(inner_x, kWarp), blocks(between.count, kRowsPerBlock), 2),
                                block, 0, stream>>>(v, g, p_cur, v2dt2, p_next, between);
      CUDA_CHECK_LAUNCH("cpml_y_kernel");
    }
    if (in_z.count > 0) {
      cpml_y_kernel<true, T><<<dim3(blocks(inner_x, kWarp), blocks(in_z.count, kRowsPerBlock), 2),
                               block, 0, stream>>>(v, g, p_cur, v2dt2, p_next, in_z);
      CUDA_CHECK_LAUNCH("cpml_y_kernel (z layers)");
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
