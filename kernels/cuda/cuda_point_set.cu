// Point sets of a CUDA wavefield (solvers/contracts/wavefield.h, PointSet): the stencils and the series in
// device memory, injected and recorded by one block per point. Freed with the set.
#include <cuda_fp16.h>

#include <cstring>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_propagator.cuh"
#include "kernels/cuda/point_ops.cuh"

namespace rtm::cuda {
namespace {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void add_to(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(__half* p, float v) { atomicAdd(p, __float2half_rn(v)); }

// Point sets (solvers/contracts/propagator.h, PointStencil): one block per point, one thread per row of
// its box, thread t taking plane c = t / kMaxPointTaps and row b = t % kMaxPointTaps. The float
// arithmetic is PointStencil's order, written with __fmul_rn / __fadd_rn so that the compiler
// does not contract it into fused multiply-adds the CPU reference does not use: traces then
// agree with the CPU's to the bit where the wavefields do.
constexpr int kPointThreads = kMaxPointTaps * kMaxPointTaps;

// p_cur[cell] += (((wz * wy) * wx) * v2dt2[cell]) * amp, amp = scale * series[point]; points may
// share cells, hence the atomic add.
template <class T>
__global__ void __launch_bounds__(kPointThreads)
    inject_kernel(T* p_cur, const T* v2dt2, GridLayout g, const PointStencil* points,
                  const float* series_row, float scale) {
  const PointStencil& s = points[blockIdx.x]; // read in place: a local copy would go to local memory
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c >= s.nz || b >= s.ny) return;
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  const float wzy = __fmul_rn(s.wz[c], s.wy[b]);
  const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
  for (int a = 0; a < s.nx; ++a) {
    const float w = __fmul_rn(__fmul_rn(wzy, s.wx[a]), to_float(v2dt2[row + a]));
    add_to(p_cur + row + a, __fmul_rn(w, amp));
  }
}

// series_row[point] = sum_c wz[c] * sum_b wy[b] * sum_a wx[a] * p_cur[cell], each sum in
// increasing index order: row sums in parallel, then one thread per plane, then one for the point.
template <class T>
__global__ void __launch_bounds__(kPointThreads)
    record_kernel(const T* p_cur, GridLayout g, const PointStencil* points, float* series_row) {
  __shared__ float rows[kPointThreads];
  __shared__ float planes[kMaxPointTaps];
  const PointStencil& s = points[blockIdx.x];
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c < s.nz && b < s.ny) {
    const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
    float sum = 0.0f;
    for (int a = 0; a < s.nx; ++a) sum = __fadd_rn(sum, __fmul_rn(s.wx[a], to_float(p_cur[row + a])));
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
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int k = 0; k < s.nz; ++k) v = __fadd_rn(v, __fmul_rn(s.wz[k], planes[k]));
    series_row[blockIdx.x] = v;
  }
}

} // namespace

void record_points(const GridLayout& g, DeviceField field, const PointStencil* points, int count,
                   float* series_row, cudaStream_t stream) {
  if (count == 0) return;
  if (field.storage == Storage::fp32)
    record_kernel<<<count, kPointThreads, 0, stream>>>(static_cast<const float*>(field.data), g,
                                                       points, series_row);
  else
    record_kernel<<<count, kPointThreads, 0, stream>>>(static_cast<const __half*>(field.data), g,
                                                       points, series_row);
  CUDA_CHECK_LAUNCH("record_kernel");
}

class CudaPointSet final : public PointSet {
public:
  CudaPointSet(CudaWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field) {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    stencils_ = DeviceBuffer(points.size() * sizeof(PointStencil), AllocationKind::plain, field_.device_);
    series_ = DeviceBuffer(size_t(nt) * points.size() * sizeof(float), AllocationKind::plain,
                           field_.device_);
    if (!points.empty()) {
      // On the wavefield's own stream, then waited for: the stream is non-blocking, so a plain
      // cudaMemset (legacy default stream, asynchronous) was not ordered with the upload_series
      // copy that follows on it and, on a busy GPU, could zero a wavelet already uploaded (a
      // shot modelled with no source: seen once as an all-zero trace under 8 concurrent tests).
      CUDA_CHECK(cudaMemcpyAsync(stencils_.data(), points.data(), stencils_.bytes(),
                                 cudaMemcpyHostToDevice, field_.stream_));
      CUDA_CHECK(cudaMemsetAsync(series_.data(), 0, series_.bytes(), field_.stream_));
      CUDA_CHECK(cudaStreamSynchronize(field_.stream_));
    }
  }
  ~CudaPointSet() override {
    // Queued injections and recordings may still read the buffers (and queued copies the staging).
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
    if (staging_) cudaFreeHost(staging_);
    if (staged_) cudaEventDestroy(staged_);
  }

private:
  void do_upload_series(const std::vector<float>& series) override {
    if (series.empty()) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    CUDA_CHECK(cudaMemcpyAsync(series_.data(), series.data(), series.size() * sizeof(float),
                               cudaMemcpyHostToDevice, field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_));
  }

  // Both copies go from a pinned staging buffer of the set's own (made at the first call) onto
  // the field's stream, behind the work queued there, and the host does not wait for them: a
  // driver can queue the next shot's points and data while the device finishes this one. The
  // staging buffer is refilled only once the copies out of it queued last time have run.
  bool do_replace(const std::vector<PointStencil>& points, const std::vector<float>& series) override {
    if (size() == 0) return true;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const size_t point_bytes = points.size() * sizeof(PointStencil);
    const size_t series_bytes = series.size() * sizeof(float);
    static_assert(sizeof(PointStencil) % alignof(float) == 0, "the series follows the points");
    if (!staging_) {
      CUDA_CHECK(cudaMallocHost(&staging_, point_bytes + series_bytes));
      CUDA_CHECK(cudaEventCreateWithFlags(&staged_, cudaEventDisableTiming));
    } else {
      CUDA_CHECK(cudaEventSynchronize(staged_));
    }
    char* host = static_cast<char*>(staging_);
    std::memcpy(host, points.data(), point_bytes);
    std::memcpy(host + point_bytes, series.data(), series_bytes);
    CUDA_CHECK(cudaMemcpyAsync(stencils_.data(), host, point_bytes, cudaMemcpyHostToDevice,
                               field_.stream_));
    CUDA_CHECK(cudaMemcpyAsync(series_.data(), host + point_bytes, series_bytes,
                               cudaMemcpyHostToDevice, field_.stream_));
    CUDA_CHECK(cudaEventRecord(staged_, field_.stream_));
    return true;
  }

  std::vector<float> do_download_series() const override {
    std::vector<float> series(size_t(nt()) * size_t(size()));
    if (series.empty()) return series;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    CUDA_CHECK(cudaMemcpyAsync(series.data(), series_.data(), series.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_));
    return series;
  }

  void do_inject(int t, float scale) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const float* row = series_.as<float>() + size_t(t) * size();
    const auto* points = stencils_.as<PointStencil>();
    const GridLayout& g = field_.layout();
    cudaStream_t stream = field_.stream_;
    field_.begin_timed();
    if (field_.row_->storage == Storage::fp32)
      inject_kernel<<<size(), kPointThreads, 0, stream>>>(static_cast<float*>(field_.cur_),
                                                          field_.v2dt2_.as<float>(), g, points, row, scale);
    else
      inject_kernel<<<size(), kPointThreads, 0, stream>>>(static_cast<__half*>(field_.cur_),
                                                          field_.v2dt2_.as<__half>(), g, points, row, scale);
    CUDA_CHECK_LAUNCH("inject_kernel");
    field_.end_timed(CudaWavefield::TimedOp::points);
  }

  void do_record(int t) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    float* row = series_.as<float>() + size_t(t) * size();
    field_.begin_timed();
    record_points(field_.layout(), field_.current_field(), stencils_.as<PointStencil>(), size(), row,
                  field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::points);
  }

  CudaWavefield& field_;
  DeviceBuffer stencils_; // PointStencil[size()]
  DeviceBuffer series_;   // float[nt][size()]
  void* staging_ = nullptr;     // pinned: the points, then the series (do_replace)
  cudaEvent_t staged_ = nullptr; // after the copies out of staging_ last queued
};

std::unique_ptr<PointSet> CudaWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  if (row_->storage == Storage::bfp16) return make_bfp16_point_set(*this, points, nt);
  return std::make_unique<CudaPointSet>(*this, points, nt);
}

} // namespace rtm::cuda
