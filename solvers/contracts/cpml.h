// The convolutional PML (C-PML) of the absorbing layers, as a correction ADDED to the undamped step
// (docs/physics.md, "Absorbing layers"; Pasalic & McGarry, SEG 2010):
//
//   p_tt = v² ( lap p + sum_d ( D_d psi_d + zeta_d ) )            d = x, y, z, in d's layers only
//   psi_d  = b psi_d  + a D_d p                                    (memory variables, per cell)
//   zeta_d = b zeta_d + a ( D2_d p + D_d psi_d )
//   b = exp(-(d0 + alpha) dt),  a = d0 / (d0 + alpha) (b - 1)      (per axis position, kappa = 1)
//
// D_d is the 8th-order centred first derivative, D2_d the axis' part of the 8th-order Laplacian.
// So a backend runs its ordinary undamped step over the whole grid, then adds
//   p[n+1] += v2dt2 * sum_d ( D_d psi_d[n] + zeta_d[n] )
// on the layer cells. Plain C++ shared by the CPU reference and the CUDA kernel (kernels/cuda/fields/cpml.cu):
// one definition of the per-cell arithmetic, so both round the same way.
//
// Memory variables live only in the layers: per axis, a compact array over the cells of that
// axis' two layers (lo + hi cells along the axis, the full extent along the other two), with kHalo
// guard cells around each layer along the axis that hold psi = 0 (the value outside the layers):
// D_d psi_d then reads its eight neighbours without asking where they are, which halved the GPU
// pass's time (docs/tuning-log.md, section 6). psi is
// read at neighbours (D_d psi_d), so it is double-buffered: a step (or part of one, step_planes
// over planes k0..k1-1) first stores psi[n] of its own cells from psi[n-1] and p[n] (pass 1), then
// adds the corrections (pass 2), reading psi[n] where pass 1 stored it and recomputing it from
// psi[n-1] and p[n] elsewhere (only across the ends of the plane range, along z): the same
// arithmetic, so the same bits. Any split of a step into plane ranges gives every cell the bits a
// whole step gives it. zeta is read at its own cell only, and updated in place.
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"

#if defined(__CUDACC__)
#define RTM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RTM_HOST_DEVICE inline
#endif

namespace rtm {

// dp/dx ~ (1/h) sum_{r=1..4} g_r (p[i+r] - p[i-r]), 8th order; index 0 unused.
constexpr double kFirstDerivC[5] = {0.0, 4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};

// One axis of the C-PML: layers of `lo` cells at the low end and `hi` at the high end of n cells,
// and the recursive-convolution coefficients a, b at every position (0 outside the layers).
struct CpmlAxis {
  int n = 0, lo = 0, hi = 0;
  double h = 1;            // grid spacing along the axis (m)
  std::vector<float> a, b; // n entries each (empty when lo = hi = 0)
  int layer_cells() const { return lo + hi; }
};

// The three axes; empty(): no C-PML (a run without layers, or with the sponge).
struct CpmlProfiles {
  CpmlAxis x, y, z;
  bool empty() const { return x.layer_cells() + y.layer_cells() + z.layer_cells() == 0; }
};

// Floats of each axis' memory-variable array (psi or zeta) on a grid nx x ny x nz.
// Positions along an axis in its compact arrays: [kHalo guards][lo layer][gap][hi layer][kHalo
// guards], where the gap keeps min(2 kHalo, n - lo - hi) of the cells between the layers. A
// neighbour r <= kHalo cells away from a layer cell then sits r positions away in the compact
// array too: a guard (never written, so psi = 0) when it lies outside both layers, the real cell
// when a thin interior puts it in the other layer. No layers: no array.
inline int cpml_gap(int n, int lo, int hi) {
  const int g = n - lo - hi;
  return g < 0 ? 0 : (g < 2 * kHalo ? g : 2 * kHalo);
}
inline int cpml_compact_length(int n, int lo, int hi) {
  return lo + hi == 0 ? 0 : lo + hi + 2 * kHalo + cpml_gap(n, lo, hi);
}
// Floats in each compact array of an axis (psi[n-1], psi[n] and zeta each have one).
inline int64_t cpml_cells_x(const CpmlProfiles& c, const GridLayout& g) {
  return int64_t(cpml_compact_length(g.nx, c.x.lo, c.x.hi)) * g.ny * g.nz;
}
inline int64_t cpml_cells_y(const CpmlProfiles& c, const GridLayout& g) {
  return int64_t(g.nx) * cpml_compact_length(g.ny, c.y.lo, c.y.hi) * g.nz;
}
inline int64_t cpml_cells_z(const CpmlProfiles& c, const GridLayout& g) {
  return int64_t(g.nx) * g.ny * cpml_compact_length(g.nz, c.z.lo, c.z.hi);
}
// All memory variables of one propagator: psi twice (double-buffered) and zeta, per axis.
inline int64_t cpml_memory_floats(const CpmlProfiles& c, const GridLayout& g) {
  return 3 * (cpml_cells_x(c, g) + cpml_cells_y(c, g) + cpml_cells_z(c, g));
}

// What the per-cell arithmetic reads of one axis: plain pointers, usable on the host and on a GPU.
struct CpmlAxisView {
  int n = 0, lo = 0, hi = 0;
  int gap = 0;              // cpml_gap(n, lo, hi)
  int length = 0;           // cpml_compact_length(n, lo, hi)
  const float* a = nullptr; // n entries
  const float* b = nullptr;
  int64_t field_stride = 0;   // floats between neighbours along the axis in the padded field
  int64_t compact_stride = 0; // floats between neighbours along the axis in the compact arrays
  float d1[5] = {0, 0, 0, 0, 0}; // first-derivative weights g_r / h (index 0 unused)
  float d2[5] = {0, 0, 0, 0, 0}; // second derivative: c_0 / h², c_r / h² (the Laplacian's)
  const float* psi_old = nullptr; // psi[n-1], compact
  float* psi_new = nullptr;       // psi[n], compact
  int fresh_lo = 0, fresh_hi = 0; // positions along the axis where psi_new already holds psi[n]
  float* zeta = nullptr;          // zeta, compact, updated in place

  RTM_HOST_DEVICE bool in_layer(int i) const { return i < lo || i >= n - hi; }
  // Position along the axis within the compact arrays (for i in a layer; cpml_compact_length).
  RTM_HOST_DEVICE int layer_index(int i) const {
    return i < lo ? i + kHalo : i - (n - hi) + lo + kHalo + gap;
  }
};

// Builds a view of one axis; the caller sets psi_old, psi_new and zeta.
inline CpmlAxisView make_cpml_axis_view(const CpmlAxis& axis, int64_t field_stride,
                                        int64_t compact_stride) {
  const double h = axis.h;
  CpmlAxisView v;
  v.n = axis.n;
  v.lo = axis.lo;
  v.hi = axis.hi;
  v.gap = cpml_gap(axis.n, axis.lo, axis.hi);
  v.length = cpml_compact_length(axis.n, axis.lo, axis.hi);
  v.a = axis.a.data();
  v.b = axis.b.data();
  v.field_stride = field_stride;
  v.compact_stride = compact_stride;
  for (int r = 0; r < 5; ++r) {
    v.d1[r] = float(kFirstDerivC[r] / h);
    v.d2[r] = float(kStencilC[r] * (1.0 / (h * h))); // as make_laplacian_weights
  }
  return v;
}

template <class T>
RTM_HOST_DEVICE float cpml_load(const T* p, int64_t c) {
  return float(p[c]);
}

// The per-cell arithmetic on values: p_at(r) and psi_at(r) give p and psi[n] r cells away along
// the axis (r = -kHalo..kHalo), wherever the caller keeps them (the pointer forms below read the
// arrays; the GPU's one-pass kernels keep them in registers, kernels/cuda/fields/cpml.cu). One definition
// of the order of operations for every caller, so all of them round alike.
template <class P>
RTM_HOST_DEVICE float cpml_first_derivative_at(const CpmlAxisView& v, P p_at) {
  float d = 0.0f;
  for (int r = 1; r <= kHalo; ++r) d += v.d1[r] * (p_at(r) - p_at(-r));
  return d;
}
// psi[n] at layer position i from its psi[n-1] and D p.
RTM_HOST_DEVICE float cpml_psi_of(const CpmlAxisView& v, int i, float psi_old, float dp) {
  return v.b[i] * psi_old + v.a[i] * dp;
}
// The axis' correction D psi + zeta at layer position i; zeta (the cell's zeta[n-1]) becomes zeta[n].
template <class Psi, class P>
RTM_HOST_DEVICE float cpml_axis_correction_at(const CpmlAxisView& v, int i, float& zeta, Psi psi_at,
                                              P p_at) {
  float dpsi = 0.0f;
  float d2p = v.d2[0] * p_at(0);
  for (int r = 1; r <= kHalo; ++r) {
    dpsi += v.d1[r] * (psi_at(r) - psi_at(-r));
    d2p += v.d2[r] * (p_at(r) + p_at(-r));
  }
  zeta = v.b[i] * zeta + v.a[i] * (d2p + dpsi);
  return dpsi + zeta;
}

// D p at the padded-field index c.
template <class T>
RTM_HOST_DEVICE float cpml_first_derivative(const CpmlAxisView& v, const T* p, int64_t c) {
  return cpml_first_derivative_at(v, [&](int r) { return cpml_load(p, c + r * v.field_stride); });
}

// psi[n] at axis position i from psi[n-1] and p[n] (any i: zero outside the grid and outside the
// layers, where a = 0 has kept it zero); c: the cell's field index, q: its compact index.
template <class T>
RTM_HOST_DEVICE float cpml_psi(const CpmlAxisView& v, const T* p, int i, int64_t c, int64_t q) {
  if (i < 0 || i >= v.n || !v.in_layer(i)) return 0.0f;
  return cpml_psi_of(v, i, v.psi_old[q], cpml_first_derivative(v, p, c));
}

// psi[n] at a neighbour i (compact index q): recomputed from psi[n-1] and p[n] where it lies in a
// layer outside the fresh range (fresh_lo <= i < fresh_hi, where this step has stored it), read
// back otherwise: the stored value, or a guard's 0 outside the layers and the grid. Recomputing is
// the same arithmetic, so the same bits. Only a plane range's ends along z ever recompute: the x
// and y axes are always fresh over their whole length, and kMayRecompute = false leaves the
// recomputation out of their code (on a GPU it doubled the registers of the pass).
template <bool kMayRecompute, class T>
RTM_HOST_DEVICE float cpml_psi_new(const CpmlAxisView& v, const T* p, int i, int64_t c, int64_t q) {
  if constexpr (kMayRecompute)
    if ((i < v.fresh_lo || i >= v.fresh_hi) && i >= 0 && i < v.n && v.in_layer(i))
      return cpml_psi(v, p, i, c, q);
  return v.psi_new[q];
}

// The axis' correction D psi + zeta at a layer cell at position i along the axis, field index c,
// compact index q; updates zeta of the cell. Needs psi[n] of the axis stored on the fresh range
// (the whole axis unless kMayRecompute).
template <bool kMayRecompute, class T>
RTM_HOST_DEVICE float cpml_axis_correction(const CpmlAxisView& v, const T* p, int i, int64_t c,
                                           int64_t q) {
  // r cells away along the axis is r positions away in the compact arrays (cpml_compact_length).
  float zeta = v.zeta[q];
  const float correction = cpml_axis_correction_at(
      v, i, zeta,
      [&](int r) {
        return cpml_psi_new<kMayRecompute>(v, p, i + r, c + r * v.field_stride,
                                           q + r * v.compact_stride);
      },
      [&](int r) { return cpml_load(p, c + r * v.field_stride); });
  v.zeta[q] = zeta;
  return correction;
}

// The three axes' views of one propagator.
struct CpmlView {
  CpmlAxisView x, y, z;
};

// Compact indices of cell (i, j, k) in each axis' arrays (valid for a cell in that axis' layer).
RTM_HOST_DEVICE int64_t cpml_index_x(const CpmlView& v, int i, int j, int k, int ny) {
  return (int64_t(k) * ny + j) * v.x.length + v.x.layer_index(i);
}
RTM_HOST_DEVICE int64_t cpml_index_y(const CpmlView& v, int i, int j, int k, int nx) {
  return (int64_t(k) * v.y.length + v.y.layer_index(j)) * nx + i;
}
RTM_HOST_DEVICE int64_t cpml_index_z(const CpmlView& v, int i, int j, int k, int nx, int ny) {
  return (int64_t(v.z.layer_index(k)) * ny + j) * nx + i;
}

// Pass 1 of a step on one cell: stores psi[n] of each axis whose layers hold the cell.
template <class T>
RTM_HOST_DEVICE void cpml_cell_psi(const CpmlView& v, const GridLayout& g, const T* p_cur, int i,
                                   int j, int k) {
  const int64_t c = g.index(i, j, k);
  if (v.x.in_layer(i)) {
    const int64_t q = cpml_index_x(v, i, j, k, g.ny);
    v.x.psi_new[q] = cpml_psi(v.x, p_cur, i, c, q);
  }
  if (v.y.in_layer(j)) {
    const int64_t q = cpml_index_y(v, i, j, k, g.nx);
    v.y.psi_new[q] = cpml_psi(v.y, p_cur, j, c, q);
  }
  if (v.z.in_layer(k)) {
    const int64_t q = cpml_index_z(v, i, j, k, g.nx, g.ny);
    v.z.psi_new[q] = cpml_psi(v.z, p_cur, k, c, q);
  }
}

// Pass 2: the C-PML update of one cell (i, j, k) of the grid g: adds v2dt2 * (the sum of the corrections
// of the axes whose layers hold the cell) to p_next (p[n+1], the undamped step's result), reading
// p_cur (p[n]). Cells in no layer are left alone. T: the fields' storage type (float, or __half on
// a GPU with fp16 storage: converted to float and back, the memory variables stay float).
template <class T>
RTM_HOST_DEVICE void cpml_cell(const CpmlView& v, const GridLayout& g, const T* p_cur,
                               const T* v2dt2, T* p_next, int i, int j, int k) {
  const int64_t c = g.index(i, j, k);
  float correction = 0.0f;
  bool any = false;
  if (v.x.in_layer(i)) {
    correction += cpml_axis_correction<false>(v.x, p_cur, i, c, cpml_index_x(v, i, j, k, g.ny));
    any = true;
  }
  if (v.y.in_layer(j)) {
    correction += cpml_axis_correction<false>(v.y, p_cur, j, c, cpml_index_y(v, i, j, k, g.nx));
    any = true;
  }
  if (v.z.in_layer(k)) {
    correction += cpml_axis_correction<true>(v.z, p_cur, k, c, cpml_index_z(v, i, j, k, g.nx, g.ny));
    any = true;
  }
  if (any) p_next[c] = T(cpml_load(p_next, c) + cpml_load(v2dt2, c) * correction);
}

} // namespace rtm
