// The C-PML on the CPU (solvers/contracts/cpml.h): its memory variables, and the correction added
// to the undamped step on the layer cells, row by row in loops the compiler vectorises, threaded
// like the step (docs/variants.md, "The CPU backend").
#pragma once

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

} // namespace rtm
