// The median of timing samples, shared by every benchmark (kernels/cuda/bench/bench.cu, `rtm bench`, the
// scaling benchmark). Plain C++, so host code and CUDA sources include it alike.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace rtm {

// The middle value (the mean of the two middle ones for an even count); NaN without samples.
inline double median(std::vector<double> samples) {
  if (samples.empty()) return std::nan("");
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

} // namespace rtm
