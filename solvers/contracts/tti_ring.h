// The boundary ring of the TTI step (solvers/contracts/tti.h) for reverse time migration.
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/contracts/propagator.h"

namespace rtm {

// The boundary ring of reverse time migration for the TTI step: its two passes reach 2 kHalo cells,
// so the ring a reconstruction restores is 2 kHalo cells thick (propagator.h's in_boundary_ring is
// kHalo thick: enough for the isotropic step only), for both fields.
constexpr int kTtiRing = 2 * kHalo;
inline bool in_tti_ring(const Box& b, int i, int j, int k) {
  return i < b.x0 + kTtiRing || i >= b.x1 - kTtiRing || j < b.y0 + kTtiRing || j >= b.y1 - kTtiRing ||
         k < b.z0 + kTtiRing || k >= b.z1 - kTtiRing;
}
inline int64_t tti_ring_cells(const Box& b) {
  auto inner = [](int n) { return n > 2 * kTtiRing ? int64_t(n - 2 * kTtiRing) : int64_t(0); };
  return b.cells() - inner(b.nx()) * inner(b.ny()) * inner(b.nz());
}
// g.index of every ring cell inside the grid (p's cells in a tti_layout), z slowest.
inline std::vector<int64_t> tti_ring_indices(const GridLayout& g, const Box& b) {
  std::vector<int64_t> index;
  const int k_begin = b.z0 > 0 ? b.z0 : 0, k_end = b.z1 < g.nz ? b.z1 : g.nz;
  for (int k = k_begin; k < k_end; ++k)
    for (int j = b.y0; j < b.y1; ++j)
      for (int i = b.x0; i < b.x1; ++i)
        if (in_tti_ring(b, i, j, k)) index.push_back(g.index(i, j, k));
  return index;
}

} // namespace rtm
