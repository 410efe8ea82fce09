// Relative L2 distances, ||a - b|| / ||b||: how the physics tests compare a modelled trace with an
// analytic one (docs/physics.md), and how the GPU tests compare a field, trace or image with the
// CPU reference's.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "solvers/contracts/grid_layout.h"

namespace rtm {

inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

// Of float arrays (traces, images) against a reference: the absolute L2 norm of the difference
// where the reference is all zeros.
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& reference) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += double(a[i] - reference[i]) * (a[i] - reference[i]);
    den += double(reference[i]) * reference[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Over the interior cells of two padded fields of layout g only (halos and padding left out); a
// NaN anywhere in the interior of `a` makes it NaN, so that a bound on it fails.
inline double interior_relative_l2(const GridLayout& g, const std::vector<float>& a,
                                   const std::vector<float>& reference) {
  double diff2 = 0.0, ref2 = 0.0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const auto c = size_t(g.index(i, j, k));
        const double d = double(a[c]) - double(reference[c]);
        diff2 += d * d;
        ref2 += double(reference[c]) * reference[c];
      }
  return std::sqrt(diff2 / ref2);
}

} // namespace rtm
