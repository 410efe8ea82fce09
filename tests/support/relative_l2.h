// Relative L2 distance of a trace from a reference, ||a - b|| / ||b||: how the physics tests
// compare a modelled trace with an analytic one (docs/physics.md).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace rtm {

inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

} // namespace rtm
