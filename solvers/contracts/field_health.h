// Numerical health of a wavefield (plain C++; the CPU reference, the default of
// HealthProbe::check_health and the tests use it, kernels/cuda/fields/health.cu follows the same rules).
//
// The worst cell is the one whose |p| has the largest IEEE-754 bit pattern read as an unsigned
// integer. For floats that order is exactly: finite values by magnitude < infinity < NaN. So one
// maximum finds a NaN if there is one, else an infinity, else the largest |p|. Ties go to the
// lowest dense index (x fastest, then y, then z), so every backend names the same cell.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "solvers/contracts/grid_layout.h"

namespace rtm {

struct FieldHealth {
  bool finite = true;      // no NaN and no infinity in the interior
  float worst_value = 0;   // p at the worst cell (NaN or +-inf when !finite, else the largest |p|)
  int i = 0, j = 0, k = 0; // the worst cell, interior coordinates (x, y, z) of the grid
};

// |v|'s bit pattern: larger means worse (see above).
inline uint32_t health_badness(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits & 0x7fffffffu;
}
constexpr uint32_t kInfinityBadness = 0x7f800000u; // badness of +-inf; NaNs are above it

// The worst cell found so far: its badness and dense index (nz*ny*nx order).
struct WorstCell {
  uint32_t badness = 0;
  int64_t cell = std::numeric_limits<int64_t>::max();
  void merge(const WorstCell& other) {
    if (other.badness > badness || (other.badness == badness && other.cell < cell)) *this = other;
  }
};

// The worst cell of planes [k_begin, k_end) of `p` (padded layout `g`); halo and padding are not
// looked at.
inline WorstCell worst_cell_in_planes(const GridLayout& g, const float* p, int k_begin, int k_end) {
  WorstCell worst;
  for (int k = k_begin; k < k_end; ++k)
    for (int j = 0; j < g.ny; ++j) {
      const float* row = p + g.index(0, j, k);
      const int64_t dense_row = (int64_t(k) * g.ny + j) * g.nx;
      for (int i = 0; i < g.nx; ++i) {
        const uint32_t badness = health_badness(row[i]);
        // Strictly worse only: within a scan the first (lowest) index of a tie is kept.
        if (badness > worst.badness || worst.cell == std::numeric_limits<int64_t>::max()) {
          worst.badness = badness;
          worst.cell = dense_row + i;
        }
      }
    }
  return worst;
}

// The FieldHealth of `worst` (as found in `p`, padded layout `g`).
inline FieldHealth field_health_of(const GridLayout& g, const float* p, const WorstCell& worst) {
  FieldHealth health;
  if (worst.cell == std::numeric_limits<int64_t>::max()) return health; // no cells
  health.i = int(worst.cell % g.nx);
  health.j = int((worst.cell / g.nx) % g.ny);
  health.k = int(worst.cell / (int64_t(g.nx) * g.ny));
  health.worst_value = p[g.index(health.i, health.j, health.k)];
  health.finite = worst.badness < kInfinityBadness;
  return health;
}

} // namespace rtm
