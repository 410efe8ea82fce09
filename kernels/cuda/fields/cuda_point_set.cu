// Point sets of a CUDA wavefield (solvers/contracts/wavefield.h, PointSet): the stencils and the series in
// device memory, injected and recorded by one block per point. Freed with the set.
#include <cuda_fp16.h>

#include <cstring>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/fields/point_ops.cuh"

namespace rtm::cuda {
namespace {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void add_to(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(__half* p, float v) { atomicAdd(p, __float2half_rn(v)); }

// p_cur[cell] += (((wz * wy) * wx) * v2dt2[cell]) * amp, amp = scale * series[point] (point_ops.cuh);
// points may share cells, hence the atomic add.
template <class T>
__global__ void __launch_bounds__(kPointThreads)
    inject_kernel(T* p_cur, const T* v2dt2, GridLayout g, const PointStencil* points,
                  const float* series_row, float scale) {
  const PointStencil& s = points[blockIdx.x]; // read in place: a local copy would go to local memory
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  for_each_injected_cell(s, [&](int a, int b, int c, float w) {
    const int64_t n = g.index(s.i0 + a, s.j0 + b, s.k0 + c);
    add_to(p_cur + n, __fmul_rn(__fmul_rn(w, to_float(v2dt2[n])), amp));
  });
}

template <class T>
__global__ void __launch_bounds__(kPointThreads)
    record_kernel(const T* p_cur, GridLayout g, const PointStencil* points, float* series_row) {
  const float v = record_point(points[blockIdx.x], g, [&](int64_t n) { return to_float(p_cur[n]); });
  if (threadIdx.x == 0) series_row[blockIdx.x] = v;
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

PointBuffers::PointBuffers(const std::vector<PointStencil>& points, int nt, int device,
                           cudaStream_t stream)
    : count_(int(points.size())), nt_(nt), device_(device), stream_(stream) {
  CUDA_CHECK(cudaSetDevice(device_));
  stencils_ = DeviceBuffer(points.size() * sizeof(PointStencil), AllocationKind::plain, device_);
  series_ = DeviceBuffer(size_t(nt) * points.size() * sizeof(float), AllocationKind::plain, device_);
  if (points.empty()) return;
  CUDA_CHECK(cudaMemcpyAsync(stencils_.data(), points.data(), stencils_.bytes(), cudaMemcpyHostToDevice,
                             stream_));
  CUDA_CHECK(cudaMemsetAsync(series_.data(), 0, series_.bytes(), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

PointBuffers::~PointBuffers() {
  cudaSetDevice(device_); // unchecked: a destructor cannot throw
  cudaStreamSynchronize(stream_);
}

void PointBuffers::upload_series(const std::vector<float>& series) {
  if (series.empty()) return;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(series_.data(), series.data(), series.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::vector<float> PointBuffers::download_series() const {
  std::vector<float> series(size_t(nt_) * size_t(count_));
  if (series.empty()) return series;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(series.data(), series_.data(), series.size() * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return series;
}

class CudaPointSet final : public PointSet {
public:
  CudaPointSet(CudaWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field),
        buffers_(points, nt, field.device_, field.stream_) {}
  ~CudaPointSet() override {
    // Queued copies may still read the staging (buffers_ waits for its own readers).
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
    if (staging_) cudaFreeHost(staging_);
    if (staged_) cudaEventDestroy(staged_);
  }

private:
  void do_upload_series(const std::vector<float>& series) override { buffers_.upload_series(series); }

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
    CUDA_CHECK(cudaMemcpyAsync(buffers_.stencils(), host, point_bytes, cudaMemcpyHostToDevice,
                               field_.stream_));
    CUDA_CHECK(cudaMemcpyAsync(buffers_.series_row(0), host + point_bytes, series_bytes,
                               cudaMemcpyHostToDevice, field_.stream_));
    CUDA_CHECK(cudaEventRecord(staged_, field_.stream_));
    return true;
  }

  std::vector<float> do_download_series() const override { return buffers_.download_series(); }

  void do_inject(int t, float scale) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const float* row = buffers_.series_row(t);
    const PointStencil* points = buffers_.stencils();
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
    field_.begin_timed();
    record_points(field_.layout(), field_.current_field(), buffers_.stencils(), size(),
                  buffers_.series_row(t), field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::points);
  }

  CudaWavefield& field_;
  PointBuffers buffers_;
  void* staging_ = nullptr;     // pinned: the points, then the series (do_replace)
  cudaEvent_t staged_ = nullptr; // after the copies out of staging_ last queued
};

std::unique_ptr<PointSet> CudaWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  if (row_->storage == Storage::bfp16) return make_bfp16_point_set(*this, points, nt);
  return std::make_unique<CudaPointSet>(*this, points, nt);
}

} // namespace rtm::cuda
