// What every microkernel file needs around its kernels beyond the CUDA utility layer (device
// arrays, streams, event timing, error checks: kernels/cuda/util/device_buffer.cuh, cuda_stream.cuh,
// event_timer.cuh, cuda_check.cuh): timing summaries, pattern-filled inputs and the
// element-by-element check of a result.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/cuda_stream.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/util/event_timer.cuh"
#include "solvers/contracts/median.h"
#include "kernels/micro/micro.h"

namespace rtm::micro::detail {

// Times `launch` (which enqueues one kernel or copy on `stream` and checks it) with the utility
// layer's event timing: at least one warm-up launch (the budget needs its time), then the timed
// ones; their median, minimum and maximum.
template <class Launch>
Timing time_launches(cudaStream_t stream, const TimingOptions& options, Launch&& launch) {
  const std::vector<double> ms = cuda::time_launches(
      stream, {std::max(1, options.warmup), options.repeats, options.budget_ms}, launch);
  Timing t;
  t.repeats = static_cast<int>(ms.size());
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  t.median_ms = median(ms);
  return t;
}

// A new seed for each run's inputs: the kernels must compute the same function on any input.
inline uint32_t fresh_seed() { return std::random_device{}(); }

// p[i] = pattern_value(i, seed) (as double for the double version). Defined in device.cu.
void fill_pattern(float* p, int64_t n, uint32_t seed, cudaStream_t stream);
void fill_pattern(double* p, int64_t n, uint32_t seed, cudaStream_t stream);

// The coalesced copy kernel (copy.cu), also the reference of the transpose experiment.
void launch_copy(const float* in, float* out, int64_t n, cudaStream_t stream);
// One float per thread, 256 threads a block: the copy the transpose notes compare with (copy.cu).
void launch_copy_scalar(const float* in, float* out, int64_t n, cudaStream_t stream);

// Compares got[i] with expected(i) exactly: whole outputs up to `whole_limit` elements, else
// whole_limit / 4 evenly spread elements and 4096 at each end (keeps the host's share of a run
// short when computing one expected value is costly or the output is huge).
template <class T, class Expected>
Verification verify_output(const std::vector<T>& got, Expected&& expected,
                           int64_t whole_limit = int64_t(1) << 26) {
  Verification v;
  const int64_t n = static_cast<int64_t>(got.size());
  auto check = [&](int64_t i) {
    const T want = expected(i);
    ++v.checked;
    if (got[i] == want) return; // NaN (a poisoned, unwritten element) never compares equal
    if (v.mismatches++ == 0) {
      char text[160];
      std::snprintf(text, sizeof text, "index %lld: got %.9g, expected %.9g",
                    static_cast<long long>(i), static_cast<double>(got[i]),
                    static_cast<double>(want));
      v.first_mismatch = text;
    }
  };
  constexpr int64_t kEnds = 4096;
  if (n <= std::max(whole_limit, 4 * kEnds)) {
    for (int64_t i = 0; i < n; ++i) check(i);
  } else {
    const int64_t step = std::max<int64_t>(1, n / std::max<int64_t>(1, whole_limit / 4));
    for (int64_t i = 0; i < kEnds; ++i) check(i);
    for (int64_t i = kEnds; i < n - kEnds; i += step) check(i);
    for (int64_t i = n - kEnds; i < n; ++i) check(i);
  }
  v.passed = v.mismatches == 0;
  return v;
}

inline unsigned blocks_for(int64_t work_items, int64_t items_per_block) {
  const int64_t blocks = (work_items + items_per_block - 1) / items_per_block;
  if (blocks > 0x7FFFFFFF) throw std::invalid_argument("problem too large for a 1D grid");
  return static_cast<unsigned>(std::max<int64_t>(1, blocks));
}

} // namespace rtm::micro::detail
