// Profiling of a CUDA wavefield (kernels/cuda/fields/cuda_timing.cuh), and the acoustic field's hooks to it.
#include "kernels/cuda/fields/cuda_timing.cuh"

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"

namespace rtm::cuda {

void WavefieldTimer::enable(bool on) {
  CUDA_CHECK(cudaSetDevice(device_));
  if (on) {
    timer_.reset();
    steps_ = 0;
    fused_steps_ = 0;
  } else {
    timer_.collect();
  }
  on_ = on;
}

PropagatorTiming WavefieldTimer::timing() {
  CUDA_CHECK(cudaSetDevice(device_));
  timer_.collect();
  PropagatorTiming t;
  t.step_ms = timer_.total_ms(int(Op::step));
  t.points_ms = timer_.total_ms(int(Op::points));
  t.boundary_ms = timer_.total_ms(int(Op::boundary));
  t.imaging_ms = timer_.total_ms(int(Op::imaging));
  t.box_copy_ms = timer_.total_ms(int(Op::box_copy));
  t.born_ms = timer_.total_ms(int(Op::born));
  t.steps = steps_;
  t.fused_steps = fused_steps_;
  return t;
}

void CudaWavefield::enable_timing(bool on) { timer_.enable(on); }

PropagatorTiming CudaWavefield::timing() const { return timer_.timing(); }

void CudaWavefield::begin_timed() const { timer_.begin(stream_); }

void CudaWavefield::end_timed(TimedOp op) const { timer_.end(stream_, op); }

} // namespace rtm::cuda
