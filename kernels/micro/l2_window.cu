// l2-window: a frequently reused buffer next to a streaming one, with and without an L2
// persisting access-policy window (docs/micro.md, "l2-window"; the sliding-window test of
// NVIDIA's A100 talk: each thread reads and writes one element of both buffers).
#include <algorithm>
#include <cmath>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxRounds = 65535; // gridDim.y

// A store the compiler must keep even though it writes back the value just loaded.
__device__ __forceinline__ void store_kept(float* p, float v) {
  asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// A load the compiler must issue even when the value only feeds a branch never taken.
__device__ __forceinline__ float load_kept(const float* p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}

// Thread (block (x, y), t) handles stream element i = y * freq_n + x * 256 + t and frequent
// element j = i % freq_n = x * 256 + t: blocks start in order of x, then y, so a pass sweeps the
// stream once from start to end and rereads and rewrites the whole frequent buffer every freq_n
// elements, as the talk's 1D kernel with a modulo does, without a 64-bit division per thread.
// Every thread that shares a frequent element writes back the value all of them read, so the
// result does not depend on their order (the talk's kernel doubles it, a race).
// L2Access::read makes the same two loads and stores nothing (the sum is compared with a bit
// pattern no finite sum has, so the loads stay); L2Access::write makes the same two stores and
// loads nothing (stream[i] = freq[j] = j).
template <L2Access kAccess>
__global__ void stream_reuse_kernel(float* stream, float* freq, int64_t stream_n, int64_t freq_n) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = int64_t(blockIdx.y) * freq_n + j;
  if (j < freq_n && i < stream_n) {
    if constexpr (kAccess == L2Access::read_write) {
      const float f = freq[j];
      stream[i] += f;
      store_kept(freq + j, f);
    } else if constexpr (kAccess == L2Access::read) {
      const float sum = load_kept(freq + j) + load_kept(stream + i);
      if (__float_as_uint(sum) == 0xFFFFFFFFu) stream[i] = 0.0f; // a NaN no pattern value sums to
    } else {
      store_kept(stream + i, float(j));
      store_kept(freq + j, float(j));
    }
  }
}

void check_sizes(int64_t stream_n, int64_t freq_n) {
  if (stream_n < 1 || freq_n < 1 || freq_n > stream_n)
    throw std::invalid_argument(
        "l2-window: need at least one float in each buffer and the frequent buffer no larger "
        "than the stream (got " +
        std::to_string(stream_n) + " and " + std::to_string(freq_n) + " floats)");
  if ((stream_n + freq_n - 1) / freq_n > kMaxRounds)
    throw std::invalid_argument(
        "l2-window: the stream is more than 65535 times the frequent buffer");
}

void launch_pass(float* stream, float* freq, int64_t stream_n, int64_t freq_n,
                 cudaStream_t cuda_stream, L2Access access = L2Access::read_write) {
  const dim3 grid(detail::blocks_for(freq_n, kThreads),
                  static_cast<unsigned>((stream_n + freq_n - 1) / freq_n));
  switch (access) {
  case L2Access::read_write:
    stream_reuse_kernel<L2Access::read_write>
        <<<grid, kThreads, 0, cuda_stream>>>(stream, freq, stream_n, freq_n);
    break;
  case L2Access::read:
    stream_reuse_kernel<L2Access::read>
        <<<grid, kThreads, 0, cuda_stream>>>(stream, freq, stream_n, freq_n);
    break;
  case L2Access::write:
    stream_reuse_kernel<L2Access::write>
        <<<grid, kThreads, 0, cuda_stream>>>(stream, freq, stream_n, freq_n);
    break;
  }
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
  void apply(size_t set_aside, const void* base, size_t window_bytes, float hit_ratio,
             bool hit_persisting, bool miss_normal) {
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = window_bytes ? const_cast<void*>(base) : nullptr;
    attr.accessPolicyWindow.num_bytes = window_bytes;
    attr.accessPolicyWindow.hitRatio = window_bytes ? hit_ratio : 0.0f;
    attr.accessPolicyWindow.hitProp =
        hit_persisting ? cudaAccessPropertyPersisting : cudaAccessPropertyNormal;
    attr.accessPolicyWindow.missProp =
        miss_normal ? cudaAccessPropertyNormal : cudaAccessPropertyStreaming;
    CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr));
  }

private:
  cudaStream_t stream_;
  size_t original_set_aside_ = 0;
};

} // namespace

const char* l2_access_name(L2Access access) {
  switch (access) {
  case L2Access::read: return "read";
  case L2Access::write: return "write";
  default: return "read-write";
  }
}

int64_t l2_set_aside_bytes(const cuda::DeviceInfo& device, double share) {
  if (!(share >= 0 && share <= 1))
    throw std::invalid_argument("l2-window: the set-aside share must be in [0, 1]");
  const auto wanted = static_cast<int64_t>(share * double(device.l2_bytes));
  return std::min(wanted, static_cast<int64_t>(device.max_persisting_l2_bytes));
}

std::vector<float> stream_reuse_once(const std::vector<float>& stream, std::vector<float>& freq) {
  const int64_t stream_n = static_cast<int64_t>(stream.size());
  const int64_t freq_n = static_cast<int64_t>(freq.size());
  check_sizes(stream_n, freq_n);
  cuda::DeviceArray<float> ds(stream_n, "stream"), df(freq_n, "frequent buffer");
  ds.upload(stream);
  df.upload(freq);
  launch_pass(ds.data(), df.data(), stream_n, freq_n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  freq = df.download();
  return ds.download();
}

std::vector<L2WindowRun> run_l2_window(const L2WindowConfig& config, const TimingOptions& timing) {
  if (config.freq_bytes.empty() || config.modes.empty())
    throw std::invalid_argument("l2-window: no frequent-buffer size or no mode");
  for (int64_t bytes : config.freq_bytes) {
    if (config.stream_bytes % 4 || bytes % 4)
      throw std::invalid_argument("l2-window: sizes must be multiples of 4 bytes (got stream " +
                                  std::to_string(config.stream_bytes) + ", frequent " +
                                  std::to_string(bytes) + ")");
    check_sizes(config.stream_bytes / 4, bytes / 4);
  }
  const int64_t stream_n = config.stream_bytes / 4;
  int device_index = 0;
  CUDA_CHECK(cudaGetDevice(&device_index));
  const cuda::DeviceInfo device = cuda::query_device(device_index);
  const int64_t set_aside = l2_set_aside_bytes(device, config.set_aside_share);
  const auto window_max = static_cast<int64_t>(device.max_access_policy_window_bytes);
  const int64_t max_freq_n =
      *std::max_element(config.freq_bytes.begin(), config.freq_bytes.end()) / 4;

  cuda::Stream stream;
  cuda::DeviceArray<float> s(stream_n, "l2-window stream"), f(max_freq_n, "l2-window frequent"),
      untouched(max_freq_n, "l2-window untouched buffer"); // the window of mode `elsewhere`
  const uint32_t seed_s = detail::fresh_seed(), seed_f = seed_s + 1;
  PersistenceSettings settings(stream);
  const bool persistence =
      set_aside > 0 && window_max > 0 && settings.can_set_aside(size_t(set_aside));

  std::vector<L2WindowRun> runs;
  for (int64_t bytes : config.freq_bytes) {
    const int64_t freq_n = bytes / 4;
    for (model::WindowMode mode : config.modes) {
      L2WindowRun run;
      run.freq_bytes = bytes;
      run.mode = mode;
      run.setting = model::window_setting(mode, bytes, persistence ? set_aside : 0);
      if (mode != model::WindowMode::none && !persistence) {
        run.supported = false; // no persisting L2 for this process (MIG slice, MPS)
        runs.push_back(run);
        continue;
      }
      const model::WindowSetting& w = run.setting;
      run.window_bytes = w.window ? std::min(bytes, window_max) : 0;
      if (persistence) // else no window was ever set: nothing to undo for "none"
        settings.apply(static_cast<size_t>(w.set_aside_bytes),
                       w.over_frequent ? static_cast<const void*>(f.data()) : untouched.data(),
                       static_cast<size_t>(run.window_bytes), static_cast<float>(w.hit_ratio),
                       w.persisting, config.miss_normal);

      detail::fill_pattern(s.data(), stream_n, seed_s, stream);
      detail::fill_pattern(f.data(), freq_n, seed_f, stream);
      launch_pass(s.data(), f.data(), stream_n, freq_n, stream, config.access);
      stream.synchronize();
      // What one pass leaves: read-write adds the frequent buffer to the stream and leaves the
      // frequent buffer as it was; read leaves both; write sets both to j = i % freq_n.
      run.pass.check = detail::verify_output(s.download(), [&](int64_t i) {
        switch (config.access) {
        case L2Access::read: return pattern_value(i, seed_s);
        case L2Access::write: return float(i % freq_n);
        default: return pattern_value(i, seed_s) + pattern_value(i % freq_n, seed_f);
        }
      });
      std::vector<float> freq_now = f.download();
      freq_now.resize(static_cast<size_t>(freq_n)); // the rest belongs to larger cases
      const Verification freq_check = detail::verify_output(freq_now, [&](int64_t j) {
        return config.access == L2Access::write ? float(j) : pattern_value(j, seed_f);
      });
      if (!freq_check.passed && run.pass.check.passed) {
        run.pass.check = freq_check;
        run.pass.check.first_mismatch = "frequent buffer changed, " + freq_check.first_mismatch;
      }
      // Later passes keep adding to the stream: values grow by < 1 a pass, timing is unaffected.
      run.pass.time = detail::time_launches(
          stream, timing,
          [&]() { launch_pass(s.data(), f.data(), stream_n, freq_n, stream, config.access); });
      runs.push_back(run);
    }
  }
  return runs;
}

} // namespace rtm::micro
