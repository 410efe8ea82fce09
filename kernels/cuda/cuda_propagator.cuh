// The CUDA implementation of the Propagator interface (solvers/contracts/propagator.h). Host code reaches it
// only through cuda_backend.h's make_propagator; the benchmark (bench.cu) and the variant
// selection use the CUDA-side extras declared here (stream, launcher switch, random fill).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/cpml.cuh"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_buffer.cuh"
#include "kernels/cuda/field_ops.cuh"
#include "kernels/cuda/operation_timer.cuh"
#include "kernels/cuda/variant_table.cuh"

namespace rtm::cuda {

class CudaPropagator final : public Propagator {
public:
  // `memory` is the effective option set (the row's preset already merged in).
  CudaPropagator(const PropagatorSetup& setup, const VariantRow& row, const MemoryOptions& memory,
                 int device);
  ~CudaPropagator() override;
  CudaPropagator(const CudaPropagator&) = delete;
  CudaPropagator& operator=(const CudaPropagator&) = delete;

  std::string name() const override;
  const GridLayout& layout() const override { return layout_; }

  void set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void zero_state() override;
  void step_planes(int k_begin, int k_end) override;
  void finish_step() override;
  PlaneSpan next_field_planes(int k_begin, int k_end) override;
  void* stream_handle() const override;
  void synchronize() override;

  int add_point_set(const std::vector<PointStencil>& points, int nt) override;
  void upload_series(int set, const std::vector<float>& series) override;
  std::vector<float> download_series(int set) const override;
  void inject(int set, int t, float scale) override;
  void record(int set, int t) override;
  // A reduction on the device (defined in kernels/cuda/health.cu).
  FieldHealth check_health() const override;

  // Reverse time migration (docs/rtm.md). Everything stays in device memory: the boundary store
  // (one allocation, refused up front when it does not fit), the image, the illumination and the
  // Born perturbation. Two-field operations take the other field from a CudaPropagator on the
  // same device and grid with the same storage; its stream and this one wait for each other
  // through events, so nothing synchronises the host.
  void reverse_time() override;
  void allocate_boundary_store(const Box& box, int steps) override;
  void save_boundary(int step) override;
  void restore_boundary(int step) override;
  void copy_current(const Box& box, std::vector<float>& dense) const override;
  void set_current(const Box& box, const std::vector<float>& dense) override;
  void allocate_image(const Box& box) override;
  void accumulate_image(const Propagator& source_field, float weight) override;
  std::vector<float> download_image() const override;
  std::vector<float> download_illumination() const override;
  void set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void inject_born_source(const Propagator& background) override;

  void enable_timing(bool on) override;
  PropagatorTiming timing() const override;

  // CUDA-side extras.
  cudaStream_t stream() const { return stream_; }
  const VariantRow& variant() const { return *row_; }
  // Runs another kernel on the same buffers from now on; it must use the same storage.
  void use_kernel(const VariantRow& row);
  // Both wavefields, every element (halo and padding included), random and non-zero.
  void fill_random_state(uint64_t seed);
  DeviceField current_field() const { return {cur_, row_->storage}; }
  bool wavefields_compressed() const { return field_a_.compressed(); }
  bool l2_window_active() const { return l2_window_active_; }
  // Why a requested memory option is not in effect (empty when all are).
  const std::string& memory_note() const { return memory_note_; }

private:
  struct DevicePointSet {
    DeviceBuffer stencils; // PointStencil[count]
    int count = 0;
    int nt = 0;
    DeviceBuffer series; // float[nt][count]
  };

  // Kinds of timed operations, one per PropagatorTiming field.
  enum class TimedOp { step, points, boundary, imaging, box_copy, born, count };

  size_t element_bytes() const;
  const DevicePointSet& point_set(int set, const char* what) const;
  void check_box(const Box& box, const char* what) const;
  // Throws std::runtime_error (both numbers and `hint`) when `bytes` exceed the free device memory.
  void require_free_memory(size_t bytes, const std::string& what, const std::string& hint) const;
  // The other field of a two-field operation: a CudaPropagator on this device, grid and storage.
  const CudaPropagator& same_device(const Propagator& other, const char* what) const;
  // Around an operation that reads `other`'s current field on this stream: begin makes this
  // stream wait for the work queued on other's; end makes other's stream wait for this
  // operation (its next step overwrites the field read).
  void begin_handoff(const CudaPropagator& other);
  void end_handoff(const CudaPropagator& other);
  // While timing_on_: events around each operation (begin before the first launch, end after
  // the last), through timer_ (kernels/cuda/operation_timer.cuh): read back in batches.
  void begin_timed() const;
  void end_timed(TimedOp op) const;
  void collect_timing() const; // waits for the pending intervals; timing_ gets the totals
  // The dense box staging buffer of copy_current / set_current, grown when needed.
  float* box_staging(const Box& box) const;
  void enable_l2_window();
  void disable_l2_window() noexcept;

  int device_ = 0;
  int sm_count_ = 1;
  const VariantRow* row_ = nullptr;
  MemoryOptions memory_;
  GridLayout layout_;
  LaplacianWeights weights_{};
  cudaStream_t stream_ = nullptr;
  DeviceBuffer field_a_, field_b_, v2dt2_;
  DeviceBuffer damp_x_, damp_y_, damp_z_; // empty when undamped
  DeviceCpml cpml_;                       // inactive without the C-PML (kernels/cuda/cpml.cuh)
  void* cur_ = nullptr;  // p[n]: field_a_ or field_b_
  void* prev_ = nullptr; // p[n-1]
  std::vector<DevicePointSet> sets_;
  bool l2_window_active_ = false;
  size_t saved_persisting_limit_ = 0;
  std::string memory_note_;

  // Boundary saving: the ring's cell indices (int64) and [step][ring cell] in the field's storage.
  Box ring_box_;
  int64_t ring_cells_ = 0;
  int ring_steps_ = 0;
  DeviceBuffer ring_index_, ring_store_;
  mutable DeviceBuffer box_staging_; // float[box cells]: copy_current is const
  // Imaging (float [z][y][x] over image_box_) and the Born perturbation (float over born_box_).
  Box image_box_, born_box_;
  DeviceBuffer image_, illumination_, born_m_;
  // Cross-stream ordering of two-field operations; created at the first one.
  cudaEvent_t other_ready_ = nullptr, this_done_ = nullptr;
  // Profiling (enable_timing).
  bool timing_on_ = false;
  mutable PropagatorTiming timing_;
  mutable OperationTimer timer_;
};

} // namespace rtm::cuda
