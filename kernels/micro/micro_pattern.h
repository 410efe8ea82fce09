// Input values of the `rtm micro` experiments, computable on the host and on the device alike, so
// a result can be checked without copying the (often gigabyte-sized) input back.
// Plain C++ when not compiled by nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RTM_MICRO_HD __host__ __device__
#else
#define RTM_MICRO_HD
#endif

namespace rtm::micro {

// A float in [0, 1) with 24 random-looking bits, from an element index and a per-run seed. Every
// value is exact in float, so sums of two of them are the same on host and device.
RTM_MICRO_HD inline float pattern_value(uint64_t index, uint32_t seed) {
  uint64_t h = index + 0x9E3779B97F4A7C15ull * (seed + 1ull); // splitmix64 finaliser
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// The words the shared-memory stride experiment reads (word w of its shared array).
RTM_MICRO_HD inline uint32_t smem_stride_word(uint32_t w) { return w * 2654435761u + 12345u; }

} // namespace rtm::micro
