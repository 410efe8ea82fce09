// What every microkernel file needs around its kernels: device buffers, a stream, event timing,
// pattern-filled inputs, poisoned outputs and the element-by-element check of a result.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_check.cuh"

namespace rtm::micro::detail {

// Device memory for `count` elements of T, freed when it goes out of scope. `what` names the
// buffer in the message when the device has too little memory.
template <class T>
class DeviceBuffer {
public:
  DeviceBuffer(int64_t count, const char* what) : count_(count) {
    if (count <= 0) return;
    const cudaError_t error = cudaMalloc(&ptr_, bytes());
    if (error == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError(); // clear it: the context is still usable
      size_t free_bytes = 0, total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      throw std::runtime_error("not enough device memory for " + std::string(what) + ": " +
                               std::to_string(bytes() >> 20) + " MiB asked, " +
                               std::to_string(free_bytes >> 20) + " MiB free");
    }
    if (error != cudaSuccess) throw_cuda_error(error, "cudaMalloc", __FILE__, __LINE__);
  }
  ~DeviceBuffer() {
    if (ptr_)
      (void)cudaFree(ptr_); // a destructor cannot throw; an error here repeats an earlier one
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  int64_t size() const { return count_; }
  size_t bytes() const { return static_cast<size_t>(count_) * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (static_cast<int64_t>(host.size()) != count_)
      throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    if (count_ > 0) RTM_MICRO_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(static_cast<size_t>(count_));
    if (count_ > 0) RTM_MICRO_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // All bits set: NaN as float or double, so an element the kernel forgets to write fails the
  // check.
  void poison(cudaStream_t stream) {
    if (count_ > 0) RTM_MICRO_CHECK(cudaMemsetAsync(ptr_, 0xFF, bytes(), stream));
  }

private:
  T* ptr_ = nullptr;
  int64_t count_ = 0;
};

class Stream {
public:
  Stream() { RTM_MICRO_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }
  void synchronize() const { RTM_MICRO_CHECK(cudaStreamSynchronize(stream_)); }

private:
  cudaStream_t stream_ = nullptr;
};

class Event {
public:
  Event() { RTM_MICRO_CHECK(cudaEventCreate(&event_)); }
  ~Event() { (void)cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

private:
  cudaEvent_t event_ = nullptr;
};

// Times `launch` (which enqueues one kernel or copy on `stream` and checks it) with CUDA events
// around each launch: warm-up launches first, then the timed ones; reports their median.
template <class Launch>
Timing time_launches(cudaStream_t stream, const TimingOptions& options, Launch&& launch) {
  Event start, stop;
  auto one = [&]() {
    RTM_MICRO_CHECK(cudaEventRecord(start, stream));
    launch();
    RTM_MICRO_CHECK(cudaEventRecord(stop, stream));
    RTM_MICRO_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    RTM_MICRO_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms);
  };
  double last_warm_ms = 0;
  for (int i = 0; i < std::max(1, options.warmup); ++i) last_warm_ms = one();

  int repeats = std::max(1, options.repeats);
  if (options.budget_ms > 0 && last_warm_ms > 0)
    repeats = std::min(repeats, std::max(3, static_cast<int>(options.budget_ms / last_warm_ms)));
  std::vector<double> ms(static_cast<size_t>(repeats));
  for (double& m : ms) m = one();
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.repeats = repeats;
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.median_ms = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
  return t;
}

// A new seed for each run's inputs: the kernels must compute the same function on any input.
inline uint32_t fresh_seed() { return std::random_device{}(); }

// p[i] = pattern_value(i, seed) (as double for the double version). Defined in device.cu.
void fill_pattern(float* p, int64_t n, uint32_t seed, cudaStream_t stream);
void fill_pattern(double* p, int64_t n, uint32_t seed, cudaStream_t stream);

// The coalesced copy kernel (copy.cu), also the reference of the transpose experiment.
void launch_copy(const float* in, float* out, int64_t n, cudaStream_t stream);

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
