#include "kernels/cuda/fields/rtm_ops.cuh"

#include <cuda_fp16.h>

#include <algorithm>

#include "kernels/cuda/fields/box_cells.cuh"
#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;    // element-wise kernels (ring gather and scatter)

int blocks_for(int64_t count) {
  // Grid-stride loops: enough blocks to fill any GPU, capped well inside gridDim.x's limit.
  const int64_t wanted = (count + kThreads - 1) / kThreads;
  return int(std::clamp<int64_t>(wanted, 1, 65536));
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <class T>
__global__ void gather_kernel(const T* __restrict__ field, const int64_t* __restrict__ index,
                              int64_t count, T* __restrict__ ring) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < count;
       r += int64_t(gridDim.x) * blockDim.x)
    ring[r] = field[index[r]];
}

template <class T>
__global__ void scatter_kernel(const T* __restrict__ ring, const int64_t* __restrict__ index,
                               int64_t count, T* __restrict__ field) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < count;
       r += int64_t(gridDim.x) * blockDim.x)
    field[index[r]] = ring[r];
}

template <class T>
__global__ void pack_box_kernel(const GridLayout g, const Box b, const T* __restrict__ field,
                                float* __restrict__ dense) {
  for_each_box_cell(g, b, [&](int64_t d, int64_t c) { dense[d] = to_float(field[c]); });
}

template <class T>
__global__ void unpack_box_kernel(const GridLayout g, const Box b, const float* __restrict__ dense,
                                  T* __restrict__ field) {
  for_each_box_cell(g, b, [&](int64_t d, int64_t c) { field[c] = from_float<T>(dense[d]); });
}

// __fmul_rn / __fadd_rn: rounded one at a time, as the reference's C++ expressions are
// (nvcc would otherwise fuse the multiply and the add).
template <class T>
__global__ void accumulate_image_kernel(const GridLayout g, const Box b, const T* __restrict__ s,
                                        const T* __restrict__ r, float weight,
                                        float* __restrict__ image,
                                        float* __restrict__ illumination) {
  for_each_box_cell(g, b, [&](int64_t d, int64_t c) {
    const float sv = to_float(s[c]);
    const float weighted = __fmul_rn(weight, sv);
    image[d] = __fadd_rn(image[d], __fmul_rn(weighted, to_float(r[c])));
    illumination[d] = __fadd_rn(illumination[d], __fmul_rn(weighted, sv));
  });
}

// ISIC and the separated condition (solvers/contracts/imaging_condition.h): the per-cell
// arithmetic is the contract's, shared with the CPU reference and rounded one operation at a time
// there (mul_rn, add_rn), the illumination and the weights as above, so a float32 field gives the
// reference's values. One thread per cell reading its neighbours through the caches: the separate
// path, not a tuned kernel.
template <class T>
__global__ void accumulate_condition_kernel(const GridLayout g, const Box b, const T* __restrict__ s,
                                            const T* __restrict__ s_prev, const T* __restrict__ r,
                                            const T* __restrict__ r_prev, const ImagingStencil w,
                                            ImagingCondition condition, float weight,
                                            float* __restrict__ image,
                                            float* __restrict__ illumination) {
  const auto load = [](const T* p, int64_t c) { return to_float(p[c]); };
  const int ny = b.y1 - b.y0;
  for_each_box_row_cell(g, b, [&](int64_t row, int i, int64_t d, int64_t c) {
    const float sv = to_float(s[c]);
    const float weighted = __fmul_rn(weight, sv);
    const float term = condition_term(condition, w, g, b, b.x0 + i, b.y0 + int(row % ny),
                                      b.z0 + int(row / ny), s, s_prev, r, r_prev, weight, weighted,
                                      load);
    image[d] = __fadd_rn(image[d], term);
    illumination[d] = __fadd_rn(illumination[d], __fmul_rn(weighted, sv));
  });
}

// One thread per gather value (grid-stride): consecutive threads take consecutive lags of one
// depth, whose shifted cells are neighbours along the lag's axis, so the loads of a warp fall on
// few cache lines. The adds are the only writes of each value: no atomics.
template <class T>
__global__ void offset_gathers_kernel(const GridLayout g, const OffsetGatherLayout l,
                                      const T* __restrict__ s, const T* __restrict__ r,
                                      float weight, float* __restrict__ gathers) {
  const auto load = [](const T* p, int64_t c) { return to_float(p[c]); };
  const int64_t count = l.values();
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < count;
       e += int64_t(gridDim.x) * blockDim.x)
    gathers[e] = __fadd_rn(gathers[e], offset_gather_increment(l, g, e, s, r, weight, load));
}

// `background` may be `field` itself (a propagator used as its own background), so neither is
// __restrict__; each cell is read and written by one thread only.
template <class T>
__global__ void born_source_kernel(const GridLayout g, const Box b, const T* background,
                                   const T* __restrict__ v2dt2, const float* __restrict__ m,
                                   T* field) {
  for_each_box_cell(g, b, [&](int64_t d, int64_t c) {
    const float source = __fmul_rn(__fmul_rn(to_float(v2dt2[c]), m[d]), to_float(background[c]));
    field[c] = from_float<T>(__fadd_rn(to_float(field[c]), source));
  });
}

} // namespace

void gather_cells(const void* field, const int64_t* index, int64_t count, void* ring,
                  Storage storage, cudaStream_t stream) {
  if (count <= 0) return;
  if (storage == Storage::fp32)
    gather_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const float*>(field), index, count, static_cast<float*>(ring));
  else
    gather_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const __half*>(field), index, count, static_cast<__half*>(ring));
  CUDA_CHECK_LAUNCH("gather_kernel");
}

void scatter_cells(const void* ring, const int64_t* index, int64_t count, void* field,
                   Storage storage, cudaStream_t stream) {
  if (count <= 0) return;
  if (storage == Storage::fp32)
    scatter_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const float*>(ring), index, count, static_cast<float*>(field));
  else
    scatter_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const __half*>(ring), index, count, static_cast<__half*>(field));
  CUDA_CHECK_LAUNCH("scatter_kernel");
}

void pack_box(const GridLayout& g, const Box& box, const void* field, Storage storage,
              float* dense, cudaStream_t stream) {
  if (box.empty()) return;
  if (storage == Storage::fp32)
    pack_box_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const float*>(field), dense);
  else
    pack_box_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const __half*>(field), dense);
  CUDA_CHECK_LAUNCH("pack_box_kernel");
}

void unpack_box(const GridLayout& g, const Box& box, const float* dense, void* field,
                Storage storage, cudaStream_t stream) {
  if (box.empty()) return;
  if (storage == Storage::fp32)
    unpack_box_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(g, box, dense,
                                                                 static_cast<float*>(field));
  else
    unpack_box_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(g, box, dense,
                                                                 static_cast<__half*>(field));
  CUDA_CHECK_LAUNCH("unpack_box_kernel");
}

void accumulate_image_box(const GridLayout& g, const Box& box, const void* source,
                          const void* receiver, Storage storage, float weight, float* image,
                          float* illumination, cudaStream_t stream) {
  if (box.empty()) return;
  if (storage == Storage::fp32)
    accumulate_image_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const float*>(source), static_cast<const float*>(receiver), weight,
        image, illumination);
  else
    accumulate_image_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const __half*>(source), static_cast<const __half*>(receiver), weight,
        image, illumination);
  CUDA_CHECK_LAUNCH("accumulate_image_kernel");
}

void accumulate_condition_box(const GridLayout& g, const Box& box, ImagingCondition condition,
                              const LaplacianWeights& weights, const void* source,
                              const void* source_prev, const void* receiver,
                              const void* receiver_prev, Storage storage, float weight,
                              float* image, float* illumination, cudaStream_t stream) {
  if (box.empty()) return;
  if (condition == ImagingCondition::cross) {
    accumulate_image_box(g, box, source, receiver, storage, weight, image, illumination, stream);
    return;
  }
  const ImagingStencil w = make_imaging_stencil(weights);
  if (storage == Storage::fp32)
    accumulate_condition_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const float*>(source), static_cast<const float*>(source_prev),
        static_cast<const float*>(receiver), static_cast<const float*>(receiver_prev), w, condition,
        weight, image, illumination);
  else
    accumulate_condition_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const __half*>(source), static_cast<const __half*>(source_prev),
        static_cast<const __half*>(receiver), static_cast<const __half*>(receiver_prev), w, condition,
        weight, image, illumination);
  CUDA_CHECK_LAUNCH("accumulate_condition_kernel");
}

void accumulate_offset_gathers(const GridLayout& g, const OffsetGatherLayout& layout,
                               const void* source, const void* receiver, Storage storage,
                               float weight, float* gathers, cudaStream_t stream) {
  const int64_t count = layout.values();
  if (count <= 0) return;
  if (storage == Storage::fp32)
    offset_gathers_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        g, layout, static_cast<const float*>(source), static_cast<const float*>(receiver), weight,
        gathers);
  else
    offset_gathers_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        g, layout, static_cast<const __half*>(source), static_cast<const __half*>(receiver),
        weight, gathers);
  CUDA_CHECK_LAUNCH("offset_gathers_kernel");
}

void add_born_source(const GridLayout& g, const Box& box, const void* background,
                     const void* v2dt2, const float* m, void* field, Storage storage,
                     cudaStream_t stream) {
  if (box.empty()) return;
  if (storage == Storage::fp32)
    born_source_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const float*>(background), static_cast<const float*>(v2dt2), m,
        static_cast<float*>(field));
  else
    born_source_kernel<<<box_grid(box), kRowThreads, 0, stream>>>(
        g, box, static_cast<const __half*>(background), static_cast<const __half*>(v2dt2), m,
        static_cast<__half*>(field));
  CUDA_CHECK_LAUNCH("born_source_kernel");
}

} // namespace rtm::cuda
