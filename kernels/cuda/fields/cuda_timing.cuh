// Profiling of a CUDA wavefield (solvers/contracts/field_probes.h, enable_timing / timing), for the
// acoustic (kernels/cuda/fields/cuda_propagator.cuh) and the TTI (cuda_tti_wavefield.cuh) wavefield alike:
// the utility layer's OperationTimer (kernels/cuda/util/operation_timer.cuh) around each timed operation
// on the field's stream, one kind per PropagatorTiming field, read back in batches.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/util/operation_timer.cuh"
#include "solvers/contracts/field_probes.h"

namespace rtm::cuda {

class WavefieldTimer {
public:
  // Kinds of timed operations, one per PropagatorTiming field.
  enum class Op { step, points, boundary, imaging, box_copy, born, count };

  // `device`: the field's.
  explicit WavefieldTimer(int device) : device_(device), timer_(device, int(Op::count)) {}

  // On: every total and count back to 0; off: the pending intervals collected. Makes the device
  // current.
  void enable(bool on);
  // Around one operation queued on `stream` while on (begin before its first launch, end after its
  // last); nothing while off.
  void begin(cudaStream_t stream) {
    if (on_) timer_.begin(stream);
  }
  void end(cudaStream_t stream, Op op) {
    if (on_) timer_.end(stream, int(op));
  }
  // A step() finished while on; fused: of those, taken by CudaShotFields' fused backward kernel.
  void count_step() {
    if (on_) ++steps_;
  }
  void count_fused_step() {
    if (on_) ++fused_steps_;
  }
  bool on() const { return on_; }
  // Collects, and returns the totals. Makes the device current.
  PropagatorTiming timing();

private:
  int device_ = 0;
  bool on_ = false;
  int64_t steps_ = 0, fused_steps_ = 0;
  OperationTimer timer_;
};

} // namespace rtm::cuda
