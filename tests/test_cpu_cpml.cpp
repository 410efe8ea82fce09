// The CPU C-PML's vectorised, threaded rows (kernels/cpu/cpu_cpml.cpp), alone and inside the step's
// plane loop, against the arithmetic they replaced: solvers/contracts/cpml.h's per-cell forms (cpml_cell_psi, then cpml_cell) called cell by
// cell on one thread, as cpu_cpml_correction did until it was vectorised. Bit for bit: p[n+1],
// psi[n] and zeta, guards included, on random values everywhere, for every instruction set, several
// thread counts, layer shapes (thin interiors, faces without layers, rows that are no multiple of
// the vector width) and plane ranges (psi[n] recomputed across a range's ends along z).
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_cpml.h"
#include "kernels/cpu/cpu_propagator.h"

namespace rtm {
namespace {

// The correction as it was: every layer cell of the plane range visited by the per-cell forms,
// first pass 1 (psi[n]) for all of them, then pass 2.
void per_cell_correction(const GridLayout& g, const CpmlView& view, const float* p_cur,
                         const float* v2dt2, float* p_next, int k_begin, int k_end) {
  CpmlView v = view;
  v.x.fresh_lo = v.y.fresh_lo = 0;
  v.x.fresh_hi = g.nx;
  v.y.fresh_hi = g.ny;
  v.z.fresh_lo = k_begin;
  v.z.fresh_hi = k_end;
  auto for_layer_cells = [&](auto&& cell) {
    for (int k = k_begin; k < k_end; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i)
          if (v.x.in_layer(i) || v.y.in_layer(j) || v.z.in_layer(k)) cell(i, j, k);
  };
  for_layer_cells([&](int i, int j, int k) { cpml_cell_psi(v, g, p_cur, i, j, k); });
  for_layer_cells([&](int i, int j, int k) { cpml_cell(v, g, p_cur, v2dt2, p_next, i, j, k); });
}

// Layers of lo and hi cells on an axis of n, with random coefficients in them (0 outside, as
// cpml_profiles leaves them).
CpmlAxis random_axis(int n, int lo, int hi, double h, std::mt19937& rng) {
  std::uniform_real_distribution<float> a(-0.9f, -0.01f), b(0.5f, 0.999f);
  CpmlAxis axis;
  axis.n = n;
  axis.lo = lo;
  axis.hi = hi;
  axis.h = h;
  if (lo + hi == 0) return axis;
  axis.a.assign(size_t(n), 0.0f);
  axis.b.assign(size_t(n), 0.0f);
  for (int i = 0; i < n; ++i)
    if (i < lo || i >= n - hi) {
      axis.a[size_t(i)] = a(rng);
      axis.b[size_t(i)] = b(rng);
    }
  return axis;
}

// Random values at the layer positions of one axis' compact array laid out [outer][length][inner];
// the guards and the gap stay 0, as in a run (never written).
void fill_layer_positions(std::vector<float>& array, const CpmlAxis& axis, int64_t inner,
                          std::mt19937& rng) {
  const int length = cpml_compact_length(axis.n, axis.lo, axis.hi);
  if (length == 0) return;
  const int gap = cpml_gap(axis.n, axis.lo, axis.hi);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int64_t outer = int64_t(array.size()) / (int64_t(length) * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int pos = 0; pos < length; ++pos) {
      const bool layer = (pos >= kHalo && pos < kHalo + axis.lo) ||
                         (pos >= kHalo + axis.lo + gap && pos < kHalo + axis.lo + gap + axis.hi);
      if (!layer) continue;
      for (int64_t n = 0; n < inner; ++n) array[size_t((o * length + pos) * inner + n)] = value(rng);
    }
}

struct Shape {
  int nx, ny, nz;
  int x_lo, x_hi, y_lo, y_hi, z_lo, z_hi;
};

// A grid with its C-PML, random fields (halos and padding too) and random memory variables; the
// psi[n] buffer holds random values as well, as it holds psi[n-2] at the start of a step.
struct CpmlCase {
  GridLayout g;
  CpmlProfiles profiles;
  CpmlMemory memory;
  std::vector<float> p_cur, p_next, v2dt2;
};

CpmlCase random_case(const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  CpmlCase c;
  c.g = make_layout(s.nx, s.ny, s.nz);
  c.profiles.x = random_axis(s.nx, s.x_lo, s.x_hi, 10.0, rng);
  c.profiles.y = random_axis(s.ny, s.y_lo, s.y_hi, 12.0, rng);
  c.profiles.z = random_axis(s.nz, s.z_lo, s.z_hi, 8.0, rng);
  c.memory = CpmlMemory(c.profiles, c.g);
  const int64_t inner[3] = {1, s.nx, int64_t(s.nx) * s.ny};
  const CpmlAxis* axes[3] = {&c.profiles.x, &c.profiles.y, &c.profiles.z};
  for (int d = 0; d < 3; ++d) {
    fill_layer_positions(c.memory.psi[0][d], *axes[d], inner[d], rng);
    fill_layer_positions(c.memory.psi[1][d], *axes[d], inner[d], rng);
    fill_layer_positions(c.memory.zeta[d], *axes[d], inner[d], rng);
  }
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), speed(0.02f, 0.2f);
  for (std::vector<float>* f : {&c.p_cur, &c.p_next}) {
    f->resize(size_t(c.g.size));
    for (float& x : *f) x = value(rng);
  }
  c.v2dt2.resize(size_t(c.g.size));
  for (float& x : c.v2dt2) x = speed(rng);
  return c;
}

// (An axis without layers has empty arrays, whose data() may be null: memcmp must not see them.)
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Two steps (the psi buffers swapped between them, p[n+1] becoming p[n]), each as the given plane
// ranges, by the per-cell reference and by cpu_cpml_correction_isa; everything compared after each.
void expect_rows_match_cells(const Shape& s, const std::vector<std::pair<int, int>>& ranges,
                             CpuStepIsa isa, int threads, unsigned seed) {
  const std::string what = std::string(cpu_step_isa_name(isa)) + ", " + std::to_string(threads) +
                           " thread(s), " + std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" +
                           std::to_string(s.nz) + ", " + std::to_string(ranges.size()) +
                           " plane range(s), seed " + std::to_string(seed);
  CpmlCase ref = random_case(s, seed);
  CpmlCase rows = random_case(s, seed);
  const std::vector<float> before = ref.p_next;
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  for (int step = 0; step < 2; ++step) {
    for (auto [k0, k1] : ranges) {
      per_cell_correction(ref.g, ref.memory.view(ref.profiles, ref.g), ref.p_cur.data(),
                          ref.v2dt2.data(), ref.p_next.data(), k0, k1);
      cpu_cpml_correction_isa(isa, rows.g, rows.memory.view(rows.profiles, rows.g),
                              rows.p_cur.data(), rows.v2dt2.data(), rows.p_next.data(), k0, k1);
    }
    EXPECT_TRUE(same_bits(ref.p_next, rows.p_next)) << "p[n+1], step " << step << ": " << what;
    for (int d = 0; d < 3; ++d) {
      const int fresh = 1 - ref.memory.old;
      EXPECT_TRUE(same_bits(ref.memory.psi[fresh][d], rows.memory.psi[fresh][d]))
          << "psi[n] of axis " << d << ", step " << step << ": " << what;
      EXPECT_TRUE(same_bits(ref.memory.zeta[d], rows.memory.zeta[d]))
          << "zeta of axis " << d << ", step " << step << ": " << what;
    }
    if (step == 0) {
      EXPECT_FALSE(same_bits(before, ref.p_next)) << "no correction at all: " << what;
    }
    for (CpmlCase* c : {&ref, &rows}) {
      std::swap(c->p_cur, c->p_next);
      c->memory.swap();
    }
  }
  omp_set_num_threads(saved_threads);
}

const Shape kShapes[] = {
    {37, 29, 33, 6, 5, 4, 7, 8, 3},   // wide interiors (a gap of 2 kHalo), unequal faces
    {19, 17, 18, 8, 7, 7, 6, 9, 6},   // interiors of 4, 4 and 3 cells: neighbours in the other layer
    {23, 15, 20, 0, 0, 5, 5, 0, 6},   // no x layers; no top layer (a free surface)
    {45, 12, 14, 20, 20, 3, 2, 2, 4}, // the default width along x, rows no multiple of 8
    {9, 11, 10, 1, 2, 0, 3, 4, 0},    // layers thinner than the stencil
};

TEST(CpuCpml, RowsMatchThePerCellArithmeticBitForBit) {
  std::vector<CpuStepIsa> isas{CpuStepIsa::baseline};
  if (cpu_step_isa_available(CpuStepIsa::avx2)) isas.push_back(CpuStepIsa::avx2);
  unsigned seed = 20261128;
  for (const Shape& s : kShapes)
    for (CpuStepIsa isa : isas)
      for (int threads : {1, 3}) expect_rows_match_cells(s, {{0, s.nz}}, isa, threads, ++seed);
}

// Plane ranges as the z-slab split calls them: psi[n] of the planes across a range's ends is
// recomputed (the buffer holds other values there), the same bits as a whole step's.
TEST(CpuCpml, PlaneRangesMatchThePerCellArithmeticBitForBit) {
  unsigned seed = 30261128;
  for (const Shape& s : kShapes) {
    std::vector<std::pair<int, int>> ranges{{0, 2}, {2, 5}, {5, s.nz - 4}, {s.nz - 4, s.nz}};
    expect_rows_match_cells(s, ranges, best_cpu_step_isa(), 2, ++seed);
  }
}

// The step with the C-PML in its plane loop (cpu_wave_step with a CpmlView: each thread walks its
// own planes, psi[n] stored ahead or recomputed across its planes' ends) against the undamped step
// followed by the per-cell correction: every thread count splits the planes differently (with 5
// and 7 threads the splits fall inside the z layers), plane ranges as a slab calls them.
TEST(CpuCpml, StepWithTheCpmlMatchesTheStepThenThePerCellCorrection) {
  std::vector<CpuStepIsa> isas{CpuStepIsa::baseline};
  if (cpu_step_isa_available(CpuStepIsa::avx2)) isas.push_back(CpuStepIsa::avx2);
  const LaplacianWeights w = make_laplacian_weights(10, 12, 8);
  unsigned seed = 40261128;
  const int saved_threads = omp_get_max_threads();
  for (const Shape& s : kShapes)
    for (CpuStepIsa isa : isas)
      for (int threads : {1, 2, 5, 7})
        for (auto [k0, k1] : {std::pair{0, s.nz}, std::pair{3, s.nz - 2}}) {
          ++seed;
          CpmlCase ref = random_case(s, seed), fused = random_case(s, seed);
          omp_set_num_threads(threads);
          cpu_wave_step_isa(isa, ref.g, w, ref.v2dt2.data(), DampingProfiles{}, ref.p_cur.data(),
                            ref.p_next.data(), k0, k1);
          per_cell_correction(ref.g, ref.memory.view(ref.profiles, ref.g), ref.p_cur.data(),
                              ref.v2dt2.data(), ref.p_next.data(), k0, k1);
          const CpmlView view = fused.memory.view(fused.profiles, fused.g);
          cpu_wave_step_isa(isa, fused.g, w, fused.v2dt2.data(), DampingProfiles{},
                            fused.p_cur.data(), fused.p_next.data(), k0, k1, &view);
          const std::string what = std::string(cpu_step_isa_name(isa)) + ", " +
                                   std::to_string(threads) + " thread(s), " + std::to_string(s.nx) +
                                   "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz) +
                                   ", planes " + std::to_string(k0) + ".." + std::to_string(k1);
          EXPECT_TRUE(same_bits(ref.p_next, fused.p_next)) << "p[n+1]: " << what;
          for (int d = 0; d < 3; ++d) {
            EXPECT_TRUE(same_bits(ref.memory.psi[1][d], fused.memory.psi[1][d]))
                << "psi[n] of axis " << d << ": " << what;
            EXPECT_TRUE(same_bits(ref.memory.zeta[d], fused.memory.zeta[d]))
                << "zeta of axis " << d << ": " << what;
          }
        }
  omp_set_num_threads(saved_threads);
}

TEST(CpuCpml, CorrectionUsesTheBestInstructionSet) {
  const Shape s{21, 13, 12, 4, 4, 3, 3, 3, 3};
  CpmlCase a = random_case(s, 5), b = random_case(s, 5);
  cpu_cpml_correction(a.g, a.memory.view(a.profiles, a.g), a.p_cur.data(), a.v2dt2.data(),
                      a.p_next.data(), 0, s.nz);
  cpu_cpml_correction_isa(best_cpu_step_isa(), b.g, b.memory.view(b.profiles, b.g), b.p_cur.data(),
                          b.v2dt2.data(), b.p_next.data(), 0, s.nz);
  EXPECT_TRUE(same_bits(a.p_next, b.p_next));
}

} // namespace
} // namespace rtm
