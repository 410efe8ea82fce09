// l2-window: a frequently reused buffer read next to a streaming one, with and without an L2
// persisting access-policy window (docs/micro.md, "l2-window"; the sliding-window test of
// NVIDIA's A100 talk, made race-free: the frequent buffer is only read).
#include <algorithm>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxRounds = 65535; // gridDim.y

// Stream element i (in float4) adds freq[i % freq_n4]. Block (x, y) handles stream elements
// y * freq_n4 + x * 256 + [0, 256): blocks start in order of x, then y, so the pass sweeps the
// stream once from start to end and rereads the whole frequent buffer every freq_n4 elements, as
// the 1D kernel with a modulo would, without a 64-bit division per thread.
__global__ void stream_reuse_kernel(float4* __restrict__ stream, const float4* __restrict__ freq,
                                    int64_t stream_n4, int64_t freq_n4) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = int64_t(blockIdx.y) * freq_n4 + j;
  if (j < freq_n4 && i < stream_n4) {
    float4 s = stream[i];
    const float4 f = freq[j];
    s.x += f.x;
    s.y += f.y;
    s.z += f.z;
    s.w += f.w;
    stream[i] = s;
  }
}

void check_sizes(int64_t stream_n, int64_t freq_n) {
  if (stream_n < 4 || freq_n < 4 || stream_n % 4 || freq_n % 4 || freq_n > stream_n)
    throw std::invalid_argument(
        "l2-window: stream and frequent sizes must be multiples of 4 floats (16 bytes), the "
        "frequent buffer no larger than the stream (got " +
        std::to_string(stream_n) + " and " + std::to_string(freq_n) + " floats)");
  if ((stream_n / 4 + freq_n / 4 - 1) / (freq_n / 4) > kMaxRounds)
    throw std::invalid_argument(
        "l2-window: the stream is more than 65535 times the frequent buffer");
}

void launch_pass(float* stream, const float* freq, int64_t stream_n, int64_t freq_n,
                 cudaStream_t cuda_stream) {
  const int64_t stream_n4 = stream_n / 4, freq_n4 = freq_n / 4;
  const dim3 grid(detail::blocks_for(freq_n4, kThreads),
                  static_cast<unsigned>((stream_n4 + freq_n4 - 1) / freq_n4));
  stream_reuse_kernel<<<grid, kThreads, 0, cuda_stream>>>(
      reinterpret_cast<float4*>(stream), reinterpret_cast<const float4*>(freq), stream_n4, freq_n4);
  CUDA_CHECK_LAUNCH("stream_reuse_kernel");
}

// Owns the L2 persistence settings while the experiment runs: sets the set-aside and the
// stream's window for each case; afterwards removes the window, turns persisting lines back to
// normal and restores the set-aside the process had before, even when a case throws.
class PersistenceSettings {
public:
  explicit PersistenceSettings(cudaStream_t stream) : stream_(stream) {
    // Devices without L2 persistence do not know the limit: then there is nothing to restore.
    if (cudaDeviceGetLimit(&original_set_aside_, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
      (void)cudaGetLastError();
      original_set_aside_ = 0;
    }
  }
  ~PersistenceSettings() {
    // Errors cannot be thrown from here; they would repeat one already reported.
    cudaStreamAttrValue attr{};
    (void)cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr);
    (void)cudaCtxResetPersistingL2Cache();
    (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, original_set_aside_);
  }
  PersistenceSettings(const PersistenceSettings&) = delete;
  PersistenceSettings& operator=(const PersistenceSettings&) = delete;

  // Whether this process may set aside `bytes` of L2 (not under MPS or on some MIG slices).
  bool can_set_aside(size_t bytes) {
    const cudaError_t error = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);
    if (error == cudaSuccess) return true;
    if (error != cudaErrorUnsupportedLimit && error != cudaErrorNotSupported &&
        error != cudaErrorInvalidValue)
      cuda::check_runtime(error, "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)", __FILE__,
                          __LINE__); // throws
    (void)cudaGetLastError();
    return false;
  }

  // window_bytes 0: no window. Lines made persisting by an earlier case become normal first.
  void apply(size_t set_aside, const void* base, size_t window_bytes, float hit_ratio) {
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = window_bytes ? const_cast<void*>(base) : nullptr;
    attr.accessPolicyWindow.num_bytes = window_bytes;
    attr.accessPolicyWindow.hitRatio = window_bytes ? hit_ratio : 0.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr));
  }

private:
  cudaStream_t stream_;
  size_t original_set_aside_ = 0;
};

} // namespace

const char* window_mode_name(WindowMode mode) {
  switch (mode) {
  case WindowMode::none: return "none";
  case WindowMode::hit_ratio_one: return "hitRatio=1";
  case WindowMode::hit_ratio_fitted: return "hitRatio=fit";
  }
  return "?";
}

std::vector<float> stream_reuse_once(const std::vector<float>& stream,
                                     const std::vector<float>& freq) {
  const int64_t stream_n = static_cast<int64_t>(stream.size());
  const int64_t freq_n = static_cast<int64_t>(freq.size());
  check_sizes(stream_n, freq_n);
  cuda::DeviceArray<float> ds(stream_n, "stream"), df(freq_n, "frequent buffer");
  ds.upload(stream);
  df.upload(freq);
  launch_pass(ds.data(), df.data(), stream_n, freq_n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return ds.download();
}

std::vector<L2WindowRun> run_l2_window(int64_t stream_bytes, const std::vector<int64_t>& freq_bytes,
                                       const TimingOptions& timing) {
  if (freq_bytes.empty()) throw std::invalid_argument("l2-window: no frequent-buffer size");
  for (int64_t bytes : freq_bytes) {
    if (stream_bytes % 16 || bytes % 16)
      throw std::invalid_argument("l2-window: sizes must be multiples of 16 bytes (got stream " +
                                  std::to_string(stream_bytes) + ", frequent " +
                                  std::to_string(bytes) + ")");
    check_sizes(stream_bytes / 4, bytes / 4);
  }
  const int64_t stream_n = stream_bytes / 4;
  int device_index = 0;
  CUDA_CHECK(cudaGetDevice(&device_index));
  const cuda::DeviceInfo device = cuda::query_device(device_index);
  const auto set_aside_max = static_cast<int64_t>(device.max_persisting_l2_bytes);
  const auto window_max = static_cast<int64_t>(device.max_access_policy_window_bytes);
  const int64_t max_freq_n = *std::max_element(freq_bytes.begin(), freq_bytes.end()) / 4;

  cuda::Stream stream;
  cuda::DeviceArray<float> s(stream_n, "l2-window stream"), f(max_freq_n, "l2-window frequent");
  const uint32_t seed_s = detail::fresh_seed(), seed_f = seed_s + 1;
  detail::fill_pattern(f.data(), max_freq_n, seed_f, stream);
  PersistenceSettings settings(stream);
  const bool persistence =
      set_aside_max > 0 && window_max > 0 && settings.can_set_aside(size_t(set_aside_max));

  std::vector<L2WindowRun> runs;
  for (int64_t bytes : freq_bytes) {
    const int64_t freq_n = bytes / 4;
    for (auto mode : {WindowMode::none, WindowMode::hit_ratio_one, WindowMode::hit_ratio_fitted}) {
      L2WindowRun run;
      run.freq_bytes = bytes;
      run.mode = mode;
      if (mode != WindowMode::none) {
        if (!persistence) {
          run.supported = false; // no persisting L2 for this process (MIG slice, MPS)
          runs.push_back(run);
          continue;
        }
        run.set_aside_bytes = set_aside_max;
        run.window_bytes = std::min(bytes, window_max);
        run.hit_ratio = mode == WindowMode::hit_ratio_one
                            ? 1.0
                            : std::min(1.0, double(run.set_aside_bytes) / double(run.window_bytes));
      }
      if (persistence) // else no window was ever set: nothing to undo for "none"
        settings.apply(static_cast<size_t>(run.set_aside_bytes), f.data(),
                       static_cast<size_t>(run.window_bytes), static_cast<float>(run.hit_ratio));

      detail::fill_pattern(s.data(), stream_n, seed_s, stream);
      launch_pass(s.data(), f.data(), stream_n, freq_n, stream);
      stream.synchronize();
      run.pass.check = detail::verify_output(s.download(), [&](int64_t i) {
        return pattern_value(i, seed_s) + pattern_value(i % freq_n, seed_f);
      });
      // Later passes keep adding to the stream: values grow by < 1 a pass, timing is unaffected.
      run.pass.time = detail::time_launches(
          stream, timing, [&]() { launch_pass(s.data(), f.data(), stream_n, freq_n, stream); });
      runs.push_back(run);
    }
  }
  return runs;
}

} // namespace rtm::micro
