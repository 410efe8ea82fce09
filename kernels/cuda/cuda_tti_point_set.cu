// Point sets of the CUDA TTI wavefield (solvers/contracts/wavefield.h, PointSet): the source term
// C (f, 0) injected into p with v2dt2 E and into q with v2dt2 S, as the CPU reference
// (kernels/cpu/tti_propagator.cpp, CpuTtiPointSet) does, and p recorded by the acoustic field's
// record_points (point_ops.cuh). Stencils and series live in device memory; freed with the set.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_tti_wavefield.cuh"
#include "kernels/cuda/point_ops.cuh"

namespace rtm::cuda {
namespace {

constexpr int kPointThreads = kMaxPointTaps * kMaxPointTaps;

// One block per point, one thread per row of its box (plane c = t / kMaxPointTaps, row b = t %
// kMaxPointTaps). The CPU reference's float order, written with __fmul_rn so that nothing is
// contracted into a fused multiply-add:
//   base = ((wz * wy) * wx) * v2dt2,  p += (base * E) * amp,  q += (base * S) * amp,
//   amp = scale * series. Points may share cells: atomic adds.
__global__ void __launch_bounds__(kPointThreads)
    tti_inject_kernel(float* cur, GridLayout g, GridLayout t, const float* v2dt2, const float* e,
                      const float* s_coef, const PointStencil* points, const float* series_row,
                      float scale) {
  const PointStencil& s = points[blockIdx.x];
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c >= s.nz || b >= s.ny) return;
  const int64_t qo = tti_q_offset(t);
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  const float wzy = __fmul_rn(s.wz[c], s.wy[b]);
  const int64_t field_row = t.index(s.i0, s.j0 + b, s.k0 + c);
  const int64_t coef_row = g.index(s.i0, s.j0 + b, s.k0 + c);
  for (int a = 0; a < s.nx; ++a) {
    const int64_t ci = coef_row + a;
    const float base = __fmul_rn(__fmul_rn(wzy, s.wx[a]), v2dt2[ci]);
    atomicAdd(cur + field_row + a, __fmul_rn(__fmul_rn(base, e[ci]), amp));
    atomicAdd(cur + field_row + a + qo, __fmul_rn(__fmul_rn(base, s_coef[ci]), amp));
  }
}

} // namespace

class CudaTtiPointSet final : public PointSet {
public:
  CudaTtiPointSet(CudaTtiWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field) {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    stencils_ = DeviceBuffer(points.size() * sizeof(PointStencil), AllocationKind::plain, field_.device_);
    series_ = DeviceBuffer(size_t(nt) * points.size() * sizeof(float), AllocationKind::plain, field_.device_);
    if (!points.empty()) {
      // On the field's own (non-blocking) stream and waited for: ordered with later uploads.
      CUDA_CHECK(cudaMemcpyAsync(stencils_.data(), points.data(), stencils_.bytes(), cudaMemcpyHostToDevice,
                                 field_.stream_));
      CUDA_CHECK(cudaMemsetAsync(series_.data(), 0, series_.bytes(), field_.stream_));
      CUDA_CHECK(cudaStreamSynchronize(field_.stream_));
    }
  }
  ~CudaTtiPointSet() override {
    // Queued injections and recordings may still read the buffers.
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
  }

private:
  void do_upload_series(const std::vector<float>& series) override {
    if (series.empty()) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    CUDA_CHECK(cudaMemcpyAsync(series_.data(), series.data(), series.size() * sizeof(float),
                               cudaMemcpyHostToDevice, field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_));
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
    const DeviceTti& d = *field_.tti_;
    field_.begin_timed();
    tti_inject_kernel<<<size(), kPointThreads, 0, field_.stream_>>>(
        field_.cur(), d.g, d.t, d.v2dt2.data(), d.e.data(), d.s.data(), stencils_.as<PointStencil>(),
        series_.as<float>() + size_t(t) * size(), scale);
    CUDA_CHECK_LAUNCH("tti_inject_kernel");
    field_.end_timed(CudaTtiWavefield::TimedOp::points);
  }

  void do_record(int t) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    // p's cells: the TTI layout's index(i, j, k).
    record_points(field_.layout(), DeviceField{field_.cur(), Storage::fp32}, stencils_.as<PointStencil>(),
                  size(), series_.as<float>() + size_t(t) * size(), field_.stream_);
    field_.end_timed(CudaTtiWavefield::TimedOp::points);
  }

  CudaTtiWavefield& field_;
  DeviceBuffer stencils_; // PointStencil[size()]
  DeviceBuffer series_;   // float[nt][size()]
};

std::unique_ptr<PointSet> CudaTtiWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  return std::make_unique<CudaTtiPointSet>(*this, points, nt);
}

} // namespace rtm::cuda
