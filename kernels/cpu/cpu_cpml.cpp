#include "kernels/cpu/cpu_cpml.h"

#include "kernels/cpu/denormals.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__GNUC__)
#define RTM_CPML_INLINE __attribute__((always_inline)) inline
#else
#define RTM_CPML_INLINE inline
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define RTM_CPML_X86_DISPATCH 1
#endif

namespace rtm {

CpmlMemory::CpmlMemory(const CpmlProfiles& c, const GridLayout& g) {
  const int64_t cells[3] = {cpml_cells_x(c, g), cpml_cells_y(c, g), cpml_cells_z(c, g)};
  for (int d = 0; d < 3; ++d) {
    psi[0][d].assign(size_t(cells[d]), 0.0f);
    psi[1][d].assign(size_t(cells[d]), 0.0f);
    zeta[d].assign(size_t(cells[d]), 0.0f);
  }
}

void CpmlMemory::zero() {
  for (int d = 0; d < 3; ++d) {
    std::fill(psi[0][d].begin(), psi[0][d].end(), 0.0f);
    std::fill(psi[1][d].begin(), psi[1][d].end(), 0.0f);
    std::fill(zeta[d].begin(), zeta[d].end(), 0.0f);
  }
}

CpmlView CpmlMemory::view(const CpmlProfiles& c, const GridLayout& g) {
  CpmlView v;
  v.x = make_cpml_axis_view(c.x, 1, 1);
  v.y = make_cpml_axis_view(c.y, g.pitch, g.nx);
  v.z = make_cpml_axis_view(c.z, g.plane, int64_t(g.nx) * g.ny);
  CpmlAxisView* axes[3] = {&v.x, &v.y, &v.z};
  for (int d = 0; d < 3; ++d) {
    axes[d]->psi_old = psi[old][d].data();
    axes[d]->psi_new = psi[1 - old][d].data();
    axes[d]->zeta = zeta[d].data();
  }
  return v;
}

namespace {

// The layer cells of a row come in runs of consecutive cells that share the set of axes whose
// layers hold them (the x layers at both ends; the rest of the row where a y or z layer holds it).
// Along a run every array the C-PML reads or writes is consecutive too: the field, v2dt2, and each
// axis' compact psi and zeta (cpml.h's layout keeps x-neighbours adjacent in the x arrays and a
// whole row contiguous in the y and z arrays). So each pass is a loop over t = 0 .. len-1 with
// every operand at [t], which the compiler vectorises, computing each cell with cpml.h's per-cell
// value forms in their order: the bits of cpml_cell_psi and cpml_cell (solvers/contracts/cpml.h).
// Those per-cell forms, called cell by cell with their index arithmetic and layer tests, made the
// C-PML about 7x the cost of the whole undamped step on a grid whose layers are 71% of the cells;
// as runs, inside the step's plane loop (CpuCpmlPlanes), it costs about 1.7x (docs/tuning-log.md,
// section 14).

// One axis' share of a run: psi[n] r cells away along the axis ([r + kHalo], r = -kHalo..kHalo,
// r = 0 unused) and zeta, each pointing at the run's first cell; the axis position of that cell.
struct AxisRun {
  const float* psi[2 * kHalo + 1] = {};
  float* zeta = nullptr;
  int64_t field_stride = 0; // floats between neighbours along the axis in the field
  int pos = 0;
};

RTM_CPML_INLINE AxisRun shifted(AxisRun r, int by) {
  for (const float*& row : r.psi) row += by;
  r.zeta += by;
  return r;
}

// Pass 1 on a run of `len` cells of one axis' layer: psi[n] = b psi[n-1] + a D p (cpml_psi).
// kAlong: the run lies along the axis (the x layers), so its position moves with t. The view is
// copied so that the compiler sees its weights cannot change under the stores to psi.
template <bool kAlong>
RTM_CPML_INLINE void psi_run(int len, const CpmlAxisView& view, int pos, const float* psi_old,
                             float* psi_new, const float* p) {
  const CpmlAxisView v = view;
  const int64_t s = v.field_stride;
#pragma omp simd
  for (int t = 0; t < len; ++t) {
    const float dp = cpml_first_derivative_at(v, [&](int r) { return p[t + r * s]; });
    psi_new[t] = cpml_psi_of(v, kAlong ? pos + t : pos, psi_old[t], dp);
  }
}

// One axis' correction D psi + zeta at cell t of a run (position pos), zeta updated
// (cpml_axis_correction's arithmetic).
RTM_CPML_INLINE float axis_term(const CpmlAxisView& v, const AxisRun& run, int pos, int t,
                                const float* p) {
  float zeta = run.zeta[t];
  const float term = cpml_axis_correction_at(
      v, pos, zeta, [&](int r) { return run.psi[r + kHalo][t]; },
      [&](int r) { return p[t + r * run.field_stride]; });
  run.zeta[t] = zeta;
  return term;
}

// Pass 2 of one axis on a run of `len` cells. The sum of a cell's corrections is kept in
// `correction` between the axes' loops, started from 0 by the first axis (kFirst) and added to
// p_next by the last (kLast): per cell, cpml_cell's order. One loop per axis keeps the loop's
// streams (psi[n] at eight neighbours, p at eight, zeta) within the registers; no loop of its own
// zeroes the sums or adds them (a zeroing loop cost more than the x layers' arithmetic: its stores
// did not forward to the next loop's loads). kAlong: the run lies along the axis (the x layers),
// so its position moves with t.
template <bool kAlong, bool kFirst, bool kLast>
RTM_CPML_INLINE void correct_axis_run(int len, const CpmlAxisView& view, const AxisRun& run,
                                      const float* p, float* correction, const float* v2dt2,
                                      float* p_next) {
  const CpmlAxisView v = view;
  const AxisRun r = run;
#pragma omp simd
  for (int t = 0; t < len; ++t) {
    float sum = kFirst ? 0.0f : correction[t];
    sum += axis_term(v, r, kAlong ? r.pos + t : r.pos, t, p);
    if constexpr (kLast)
      p_next[t] = p_next[t] + v2dt2[t] * sum;
    else
      correction[t] = sum;
  }
}

template <bool kAlong>
RTM_CPML_INLINE void correct_axis(bool first, bool last, int len, const CpmlAxisView& v,
                                  const AxisRun& run, const float* p, float* correction,
                                  const float* v2dt2, float* p_next) {
  if (first && last)
    correct_axis_run<kAlong, true, true>(len, v, run, p, correction, v2dt2, p_next);
  else if (first)
    correct_axis_run<kAlong, true, false>(len, v, run, p, correction, v2dt2, p_next);
  else if (last)
    correct_axis_run<kAlong, false, true>(len, v, run, p, correction, v2dt2, p_next);
  else
    correct_axis_run<kAlong, false, false>(len, v, run, p, correction, v2dt2, p_next);
}

// Pass 2 on a run of `len` cells: p_next += v2dt2 times the sum of the corrections of the axes
// whose layers hold the run, x first, then y, then z, from 0 (cpml_cell).
RTM_CPML_INLINE void correct_run(int len, bool in_x, bool in_y, bool in_z, const CpmlView& v,
                                 const AxisRun& x, const AxisRun& y, const AxisRun& z,
                                 const float* p, const float* v2dt2, float* p_next,
                                 float* correction) {
  if (in_x) correct_axis<true>(true, !in_y && !in_z, len, v.x, x, p, correction, v2dt2, p_next);
  if (in_y) correct_axis<false>(!in_x, !in_z, len, v.y, y, p, correction, v2dt2, p_next);
  if (in_z) correct_axis<false>(!in_x && !in_y, true, len, v.z, z, p, correction, v2dt2, p_next);
}

// The x layers of a row: [0, lo_end) and [hi_begin, nx) (lo_end <= hi_begin, either may be empty).
RTM_CPML_INLINE int lo_end(const CpmlRowArgs& a) { return std::min(a.v->x.lo, a.g->nx); }
RTM_CPML_INLINE int hi_begin(const CpmlRowArgs& a) {
  return std::max(lo_end(a), a.g->nx - a.v->x.hi);
}

// Pass 1 of the y and z layers on row j of plane k: psi[n] of each of those axes whose layers hold
// the row. (The x layers' psi[n] is read only by its own row: correct_row_at stores it.)
RTM_CPML_INLINE void psi_row_at(const CpmlRowArgs& a, int j, int k) {
  const GridLayout& g = *a.g;
  const CpmlView& v = *a.v;
  const float* p = a.p_cur + g.index(0, j, k);
  if (v.y.in_layer(j)) {
    const int64_t q = cpml_index_y(v, 0, j, k, g.nx);
    psi_run<false>(g.nx, v.y, j, v.y.psi_old + q, v.y.psi_new + q, p);
  }
  if (v.z.in_layer(k)) {
    const int64_t q = cpml_index_z(v, 0, j, k, g.nx, g.ny);
    psi_run<false>(g.nx, v.z, k, v.z.psi_old + q, v.z.psi_new + q, p);
  }
}

// Pass 2 on the cells i0 <= i < i1 of row j of plane k; kX: they lie in the x layers. y and z:
// those axes' runs at the row's first cell (used where in_y, in_z).
template <bool kX>
RTM_CPML_INLINE void correct_segment(const CpmlRowArgs& a, int j, int k, int i0, int i1, bool in_y,
                                     bool in_z, const AxisRun& y, const AxisRun& z,
                                     float* correction) {
  if (i1 <= i0) return;
  const GridLayout& g = *a.g;
  const CpmlView& v = *a.v;
  AxisRun x;
  if (kX) {
    const int64_t q = cpml_index_x(v, i0, j, k, g.ny);
    for (int r = -kHalo; r <= kHalo; ++r) x.psi[r + kHalo] = v.x.psi_new + q + r;
    x.zeta = v.x.zeta + q;
    x.field_stride = 1;
    x.pos = i0;
  }
  const int64_t c = g.index(i0, j, k);
  correct_run(i1 - i0, kX, in_y, in_z, v, x, in_y ? shifted(y, i0) : y, in_z ? shifted(z, i0) : z,
              a.p_cur + c, a.v2dt2 + c, a.p_next + c, correction + i0);
}

// Row j of plane k: psi[n] of its x layers (pass 1), then its correction (pass 2). psi[n] of a
// neighbour plane outside [k_begin, k_end) is not stored by this call (another plane range or
// thread stores it); where that plane lies in a z layer, it is recomputed from psi[n-1] and p[n]
// into `scratch` ((2 kHalo + 2) rows of nx: those, and the corrections' sums), as cpml_psi_new
// does: the same arithmetic, so the same bits.
RTM_CPML_INLINE void correct_row_at(const CpmlRowArgs& a, int j, int k, float* scratch) {
  const GridLayout& g = *a.g;
  const CpmlView& v = *a.v;
  const bool in_y = v.y.in_layer(j), in_z = v.z.in_layer(k);
  const int lo = lo_end(a), hi = hi_begin(a);
  if (!in_y && !in_z && lo == 0 && hi == g.nx) return;
  const float* p = a.p_cur + g.index(0, j, k);
  for (auto [i0, i1] : {std::pair{0, lo}, std::pair{hi, g.nx}})
    if (i1 > i0) {
      const int64_t q = cpml_index_x(v, i0, j, k, g.ny);
      psi_run<true>(i1 - i0, v.x, i0, v.x.psi_old + q, v.x.psi_new + q, p + i0);
    }
  AxisRun y, z; // at the row's first cell
  if (in_y) {
    const int64_t q = cpml_index_y(v, 0, j, k, g.nx);
    for (int r = -kHalo; r <= kHalo; ++r) y.psi[r + kHalo] = v.y.psi_new + q + r * v.y.compact_stride;
    y.zeta = v.y.zeta + q;
    y.field_stride = v.y.field_stride;
    y.pos = j;
  }
  if (in_z) {
    const int64_t q = cpml_index_z(v, 0, j, k, g.nx, g.ny);
    for (int r = -kHalo; r <= kHalo; ++r) {
      const int kk = k + r;
      const int64_t qr = q + r * v.z.compact_stride;
      if (r != 0 && (kk < a.k_begin || kk >= a.k_end) && kk >= 0 && kk < g.nz && v.z.in_layer(kk)) {
        const float* halo = a.halo_psi_z[kk < a.k_begin ? kk - (a.k_begin - kHalo) : kHalo + kk - a.k_end];
        if (halo) {
          z.psi[r + kHalo] = halo + size_t(j) * size_t(g.nx);
        } else {
          float* row = scratch + size_t(r + kHalo) * size_t(g.nx);
          psi_run<false>(g.nx, v.z, kk, v.z.psi_old + qr, row, p + r * v.z.field_stride);
          z.psi[r + kHalo] = row;
        }
      } else {
        z.psi[r + kHalo] = v.z.psi_new + qr;
      }
    }
    z.zeta = v.z.zeta + q;
    z.field_stride = v.z.field_stride;
    z.pos = k;
  }
  float* correction = scratch + size_t(2 * kHalo + 1) * size_t(g.nx);
  correct_segment<true>(a, j, k, 0, lo, in_y, in_z, y, z, correction);
  if (in_y || in_z) correct_segment<false>(a, j, k, lo, hi, in_y, in_z, y, z, correction);
  correct_segment<true>(a, j, k, hi, g.nx, in_y, in_z, y, z, correction);
}

size_t scratch_floats(const GridLayout& g) { return size_t(2 * kHalo + 2) * size_t(g.nx); }

// Pass 1 on every row of plane k.
RTM_CPML_INLINE void psi_plane_at(const CpmlRowArgs& a, int k) {
  for (int j = 0; j < a.g->ny; ++j) psi_row_at(a, j, k);
}

// psi[n] of the z layers on plane k (in a z layer), every row, into `out` (nx x ny floats): what
// correct_row_at would recompute there, the same arithmetic.
RTM_CPML_INLINE void psi_z_plane_into_at(const CpmlRowArgs& a, int k, float* out) {
  const GridLayout& g = *a.g;
  const CpmlView& v = *a.v;
  for (int j = 0; j < g.ny; ++j) {
    const int64_t q = cpml_index_z(v, 0, j, k, g.nx, g.ny);
    psi_run<false>(g.nx, v.z, k, v.z.psi_old + q, out + size_t(j) * size_t(g.nx),
                   a.p_cur + g.index(0, j, k));
  }
}

// The rows compiled for the baseline instruction set and, on x86, for AVX2 without FMA: the same
// IEEE operations in the same order per cell, so the same bits (kernels/cpu/cpu_isa.h).
void psi_row_baseline(const CpmlRowArgs& a, int j, int k) { psi_row_at(a, j, k); }
void psi_plane_baseline(const CpmlRowArgs& a, int k) { psi_plane_at(a, k); }
void psi_z_plane_into_baseline(const CpmlRowArgs& a, int k, float* out) {
  psi_z_plane_into_at(a, k, out);
}
void correct_row_baseline(const CpmlRowArgs& a, int j, int k, float* scratch) {
  correct_row_at(a, j, k, scratch);
}
#ifdef RTM_CPML_X86_DISPATCH
__attribute__((target("avx2"))) void psi_row_avx2(const CpmlRowArgs& a, int j, int k) {
  psi_row_at(a, j, k);
}
__attribute__((target("avx2"))) void psi_plane_avx2(const CpmlRowArgs& a, int k) {
  psi_plane_at(a, k);
}
__attribute__((target("avx2"))) void psi_z_plane_into_avx2(const CpmlRowArgs& a, int k,
                                                           float* out) {
  psi_z_plane_into_at(a, k, out);
}
__attribute__((target("avx2"))) void correct_row_avx2(const CpmlRowArgs& a, int j, int k,
                                                      float* scratch) {
  correct_row_at(a, j, k, scratch);
}
#endif

void check_isa(CpuStepIsa isa, const char* who) {
  if (!cpu_step_isa_available(isa))
    throw std::invalid_argument(std::string(who) + ": this CPU cannot run " + cpu_step_isa_name(isa));
}

} // namespace

void cpu_cpml_correction_isa(CpuStepIsa isa, const GridLayout& g, const CpmlView& v,
                             const float* p_cur, const float* v2dt2, float* p_next, int k_begin,
                             int k_end) {
  check_isa(isa, "cpu_cpml_correction_isa");
  auto psi_row = &psi_row_baseline;
  auto correct_row = &correct_row_baseline;
#ifdef RTM_CPML_X86_DISPATCH
  if (isa == CpuStepIsa::avx2) {
    psi_row = &psi_row_avx2;
    correct_row = &correct_row_avx2;
  }
#endif
  const CpmlRowArgs a{&g, &v, p_cur, v2dt2, p_next, k_begin, k_end};
#pragma omp parallel
  {
    flush_denormals_on_this_thread(); // as the step (kernels/cpu/denormals.h)
    std::vector<float> scratch(scratch_floats(g));
#pragma omp for collapse(2) schedule(static)
    for (int k = k_begin; k < k_end; ++k)
      for (int j = 0; j < g.ny; ++j) psi_row(a, j, k);
    // (the barrier here: pass 2 reads psi[n] of the neighbouring rows and planes)
#pragma omp for collapse(2) schedule(static)
    for (int k = k_begin; k < k_end; ++k)
      for (int j = 0; j < g.ny; ++j) correct_row(a, j, k, scratch.data());
  }
}

// Estimated cost of plane k in a step with the C-PML, in undamped-step cells: the step, plus per
// cell of the x and y layers about 1.5 and per cell of the z layers about 2.1 (a one-thread
// harness on a 140x100x120 grid with 20-cell layers, docs/tuning-log.md section 14).
double plane_work(const GridLayout& g, const CpmlView& v, int k) {
  const double cells = double(g.nx) * g.ny;
  const double lo_x = std::min(v.x.lo + v.x.hi, g.nx), lo_y = std::min(v.y.lo + v.y.hi, g.ny);
  const double xy = lo_x * g.ny + lo_y * g.nx;
  return cells + 1.5 * xy + (v.z.in_layer(k) ? 2.1 * cells : 0.0);
}

std::pair<int, int> cpml_thread_planes(const GridLayout& g, const CpmlView& v, int k_begin,
                                       int k_end, int t, int threads) {
  // Every thread computes the same sums in the same order, so the ranges tile [k_begin, k_end).
  double total = 0;
  for (int k = k_begin; k < k_end; ++k) total += plane_work(g, v, k);
  auto boundary = [&](int n) {
    if (n <= 0) return k_begin;
    if (n >= threads) return k_end;
    const double target = total * n / threads;
    double sum = 0;
    int k = k_begin;
    // The first plane whose work, added, would pass the target starts thread n's range when the
    // target lies nearer to its end than to its start.
    for (; k < k_end; ++k) {
      const double w = plane_work(g, v, k);
      if (sum + 0.5 * w > target) break;
      sum += w;
    }
    return k;
  };
  return {boundary(t), boundary(t + 1)};
}

CpuCpmlPlanes::CpuCpmlPlanes(CpuStepIsa isa, const GridLayout& g, const CpmlView& v,
                             const float* p_cur, const float* v2dt2, float* p_next, int k_begin,
                             int k_end)
    : psi_plane_(&psi_plane_baseline), correct_row_(&correct_row_baseline),
      scratch_(scratch_floats(g)) {
  check_isa(isa, "CpuCpmlPlanes");
  auto psi_z_plane_into = &psi_z_plane_into_baseline;
#ifdef RTM_CPML_X86_DISPATCH
  if (isa == CpuStepIsa::avx2) {
    psi_plane_ = &psi_plane_avx2;
    correct_row_ = &correct_row_avx2;
    psi_z_plane_into = &psi_z_plane_into_avx2;
  }
#endif
  const auto [k0, k1] =
      cpml_thread_planes(g, v, k_begin, k_end, omp_get_thread_num(), omp_get_num_threads());
  args_ = CpmlRowArgs{&g, &v, p_cur, v2dt2, p_next, k0, k1};
  stored_end_ = k0;
  if (k0 >= k1) return; // no planes: nothing reads the halo
  // The z-layer planes within kHalo beyond either end: computed once here, not once per row.
  int halo_planes[2 * kHalo];
  int count = 0;
  for (int h = 0; h < 2 * kHalo; ++h) {
    const int kk = h < kHalo ? k0 - kHalo + h : k1 + h - kHalo;
    halo_planes[h] = kk >= 0 && kk < g.nz && v.z.in_layer(kk) ? count++ : -1;
  }
  const size_t plane = size_t(g.nx) * size_t(g.ny);
  halo_.resize(size_t(count) * plane);
  for (int h = 0; h < 2 * kHalo; ++h)
    if (halo_planes[h] >= 0) {
      float* out = halo_.data() + size_t(halo_planes[h]) * plane;
      psi_z_plane_into(args_, h < kHalo ? k0 - kHalo + h : k1 + h - kHalo, out);
      args_.halo_psi_z[h] = out;
    }
}

void CpuCpmlPlanes::ahead(int k) {
  const int end = std::min(k + kHalo + 1, args_.k_end);
  for (; stored_end_ < end; ++stored_end_) psi_plane_(args_, stored_end_);
}

void cpu_cpml_correction(const GridLayout& g, const CpmlView& v, const float* p_cur,
                         const float* v2dt2, float* p_next, int k_begin, int k_end) {
  static const CpuStepIsa best = best_cpu_step_isa();
  cpu_cpml_correction_isa(best, g, v, p_cur, v2dt2, p_next, k_begin, k_end);
}

} // namespace rtm
