// Scaffolding shared by the tests of the CUDA backend against the CPU reference
// (test_cuda_variants, test_rtm_ops_gpu, ...): skipping where no GPU is usable, the variant table,
// fresh random seeds and random wavefield values. Host code only (kernels/cuda/cuda_backend.h is the
// plain C++ contract), so it compiles with the host compiler; the tests link rtm_cuda.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "tests/support/max_difference.h"
#include "tests/support/round_to_half.h"

namespace rtm::test {

// Device 0 queried once per test program; `why` says why it cannot be used.
inline bool gpu_usable(std::string* why) {
  static const cuda::DeviceInfo info = cuda::query_device(0);
  if (!info.available && why) *why = info.why_unavailable;
  return info.available;
}

// Ends the current test as skipped (with the reason) where no GPU is usable.
#define SKIP_WITHOUT_GPU()                                                  \
  do {                                                                      \
    std::string why_no_gpu;                                                 \
    if (!::rtm::test::gpu_usable(&why_no_gpu)) GTEST_SKIP() << why_no_gpu; \
  } while (0)

// True for a variant that stores wavefields and v2dt2 in half precision.
inline bool is_fp16(const std::string& variant) {
  return cuda::find_variant(variant).kernel->element_bytes == 2;
}

// True for a variant whose wavefields are block floating point (bfp16).
inline bool is_bfp16(const std::string& variant) {
  return cuda::find_variant(variant).kernel->storage.rfind("bfp16", 0) == 0;
}

// Every kernel of the variant table, then every preset, by name (the parameters of the
// per-variant tests: a new row is tested without an edit here). Block floating point rows are
// left out: they keep no halo values and offer fewer operations (kernels/cuda/fields/cuda_propagator.cu,
// kBfp16Supports), so tests/test_bfp16_gpu.cpp tests them on their own terms.
inline std::vector<std::string> all_variants() {
  std::vector<std::string> names;
  for (const std::string& n : cuda::variant_names())
    if (!is_bfp16(n)) names.push_back(n);
  return names;
}

// A different seed every run (tests print it with a failure, so a failure can be replayed).
inline uint64_t fresh_seed() {
  std::random_device device;
  return (uint64_t(device()) << 32) ^ device();
}

// Declares `rng`, a generator of a fresh seed that every failure in the enclosing scope prints
// ("seed N"), so that the failure can be replayed.
#define FRESH_RNG(rng)                                                                             \
  const uint64_t rng##_seed = ::rtm::test::fresh_seed();                                           \
  SCOPED_TRACE("seed " + std::to_string(rng##_seed));                                              \
  std::mt19937_64 rng(rng##_seed)

// n values of magnitude in [0.1, 1] with random signs: no zeros, so that a value a kernel failed
// to write or wrote twice shows.
inline std::vector<float> random_signed_values(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

} // namespace rtm::test
