// Largest-value comparisons of float arrays, for results that should agree with a reference to
// rounding in every element (images, fields after a fused or reordered computation).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace rtm::test {

inline double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

// max |a - b| / max |b| (max |a - b| where b is all zeros; infinite when the sizes differ).
inline double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t n = 0; n < a.size(); ++n) worst = std::max(worst, std::fabs(double(a[n]) - b[n]));
  const double scale = max_abs(b);
  return scale > 0 ? worst / scale : worst;
}

} // namespace rtm::test
