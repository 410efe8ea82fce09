// Point sets of the CUDA TTI wavefield (solvers/contracts/wavefield.h, PointSet): the source term
// C (f, 0) injected into p with v2dt2 E and into q with v2dt2 S, as the CPU reference
// (kernels/cpu/tti_propagator.cpp, CpuTtiPointSet) does, and p recorded by the acoustic field's
// record_points; stencils and series in device memory (point_ops.cuh), freed with the set.
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"
#include "kernels/cuda/fields/point_ops.cuh"

namespace rtm::cuda {
namespace {

// One block per point (point_ops.cuh). The CPU reference's float order, written with __fmul_rn so
// that nothing is contracted into a fused multiply-add:
//   base = ((wz * wy) * wx) * v2dt2,  p += (base * E) * amp,  q += (base * S) * amp,
//   amp = scale * series. Points may share cells: atomic adds.
__global__ void __launch_bounds__(kPointThreads)
    tti_inject_kernel(float* cur, GridLayout g, GridLayout t, const float* v2dt2, const float* e,
                      const float* s_coef, const PointStencil* points, const float* series_row,
                      float scale) {
  const PointStencil& s = points[blockIdx.x];
  const int64_t qo = tti_q_offset(t);
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  for_each_injected_cell(s, [&](int a, int b, int c, float w) {
    const int64_t p_cell = t.index(s.i0 + a, s.j0 + b, s.k0 + c); // q's: one scalar plane after
    const int64_t ci = g.index(s.i0 + a, s.j0 + b, s.k0 + c);
    const float base = __fmul_rn(w, v2dt2[ci]);
    atomicAdd(cur + p_cell, __fmul_rn(__fmul_rn(base, e[ci]), amp));
    atomicAdd(cur + p_cell + qo, __fmul_rn(__fmul_rn(base, s_coef[ci]), amp));
  });
}

} // namespace

class CudaTtiPointSet final : public PointSet {
public:
  CudaTtiPointSet(CudaTtiWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field),
        buffers_(points, nt, field.device_, field.stream_) {}

private:
  void do_upload_series(const std::vector<float>& series) override { buffers_.upload_series(series); }
  std::vector<float> do_download_series() const override { return buffers_.download_series(); }

  void do_inject(int t, float scale) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const DeviceTti& d = *field_.tti_;
    field_.begin_timed();
    tti_inject_kernel<<<size(), kPointThreads, 0, field_.stream_>>>(
        field_.cur(), d.g, d.t, d.v2dt2.data(), d.e.data(), d.s.data(), buffers_.stencils(),
        buffers_.series_row(t), scale);
    CUDA_CHECK_LAUNCH("tti_inject_kernel");
    field_.end_timed(CudaTtiWavefield::TimedOp::points);
  }

  void do_record(int t) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    // p's cells: the TTI layout's index(i, j, k).
    record_points(field_.layout(), DeviceField{field_.cur(), Storage::fp32}, buffers_.stencils(), size(),
                  buffers_.series_row(t), field_.stream_);
    field_.end_timed(CudaTtiWavefield::TimedOp::points);
  }

  CudaTtiWavefield& field_;
  PointBuffers buffers_;
};

std::unique_ptr<PointSet> CudaTtiWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  return std::make_unique<CudaTtiPointSet>(*this, points, nt);
}

} // namespace rtm::cuda
