#include "kernels/cuda/fields/field_ops.cuh"

#include <cuda_fp16.h>

#include <cmath>
#include <utility>
#include <limits>
#include <stdexcept>

#include "kernels/cuda/fields/bfp16_ops.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/steps/bfp16_io.cuh"
#include "solvers/contracts/free_surface.h"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t count) {
  // Grid-stride loops: enough blocks to fill any GPU, capped well inside gridDim.x's limit.
  const int64_t wanted = (count + kThreads - 1) / kThreads;
  return int(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float random_value(uint64_t seed, int64_t index) {
  const uint64_t bits = splitmix64(seed ^ splitmix64(uint64_t(index)));
  const float unit = float(bits >> 40) * (1.0f / 16777216.0f); // 24 bits: [0, 1)
  const float magnitude = 0.1f + 0.9f * unit;
  return (bits & 1) ? magnitude : -magnitude;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <class T>
__global__ void fill_random_kernel(T* data, int64_t count, uint64_t seed) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x)
    data[n] = from_float<T>(random_value(seed, n));
}

template <class Src, class Dst>
__global__ void convert_kernel(const Src* src, Dst* dst, int64_t count) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x)
    dst[n] = from_float<Dst>(to_float(src[n]));
}

template <class T>
__global__ void scatter_interior_kernel(const GridLayout g, const float* dense, T* padded) {
  const int64_t count = g.interior_cells();
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x) {
    const int i = int(n % g.nx);
    const int j = int((n / g.nx) % g.ny);
    const int k = int(n / (int64_t(g.nx) * g.ny));
    padded[g.index(i, j, k)] = from_float<T>(dense[n]);
  }
}

// The sign of a stored value flipped: exact, as the host's -x (zero becomes -0 alike).
__device__ __forceinline__ float negated(float v) { return -v; }
__device__ __forceinline__ __half negated(__half v) {
  return __ushort_as_half(static_cast<unsigned short>(__half_as_ushort(v) ^ 0x8000u));
}

// Cell (i, j) of halo plane kFreeSurfacePlane - h, h = 0 .. kHalo-1, per thread.
template <class T> __global__ void mirror_free_surface_kernel(const GridLayout g, T* field) {
  const int64_t count = int64_t(kHalo) * g.ny * g.nx;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x) {
    const int i = int(n % g.nx);
    const int j = int((n / g.nx) % g.ny);
    const int k = kFreeSurfacePlane - int(n / (int64_t(g.nx) * g.ny));
    field[g.index(i, j, k)] =
        k == kFreeSurfacePlane ? T(0.0f) : negated(field[g.index(i, j, free_surface_source(k))]);
  }
}

// bfp16: whole blocks (a row's blocks start at x = 0 and end within its pitch, bfp16.h); element
// x of a row's blocks per thread, the block's first element's thread moving the exponent.
__global__ void mirror_free_surface_bfp16_kernel(const GridLayout g, int16_t* q, int8_t* e) {
  const int row = int((g.nx + bfp16::kBlock - 1) / bfp16::kBlock) * bfp16::kBlock;
  const int64_t count = int64_t(kHalo) * g.ny * row;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x) {
    const int i = int(n % row);
    const int j = int((n / row) % g.ny);
    const int k = kFreeSurfacePlane - int(n / (int64_t(row) * g.ny));
    const int64_t dst = g.index(i, j, k);
    const bool first = i % bfp16::kBlock == 0;
    if (k == kFreeSurfacePlane) {
      q[dst] = 0;
      if (first) e[dst / bfp16::kBlock] = int8_t(bfp16::kMinExponent);
    } else {
      const int64_t src = g.index(i, j, free_surface_source(k));
      q[dst] = int16_t(-q[src]); // |q| <= kMantissaMax: no overflow
      if (first) e[dst / bfp16::kBlock] = e[src / bfp16::kBlock];
    }
  }
}

// sums[0] += sum (a-b)^2, sums[1] += sum b^2 over the interior cells.
template <class A, class B>
__global__ void squared_difference_kernel(const GridLayout g, const A* a, const B* b,
                                          double* sums) {
  const int64_t count = g.interior_cells();
  double diff2 = 0.0, ref2 = 0.0;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < count;
       n += int64_t(gridDim.x) * blockDim.x) {
    const int i = int(n % g.nx);
    const int j = int((n / g.nx) % g.ny);
    const int k = int(n / (int64_t(g.nx) * g.ny));
    const int64_t c = g.index(i, j, k);
    const double va = to_float(a[c]), vb = to_float(b[c]);
    diff2 += (va - vb) * (va - vb);
    ref2 += vb * vb;
  }
  // Warp sums, then one atomic per warp: a few thousand atomics for a whole grid.
  for (int offset = 16; offset > 0; offset /= 2) {
    diff2 += __shfl_down_sync(0xffffffffu, diff2, offset);
    ref2 += __shfl_down_sync(0xffffffffu, ref2, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], diff2);
    atomicAdd(&sums[1], ref2);
  }
}

template <class A>
void launch_squared_difference(const GridLayout& g, const A* a, DeviceField b, double* sums,
                               cudaStream_t stream) {
  const int blocks = blocks_for(g.interior_cells());
  if (b.storage == Storage::fp32)
    squared_difference_kernel<<<blocks, kThreads, 0, stream>>>(g, a, static_cast<const float*>(b.data), sums);
  else
    squared_difference_kernel<<<blocks, kThreads, 0, stream>>>(g, a, static_cast<const __half*>(b.data), sums);
  CUDA_CHECK_LAUNCH("squared_difference_kernel");
}

} // namespace

void fill_random(void* data, Storage storage, int64_t count, uint64_t seed, cudaStream_t stream) {
  if (storage == Storage::bfp16) throw std::logic_error("fill_random: bfp16 is filled through float32");
  if (count <= 0) return;
  if (storage == Storage::fp32)
    fill_random_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
  else
    fill_random_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
  CUDA_CHECK_LAUNCH("fill_random_kernel");
}

void convert_float_to_half(const float* src, void* dst_half, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  convert_kernel<<<blocks_for(count), kThreads, 0, stream>>>(src, static_cast<__half*>(dst_half), count);
  CUDA_CHECK_LAUNCH("convert_kernel<float, half>");
}

void convert_half_to_float(const void* src_half, float* dst, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  convert_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const __half*>(src_half), dst, count);
  CUDA_CHECK_LAUNCH("convert_kernel<half, float>");
}

void scatter_interior(const GridLayout& g, const float* dense, void* padded, Storage storage,
                      cudaStream_t stream) {
  if (storage == Storage::bfp16) throw std::logic_error("scatter_interior: no bfp16 (v2dt2 is float32 there)");
  const int blocks = blocks_for(g.interior_cells());
  if (storage == Storage::fp32)
    scatter_interior_kernel<<<blocks, kThreads, 0, stream>>>(g, dense, static_cast<float*>(padded));
  else
    scatter_interior_kernel<<<blocks, kThreads, 0, stream>>>(g, dense, static_cast<__half*>(padded));
  CUDA_CHECK_LAUNCH("scatter_interior_kernel");
}

void mirror_free_surface(const GridLayout& g, void* field, Storage storage, cudaStream_t stream) {
  if (storage == Storage::bfp16) {
    const int64_t row = (g.nx + bfp16::kBlock - 1) / bfp16::kBlock * bfp16::kBlock;
    mirror_free_surface_bfp16_kernel<<<blocks_for(kHalo * g.ny * row), kThreads, 0, stream>>>(
        g, static_cast<int16_t*>(field), bfp16_exponents(field, g));
  } else if (storage == Storage::fp32) {
    mirror_free_surface_kernel<<<blocks_for(int64_t(kHalo) * g.ny * g.nx), kThreads, 0, stream>>>(
        g, static_cast<float*>(field));
  } else {
    mirror_free_surface_kernel<<<blocks_for(int64_t(kHalo) * g.ny * g.nx), kThreads, 0, stream>>>(
        g, static_cast<__half*>(field));
  }
  CUDA_CHECK_LAUNCH("mirror_free_surface_kernel");
}

double relative_l2_difference(const GridLayout& g, DeviceField a, DeviceField b,
                              cudaStream_t stream) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  DeviceBuffer sums(2 * sizeof(double), AllocationKind::plain, device);
  // bfp16 fields are compared as their float32 decoding.
  DeviceBuffer decoded_a, decoded_b;
  for (auto [field, decoded] : {std::pair{&a, &decoded_a}, std::pair{&b, &decoded_b}}) {
    if (field->storage != Storage::bfp16) continue;
    *decoded = DeviceBuffer(size_t(g.size) * sizeof(float), AllocationKind::plain, device);
    bfp16_decode_field(g, field->data, decoded->as<float>(), stream);
    *field = {decoded->data(), Storage::fp32};
  }
  CUDA_CHECK(cudaMemsetAsync(sums.data(), 0, sums.bytes(), stream));
  if (a.storage == Storage::fp32)
    launch_squared_difference(g, static_cast<const float*>(a.data), b, sums.as<double>(), stream);
  else
    launch_squared_difference(g, static_cast<const __half*>(a.data), b, sums.as<double>(), stream);
  double host[2] = {0.0, 0.0};
  CUDA_CHECK(cudaMemcpyAsync(host, sums.data(), sizeof host, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host[1] == 0.0) return host[0] == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(host[0] / host[1]);
}

} // namespace rtm::cuda
