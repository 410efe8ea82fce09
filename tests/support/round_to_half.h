// Rounding to IEEE half precision on the host, for tests that compare a kernel reading half
// values with the CPU reference given the same values. Plain C++, for CPU and CUDA builds alike.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

namespace rtm::test {

// `x` rounded to IEEE half precision (11 significant bits, to nearest, ties to even), as a float;
// for values in half's normal range, which is all the tests use it for (v2dt2 of a few units).
inline float round_to_half(float x) {
  if (x == 0.0f) return x;
  int e = 0;
  const double m = std::frexp(double(x), &e); // |m| in [0.5, 1): 11 bits are m * 2^11
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(m, 11)), e - 11);
  const double magnitude = std::fabs(rounded);
  if (!(magnitude >= std::ldexp(1.0, -14) && magnitude <= 65504.0))
    throw std::invalid_argument("round_to_half: " + std::to_string(x) + " is outside half's normal range");
  return float(rounded);
}

} // namespace rtm::test
