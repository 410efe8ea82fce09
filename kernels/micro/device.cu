// The device the microkernels run on, and the pattern-filled inputs they share.
#include <cmath>
#include <limits>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {

namespace {

// An attribute, or 0 where the runtime does not report it (the caller prints "n/a").
int attribute_or_zero(cudaDeviceAttr attribute, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return value > 0 ? value : 0;
}

template <class T>
__global__ void fill_pattern_kernel(T* p, int64_t n, uint32_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = static_cast<T>(pattern_value(static_cast<uint64_t>(i), seed));
}

template <class T>
void fill(T* p, int64_t n, uint32_t seed, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = detail::blocks_for(n, kThreads * 8LL); // 8 elements per thread
  fill_pattern_kernel<T><<<blocks, kThreads, 0, stream>>>(p, n, seed);
  RTM_MICRO_CHECK_LAUNCH("fill_pattern_kernel");
}

} // namespace

double DeviceProperties::theoretical_peak_gb_per_s() const {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0) return std::numeric_limits<double>::quiet_NaN();
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

model::DeviceModel DeviceProperties::model() const {
  model::DeviceModel m;
  m.name = name;
  m.sm_count = sm_count;
  m.l2_bytes = l2_bytes;
  m.persisting_l2_bytes = persisting_l2_max_bytes;
  m.sm_clock_ghz = sm_clock_khz / 1e6;
  m.fp32_lanes_per_sm = model::fp32_lanes_per_sm(cc_major, cc_minor);
  return m;
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = std::string("no usable CUDA device (") + cudaGetErrorString(error) + ")";
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  return true;
}

DeviceProperties query_device() {
  int device = 0;
  RTM_MICRO_CHECK(cudaGetDevice(&device));
  cudaDeviceProp p{};
  RTM_MICRO_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProperties d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.global_mem_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.l2_bytes = p.l2CacheSize;
  d.persisting_l2_max_bytes = p.persistingL2CacheMaxSize;
  d.access_policy_max_window_bytes = p.accessPolicyMaxWindowSize;
  d.memory_clock_khz = attribute_or_zero(cudaDevAttrMemoryClockRate, device);
  d.bus_width_bits = attribute_or_zero(cudaDevAttrGlobalMemoryBusWidth, device);
  d.sm_clock_khz = attribute_or_zero(cudaDevAttrClockRate, device);
  return d;
}

namespace detail {

void fill_pattern(float* p, int64_t n, uint32_t seed, cudaStream_t stream) {
  fill(p, n, seed, stream);
}
void fill_pattern(double* p, int64_t n, uint32_t seed, cudaStream_t stream) {
  fill(p, n, seed, stream);
}

} // namespace detail
} // namespace rtm::micro
