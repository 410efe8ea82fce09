// The device as the model sees it, and the pattern-filled inputs the microkernels share.
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {

namespace {

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
  CUDA_CHECK_LAUNCH("fill_pattern_kernel");
}

} // namespace

model::DeviceModel device_model(const cuda::DeviceInfo& device) {
  model::DeviceModel m;
  m.name = device.name;
  m.sm_count = device.sm_count;
  m.l2_bytes = static_cast<int64_t>(device.l2_bytes);
  m.persisting_l2_bytes = static_cast<int64_t>(device.max_persisting_l2_bytes);
  m.sm_clock_ghz = device.sm_clock_khz / 1e6;
  m.fp32_lanes_per_sm = model::fp32_lanes_per_sm(device.cc_major, device.cc_minor);
  return m;
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
