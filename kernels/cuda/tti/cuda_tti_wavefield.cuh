// The TTI wavefield on one GPU (solvers/contracts/wavefield.h): the pair (p, q) in one array of
// tti_layout(setup.layout), stepped by a TTI variant of tti_step.cuh ("tti-pipelined" or
// "tti-naive"). The same contract as the CPU reference (kernels/cpu/tti_propagator.h): layout() is
// the TTI layout (its index(i, j, k) is p's cell); point sets inject into p and q with the weights
// v2dt2 E and v2dt2 S and record p (cuda_tti_point_set.cu); the boundary store keeps the 8-cell
// ring of both fields in float32 (cuda_tti_boundary_store.cu); copy_current / set_current and the
// snapshot store move p;
// check_health looks at both. Host code reaches it through tti_backend.h. Every operation is
// queued on the field's own non-blocking stream.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/fields/cuda_timing.cuh"
#include "kernels/cuda/tti/tti_device.cuh"
#include "solvers/contracts/wavefield.h"

namespace rtm::cuda {

class CudaTtiPointSet;
class CudaTtiBoundaryStore;
class CudaTtiShotFields;

class CudaTtiWavefield final : public Wavefield {
public:
  // `variant`: "tti-pipelined" or "tti-naive" (std::invalid_argument otherwise). std::runtime_error
  // with both numbers when the fields and coefficients do not fit in free device memory.
  CudaTtiWavefield(const PropagatorSetup& setup, const std::string& variant, int device);
  ~CudaTtiWavefield() override;

  std::string name() const override { return "cuda/" + variant_; }
  void zero_state() override;
  void finish_step() override;
  void synchronize() override;
  void reverse_time() override;
  FieldHealth check_health() const override; // both fields: a reduction on the device each
  void enable_timing(bool on) override;
  PropagatorTiming timing() const override;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  const std::string& variant() const { return variant_; }

private:
  friend class CudaTtiPointSet;
  friend class CudaTtiBoundaryStore;
  friend class CudaTtiShotFields;

  void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void do_step_planes(int k_begin, int k_end) override;
  PlaneSpan do_next_field_planes(int k_begin, int k_end) override;
  void do_copy_current(const Box& box, std::vector<float>& dense) const override;
  void do_set_current(const Box& box, const std::vector<float>& dense) override;
  std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) override;
  // Float32 rings only, as on the CPU: a 16-bit ring is refused (std::invalid_argument).
  std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                         RingPrecision precision) override;
  // Snapshots of p (two-sweep migration: the source field is restored, never stepped back), the
  // acoustic field's store (kernels/cuda/fields/cuda_snapshot_store.cuh) on p's cells.
  std::unique_ptr<SnapshotStore> do_make_snapshot_store(const Box& box, int slots,
                                                         RingPrecision precision,
                                                         SnapshotPlace place) override;

  using TimedOp = WavefieldTimer::Op;
  void begin_timed() const;
  void end_timed(TimedOp op) const;
  // Throws std::runtime_error (both numbers and `hint`) when `bytes` exceed the free device memory.
  void require_free_memory(size_t bytes, const std::string& what, const std::string& hint) const;
  float* box_staging(const Box& box) const;
  // p[n] and q[n]: the current pair; q is one scalar plane after p.
  float* cur() const { return tti_->cur.data(); }

  int device_ = 0;
  std::string variant_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceTti> tti_; // coefficients, damping, both pairs, pass 1's scratch
  mutable DeviceBuffer box_staging_;
  mutable WavefieldTimer timer_; // profiling (enable_timing, kernels/cuda/fields/cuda_timing.cuh)
};

} // namespace rtm::cuda
