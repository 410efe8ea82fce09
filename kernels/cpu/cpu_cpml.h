// The C-PML on the CPU (solvers/contracts/cpml.h): its memory variables, and the correction added
// to the undamped step on the layer cells, row by row in loops the compiler vectorises, threaded
// like the step (docs/variants.md, "The CPU backend").
#pragma once

#include <utility>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "solvers/contracts/cpml.h"
#include "solvers/contracts/grid_layout.h"

namespace rtm {

// The C-PML memory variables of one grid (solvers/contracts/cpml.h): per axis psi double-buffered (old:
// psi[n-1], read; new: psi[n], written) and zeta, compact over the axis' layers.
struct CpmlMemory {
  std::vector<float> psi[2][3]; // [buffer][axis x, y, z]
  std::vector<float> zeta[3];
  int old = 0; // which psi buffer holds psi[n-1]
  CpmlMemory() = default;
  CpmlMemory(const CpmlProfiles& c, const GridLayout& g);
  void zero();
  void swap() { old = 1 - old; }
  // The views the per-cell arithmetic reads and writes.
  CpmlView view(const CpmlProfiles& c, const GridLayout& g);
};

// Adds the C-PML correction (solvers/contracts/cpml.h) to p_next on the layer cells of planes
// k_begin <= k < k_end, after the undamped step has written p_next: pass 1 stores psi[n] of those
// planes, pass 2 adds the corrections (solvers/contracts/cpml.h says why any split gives the same
// bits). Every cell gets the bits of cpml.h's per-cell forms (cpml_cell_psi, then cpml_cell),
// whatever the instruction set and the number of threads (tests/test_cpu_cpml.cpp).
void cpu_cpml_correction(const GridLayout& g, const CpmlView& v, const float* p_cur,
                         const float* v2dt2, float* p_next, int k_begin, int k_end);
// The same with a chosen instruction set (tests); throws std::invalid_argument if this CPU lacks it.
void cpu_cpml_correction_isa(CpuStepIsa isa, const GridLayout& g, const CpmlView& v,
                             const float* p_cur, const float* v2dt2, float* p_next, int k_begin,
                             int k_end);

// What the C-PML's rows read and write in one step over planes k_begin <= k < k_end.
struct CpmlRowArgs {
  const GridLayout* g = nullptr;
  const CpmlView* v = nullptr;
  const float* p_cur = nullptr;
  const float* v2dt2 = nullptr;
  float* p_next = nullptr;
  int k_begin = 0, k_end = 0;
  // psi[n] of the z layers on the kHalo planes below k_begin and above k_end - 1, computed once
  // ([k - (k_begin - kHalo)] below, [kHalo + k - k_end] above; a plane of nx x ny floats, or null
  // where not computed: then each row that reads it recomputes it).
  const float* halo_psi_z[2 * kHalo] = {};
};

// One thread's share of a step's C-PML, for the step's own plane loop (cpu_wave_step with a
// CpmlView), made by each thread of the step's parallel region. Of planes k_begin .. k_end-1 the
// thread takes a contiguous range k0() <= k < k1(), in thread order, an equal share of the step's
// and the C-PML's estimated work (cpml_thread_planes: a plane of the z layers costs about twice an
// inner one; a thread outside a parallel region takes them all). ahead(k), before the step's rows
// of plane k, stores psi[n] of the y and z layers up to plane k + kHalo; correct_row(j, k), after
// the step has written row (j, k) of p[n+1], stores psi[n] of the row's x layers and adds the
// row's correction, while the row is in cache. psi[n] of the z layers on the kHalo planes beyond
// either end of the range (another thread stores it) is computed once, when the object is made,
// into its own buffer: the same arithmetic, so no thread waits for another and any split gives the
// bits of cpu_cpml_correction.
class CpuCpmlPlanes {
public:
  CpuCpmlPlanes(CpuStepIsa isa, const GridLayout& g, const CpmlView& v, const float* p_cur,
                const float* v2dt2, float* p_next, int k_begin, int k_end);
  int k0() const { return args_.k_begin; }
  int k1() const { return args_.k_end; }
  void ahead(int k);
  void correct_row(int j, int k) { correct_row_(args_, j, k, scratch_.data()); }

private:
  CpmlRowArgs args_;
  int stored_end_ = 0; // psi[n] of the y and z layers is stored on planes k0() .. stored_end_-1
  void (*psi_plane_)(const CpmlRowArgs&, int k) = nullptr;
  void (*correct_row_)(const CpmlRowArgs&, int j, int k, float* scratch) = nullptr;
  std::vector<float> scratch_;
  std::vector<float> halo_; // psi[n] of the z layers beyond the range's ends (CpmlRowArgs)
};

// The contiguous planes [first, second) that thread t of `threads` takes of k_begin .. k_end-1 in
// a step with the C-PML: equal shares of the estimated work (CpuCpmlPlanes).
std::pair<int, int> cpml_thread_planes(const GridLayout& g, const CpmlView& v, int k_begin,
                                       int k_end, int t, int threads);

} // namespace rtm
