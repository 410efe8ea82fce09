// Profiling of a CUDA wavefield (solvers/contracts/field_probes.h, enable_timing / timing): the
// utility layer's OperationTimer (kernels/cuda/operation_timer.cuh) around each timed operation on
// the field's stream, one kind per PropagatorTiming field, read back in batches.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_propagator.cuh"

namespace rtm::cuda {

void CudaWavefield::enable_timing(bool on) {
  CUDA_CHECK(cudaSetDevice(device_));
  if (on) {
    timer_.reset();
    timed_steps_ = 0;
    timed_fused_steps_ = 0;
  } else {
    timer_.collect();
  }
  timing_on_ = on;
}

PropagatorTiming CudaWavefield::timing() const {
  CUDA_CHECK(cudaSetDevice(device_));
  timer_.collect();
  PropagatorTiming t;
  t.step_ms = timer_.total_ms(int(TimedOp::step));
  t.points_ms = timer_.total_ms(int(TimedOp::points));
  t.boundary_ms = timer_.total_ms(int(TimedOp::boundary));
  t.imaging_ms = timer_.total_ms(int(TimedOp::imaging));
  t.box_copy_ms = timer_.total_ms(int(TimedOp::box_copy));
  t.born_ms = timer_.total_ms(int(TimedOp::born));
  t.steps = timed_steps_;
  t.fused_steps = timed_fused_steps_;
  return t;
}

void CudaWavefield::begin_timed() const {
  if (timing_on_) timer_.begin(stream_);
}

void CudaWavefield::end_timed(TimedOp op) const {
  if (timing_on_) timer_.end(stream_, int(op));
}

} // namespace rtm::cuda
