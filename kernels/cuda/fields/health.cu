#include "kernels/cuda/fields/health.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <climits>

#include "kernels/cuda/fields/bfp16_ops.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/util/device_buffer.cuh"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 8192; // rows are shared out grid-stride beyond this

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ unsigned int badness(float v) { return __float_as_uint(v) & 0x7fffffffu; }

struct HealthResult {
  unsigned int badness;    // the worst |p| bit pattern
  unsigned long long cell; // the lowest dense index that holds it
  float value;             // p there
};

// Blocks take rows (j, k) grid-stride, threads take x along a row: no division per cell, and each
// warp reads consecutive addresses.
template <class T>
__global__ void worst_badness_kernel(const GridLayout g, const T* p, HealthResult* result) {
  const int64_t rows = int64_t(g.ny) * g.nz;
  unsigned int worst = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* line = p + g.index(0, int(row % g.ny), int(row / g.ny));
    for (int i = threadIdx.x; i < g.nx; i += blockDim.x) worst = max(worst, badness(to_float(line[i])));
  }
  for (int offset = 16; offset > 0; offset /= 2)
    worst = max(worst, __shfl_down_sync(0xffffffffu, worst, offset));
  if ((threadIdx.x & 31) == 0) atomicMax(&result->badness, worst);
}

template <class T>
__global__ void first_worst_cell_kernel(const GridLayout g, const T* p, HealthResult* result) {
  const unsigned int target = result->badness;
  const int64_t rows = int64_t(g.ny) * g.nz;
  unsigned long long first = ULLONG_MAX;
  // A thread visits its cells in increasing index order, so its first match is its lowest.
  for (int64_t row = blockIdx.x; row < rows && first == ULLONG_MAX; row += gridDim.x) {
    const T* line = p + g.index(0, int(row % g.ny), int(row / g.ny));
    for (int i = threadIdx.x; i < g.nx; i += blockDim.x)
      if (badness(to_float(line[i])) == target) {
        first = (unsigned long long)(row * g.nx + i);
        break;
      }
  }
  for (int offset = 16; offset > 0; offset /= 2)
    first = min(first, __shfl_down_sync(0xffffffffu, first, offset));
  if ((threadIdx.x & 31) == 0 && first != ULLONG_MAX) atomicMin(&result->cell, first);
}

template <class T>
__global__ void worst_value_kernel(const GridLayout g, const T* p, HealthResult* result) {
  const unsigned long long cell = result->cell;
  const int i = int(cell % g.nx), j = int((cell / g.nx) % g.ny), k = int(cell / (uint64_t(g.nx) * g.ny));
  result->value = to_float(p[g.index(i, j, k)]);
}

template <class T>
void launch_health(const GridLayout& g, const T* p, HealthResult* result, cudaStream_t stream) {
  const int64_t rows = int64_t(g.ny) * g.nz;
  const int blocks = int(std::min<int64_t>(std::max<int64_t>(rows, 1), kMaxBlocks));
  worst_badness_kernel<<<blocks, kThreads, 0, stream>>>(g, p, result);
  CUDA_CHECK_LAUNCH("worst_badness_kernel");
  first_worst_cell_kernel<<<blocks, kThreads, 0, stream>>>(g, p, result);
  CUDA_CHECK_LAUNCH("first_worst_cell_kernel");
  worst_value_kernel<<<1, 1, 0, stream>>>(g, p, result);
  CUDA_CHECK_LAUNCH("worst_value_kernel");
}

} // namespace

FieldHealth field_health(const GridLayout& g, DeviceField field, cudaStream_t stream) {
  FieldHealth health;
  if (g.interior_cells() == 0) return health;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  DeviceBuffer buffer(sizeof(HealthResult), AllocationKind::plain, device);
  auto* result = buffer.as<HealthResult>();
  const HealthResult start{0u, ULLONG_MAX, 0.0f};
  CUDA_CHECK(cudaMemcpyAsync(result, &start, sizeof start, cudaMemcpyHostToDevice, stream));
  DeviceBuffer decoded; // bfp16: the field as floats (halo zeros), checked as float32
  if (field.storage == Storage::bfp16) {
    decoded = DeviceBuffer(size_t(g.size) * sizeof(float), AllocationKind::plain, device);
    bfp16_decode_field(g, field.data, decoded.as<float>(), stream);
    field = {decoded.data(), Storage::fp32};
  }
  if (field.storage == Storage::fp32)
    launch_health(g, static_cast<const float*>(field.data), result, stream);
  else
    launch_health(g, static_cast<const __half*>(field.data), result, stream);
  HealthResult host{};
  CUDA_CHECK(cudaMemcpyAsync(&host, result, sizeof host, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  health.finite = host.badness < kInfinityBadness;
  health.worst_value = host.value;
  health.i = int(host.cell % uint64_t(g.nx));
  health.j = int((host.cell / uint64_t(g.nx)) % uint64_t(g.ny));
  health.k = int(host.cell / (uint64_t(g.nx) * uint64_t(g.ny)));
  return health;
}

// CudaWavefield's override lives here, with the kernels it runs (cuda_propagator.cuh declares it).
FieldHealth CudaWavefield::check_health() const {
  CUDA_CHECK(cudaSetDevice(device_));
  return field_health(layout(), current_field(), stream_);
}

} // namespace rtm::cuda
