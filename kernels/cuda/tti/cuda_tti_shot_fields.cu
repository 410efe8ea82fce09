// A shot's TTI source and receiver fields on one GPU (solvers/contracts/shot_fields.h): the image
// S_p R_p and illumination S_p S_p by the acoustic imaging kernel (rtm_ops.cuh) on p through the
// TTI layout, and the Born source C (m S_p, 0), into p with v2dt2 E and into q with v2dt2 S, so
// that the image is its exact adjoint (docs/physics.md, TTI). As the CPU reference
// (kernels/cpu/tti_propagator.cpp, CpuTtiShotFields), with its float order. The two streams wait
// for each other through events, so nothing synchronises the host.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/cuda_tti_shot_fields.cuh"
#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"
#include "kernels/cuda/tti_backend.h"

namespace rtm::cuda {
namespace {

constexpr int kBornThreads = 256;

// receiver (p, q) += (base E, base S), base = (v2dt2 * m) * S_p, over the box; m dense [z][y][x].
// __fmul_rn / __fadd_rn: no fused multiply-add, the CPU's values to the bit.
__global__ void __launch_bounds__(kBornThreads)
    tti_born_source_kernel(GridLayout g, GridLayout t, Box b, const float* __restrict__ source,
                           const float* __restrict__ v2dt2, const float* __restrict__ e,
                           const float* __restrict__ s_coef, const float* __restrict__ m,
                           float* __restrict__ receiver) {
  // Box's methods are host functions: its extents by hand.
  const int bnx = b.x1 - b.x0, bny = b.y1 - b.y0, bnz = b.z1 - b.z0;
  const int64_t cell = int64_t(blockIdx.x) * kBornThreads + threadIdx.x;
  if (cell >= int64_t(bnx) * bny * bnz) return;
  const int i = b.x0 + int(cell % bnx);
  const int j = b.y0 + int((cell / bnx) % bny);
  const int k = b.z0 + int(cell / (int64_t(bnx) * bny));
  const int64_t f = t.index(i, j, k), a = g.index(i, j, k);
  const float base = __fmul_rn(__fmul_rn(v2dt2[a], m[cell]), source[f]);
  receiver[f] = __fadd_rn(receiver[f], __fmul_rn(base, e[a]));
  receiver[f + tti_q_offset(t)] = __fadd_rn(receiver[f + tti_q_offset(t)], __fmul_rn(base, s_coef[a]));
}

} // namespace

class CudaTtiShotFields final : public ShotFields {
public:
  CudaTtiShotFields(const PropagatorSetup& setup, const std::string& variant, int device)
      : source_(setup, variant, device), receiver_(setup, variant, device) {
    bind(source_, receiver_);
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaEventCreateWithFlags(&source_ready_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&receiver_done_, cudaEventDisableTiming));
  }
  ~CudaTtiShotFields() override {
    cudaSetDevice(receiver_.device_);
    cudaStreamSynchronize(receiver_.stream_); // queued imaging may still use the arrays
    cudaStreamSynchronize(source_.stream_);
    cudaEventDestroy(source_ready_);
    cudaEventDestroy(receiver_done_);
  }

  CudaTtiWavefield& cuda_source() { return source_; }
  CudaTtiWavefield& cuda_receiver() { return receiver_; }

private:
  // Around an operation on the receiver's stream that reads the source field's current pair:
  // begin makes the receiver's stream wait for the source's queued work; end makes the source's
  // stream wait for this operation (its next step overwrites what was read).
  void begin_handoff() {
    CUDA_CHECK(cudaEventRecord(source_ready_, source_.stream_));
    CUDA_CHECK(cudaStreamWaitEvent(receiver_.stream_, source_ready_, 0));
  }
  void end_handoff() {
    CUDA_CHECK(cudaEventRecord(receiver_done_, receiver_.stream_));
    CUDA_CHECK(cudaStreamWaitEvent(source_.stream_, receiver_done_, 0));
  }

  void do_allocate_image(const Box& box) override {
    CudaTtiWavefield& r = receiver_;
    CUDA_CHECK(cudaSetDevice(r.device_));
    CUDA_CHECK(cudaStreamSynchronize(r.stream_)); // queued imaging may still use the old arrays
    image_ = DeviceBuffer();
    illumination_ = DeviceBuffer();
    const size_t bytes = size_t(box.cells()) * sizeof(float);
    r.require_free_memory(2 * bytes,
                          "the image and the illumination (2 x " + std::to_string(box.cells()) +
                              " cells x 4 B)",
                          "");
    image_ = DeviceBuffer(bytes, AllocationKind::plain, r.device_);
    illumination_ = DeviceBuffer(bytes, AllocationKind::plain, r.device_);
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, bytes, r.stream_));
    CUDA_CHECK(cudaMemsetAsync(illumination_.data(), 0, bytes, r.stream_));
  }

  void do_accumulate_image(float weight) override {
    CudaTtiWavefield& r = receiver_;
    CUDA_CHECK(cudaSetDevice(r.device_));
    begin_handoff();
    r.begin_timed();
    // image += (weight S_p) R_p, illumination += (weight S_p) S_p: p's cells of the TTI layout.
    accumulate_image_box(r.layout(), image_box(), source_.cur(), r.cur(), Storage::fp32, weight,
                         image_.as<float>(), illumination_.as<float>(), r.stream_);
    r.end_timed(CudaTtiWavefield::TimedOp::imaging);
    end_handoff();
  }

  std::vector<float> do_download_image(bool illumination) const override {
    const DeviceBuffer& buffer = illumination ? illumination_ : image_;
    std::vector<float> host(buffer.bytes() / sizeof(float));
    if (host.empty()) return host;
    CUDA_CHECK(cudaSetDevice(receiver_.device_));
    CUDA_CHECK(cudaMemcpyAsync(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost,
                               receiver_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(receiver_.stream_));
    return host;
  }

  void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) override {
    cudaStream_t stream = receiver_.stream_;
    CUDA_CHECK(cudaSetDevice(receiver_.device_));
    CUDA_CHECK(cudaMemcpyAsync(image_.data(), image.data(), image_.bytes(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(illumination_.data(), illumination.data(), illumination_.bytes(),
                               cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream)); // the host vectors may go away after the return
  }

  void do_set_born_perturbation(const Box&, const std::vector<float>& m) override {
    CudaTtiWavefield& r = receiver_;
    CUDA_CHECK(cudaSetDevice(r.device_));
    CUDA_CHECK(cudaStreamSynchronize(r.stream_)); // queued Born sources may still read the old one
    born_m_ = DeviceBuffer();
    born_m_ = DeviceBuffer(m.size() * sizeof(float), AllocationKind::plain, r.device_);
    CUDA_CHECK(cudaMemcpyAsync(born_m_.data(), m.data(), born_m_.bytes(), cudaMemcpyHostToDevice, r.stream_));
    CUDA_CHECK(cudaStreamSynchronize(r.stream_));
  }

  void do_inject_born_source() override {
    CudaTtiWavefield& r = receiver_;
    const Box& b = born_box();
    if (b.cells() == 0) return;
    CUDA_CHECK(cudaSetDevice(r.device_));
    const DeviceTti& d = *r.tti_;
    begin_handoff();
    r.begin_timed();
    const unsigned blocks = unsigned((b.cells() + kBornThreads - 1) / kBornThreads);
    tti_born_source_kernel<<<blocks, kBornThreads, 0, r.stream_>>>(d.g, d.t, b, source_.cur(), d.v2dt2.data(),
                                                                   d.e.data(), d.s.data(),
                                                                   born_m_.as<float>(), r.cur());
    CUDA_CHECK_LAUNCH("tti_born_source_kernel");
    r.end_timed(CudaTtiWavefield::TimedOp::born);
    end_handoff();
  }

  CudaTtiWavefield source_, receiver_;
  // float [z][y][x] over image_box() and born_box(), on the fields' device.
  DeviceBuffer image_, illumination_, born_m_;
  cudaEvent_t source_ready_ = nullptr, receiver_done_ = nullptr;
};

std::unique_ptr<ShotFields> make_cuda_tti_shot_fields(const PropagatorSetup& setup, const std::string& variant,
                                                      int device) {
  return std::make_unique<CudaTtiShotFields>(setup, variant, device);
}

CudaTtiShot make_cuda_tti_shot(const PropagatorSetup& setup, const std::string& variant, int device) {
  auto fields = std::make_unique<CudaTtiShotFields>(setup, variant, device);
  CudaTtiShot shot;
  shot.source = &fields->cuda_source();
  shot.receiver = &fields->cuda_receiver();
  shot.fields = std::move(fields);
  return shot;
}

} // namespace rtm::cuda
