// What the point sets of every CUDA wavefield share (float32 and half: kernels/cuda/fields/cuda_point_set.cu,
// bfp16: bfp16_point_set.cu, TTI: cuda_tti_point_set.cu): the walk of a point's stencil that each
// injection and recording kernel runs, the recording of a float or half field, and the device
// memory of a set (its stencils and series). cuda_point_set.cu defines the host functions.
//
// One block per point, one thread per row of its box: thread t takes plane c = t / kMaxPointTaps
// and row b = t % kMaxPointTaps. The float arithmetic is PointStencil's order, written with
// __fmul_rn / __fadd_rn so that the compiler does not contract it into fused multiply-adds the
// CPU reference does not use: traces then agree with the CPU's to the bit where the wavefields do.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/fields/field_ops.cuh"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

constexpr int kPointThreads = kMaxPointTaps * kMaxPointTaps;

// Injection by this thread of point s's block: add(a, b, c, w) for each cell (s.i0 + a, s.j0 + b,
// s.k0 + c) of its row of the box (none where the row lies outside it), w = (wz[c] * wy[b]) * wx[a]
// rounded as written. The caller finishes each cell's term in its own order (points may share
// cells: it adds atomically).
template <class AddCell>
__device__ __forceinline__ void for_each_injected_cell(const PointStencil& s, AddCell add) {
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c >= s.nz || b >= s.ny) return;
  const float wzy = __fmul_rn(s.wz[c], s.wy[b]);
  for (int a = 0; a < s.nx; ++a) add(a, b, c, __fmul_rn(wzy, s.wx[a]));
}

// Recording by the whole block of point s: returns, in thread 0,
//   sum_c wz[c] * sum_b wy[b] * sum_a wx[a] * value(g.index(cell)),
// each sum in increasing index order: row sums in parallel, then one thread per plane, then one
// for the point (the other threads' results are meaningless). value(n): the field's cell n as a
// float. Every thread of the block must call it (it synchronises the block).
template <class Value>
__device__ __forceinline__ float record_point(const PointStencil& s, const GridLayout& g, Value value) {
  __shared__ float rows[kPointThreads];
  __shared__ float planes[kMaxPointTaps];
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c < s.nz && b < s.ny) {
    const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
    float sum = 0.0f;
    for (int a = 0; a < s.nx; ++a) sum = __fadd_rn(sum, __fmul_rn(s.wx[a], value(row + a)));
    rows[threadIdx.x] = sum;
  }
  __syncthreads();
  if (threadIdx.x < s.nz) {
    float plane = 0.0f;
    for (int r = 0; r < s.ny; ++r)
      plane = __fadd_rn(plane, __fmul_rn(s.wy[r], rows[threadIdx.x * kMaxPointTaps + r]));
    planes[threadIdx.x] = plane;
  }
  __syncthreads();
  float v = 0.0f;
  if (threadIdx.x == 0)
    for (int k = 0; k < s.nz; ++k) v = __fadd_rn(v, __fmul_rn(s.wz[k], planes[k]));
  return v;
}

// series_row[point] = record_point of the float32 or half `field` (layout g), for the `count`
// device stencils `points` (the CPU reference's order, to the bit). Queued on `stream`.
void record_points(const GridLayout& g, DeviceField field, const PointStencil* points, int count,
                   float* series_row, cudaStream_t stream);

// The device memory of a point set (solvers/contracts/wavefield.h, PointSet): its stencils and its
// series [nt][points], on the owning field's device. Every copy goes on the field's stream, which
// is non-blocking: a plain cudaMemset (legacy default stream, asynchronous) would not be ordered
// with the copies queued there and, on a busy GPU, could zero a wavelet already uploaded (a shot
// modelled with no source: seen once as an all-zero trace under 8 concurrent tests).
class PointBuffers {
public:
  // Uploads the stencils and zeroes the series, and waits for both. `device` is made current.
  PointBuffers(const std::vector<PointStencil>& points, int nt, int device, cudaStream_t stream);
  // Waits for the stream first: queued injections and recordings may still read the buffers (an
  // owner that holds more device memory for them declares it before its PointBuffers).
  ~PointBuffers();
  PointBuffers(const PointBuffers&) = delete;
  PointBuffers& operator=(const PointBuffers&) = delete;

  // The whole series, [nt][points]; both wait for the copy. `device` is made current.
  void upload_series(const std::vector<float>& series);
  std::vector<float> download_series() const;

  PointStencil* stencils() const { return stencils_.as<PointStencil>(); }
  float* series_row(int t) const { return series_.as<float>() + size_t(t) * size_t(count_); }

private:
  int count_ = 0, nt_ = 0, device_ = 0;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer stencils_; // PointStencil[count_]
  DeviceBuffer series_;   // float[nt_][count_]
};

} // namespace rtm::cuda
