// The CUDA wavefield (solvers/contracts/wavefield.h). Host code reaches it only through cuda_backend.h's
// make_wavefield and make_shot_fields; the benchmark (bench.cu), the variant selection and the halo
// transports use the CUDA-side extras declared here (stream, launcher switch, random fill).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/fields/cpml.cuh"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/fields/cuda_timing.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/fields/field_ops.cuh"
#include "kernels/cuda/fields/memory_options.cuh"
#include "kernels/cuda/steps/variant_table.cuh"

namespace rtm::cuda {

class CudaPointSet;
class CudaBfp16PointSet;
class CudaBoundaryStore;
class CudaShotFields;

// One wavefield on one GPU (solvers/contracts/wavefield.h): the wave step of a variant row, its point sets
// (kernels/cuda/fields/cuda_point_set.cu), boundary store (kernels/cuda/fields/cuda_boundary_store.cu) and
// snapshot store (kernels/cuda/fields/cuda_snapshot_store.cu); profiling in
// kernels/cuda/fields/cuda_timing.cu, the health reduction in kernels/cuda/fields/health.cu. Every operation is queued on
// the field's own non-blocking stream.
class CudaWavefield final : public Wavefield {
public:
  // `memory` is the effective option set (the row's preset already merged in). `same_model`: a
  // field made from the same setup with the same row on the same device (a shot's source field
  // for its receiver field), whose model term is copied on the device rather than uploaded again
  // (at 512^3, 0.54 GB from pageable host memory and its staging buffer).
  CudaWavefield(const PropagatorSetup& setup, const VariantRow& row, const MemoryOptions& memory,
                int device, const CudaWavefield* same_model = nullptr);
  ~CudaWavefield() override;

  std::string name() const override;
  void zero_state() override;
  void finish_step() override;
  void synchronize() override;
  void reverse_time() override;
  // A reduction on the device (defined in kernels/cuda/fields/health.cu).
  FieldHealth check_health() const override;
  void enable_timing(bool on) override;
  PropagatorTiming timing() const override;

  // CUDA-side extras.
  cudaStream_t stream() const { return stream_; }
  // The stream step_planes_beside queues on (highest priority), and a split grid's halo exchange.
  cudaStream_t beside_stream() const { return beside_; }
  void fork_beside() override;
  void join_beside() override;
  int device() const { return device_; }
  const VariantRow& variant() const { return *row_; }
  // The memory options in effect (a requested one the device lacks is off).
  const MemoryOptions& memory_options() const { return memory_; }
  // Runs another kernel on the same buffers from now on; it must use the same storage.
  void use_kernel(const VariantRow& row);
  // Both wavefields, every element (halo and padding included), random and non-zero.
  void fill_random_state(uint64_t seed);
  DeviceField current_field() const { return {cur_, row_->storage}; }
  bool wavefields_compressed() const { return field_a_.compressed(); }
  bool l2_window_active() const { return l2_window_.active(); }
  // Throws rtm::InputError naming the variant and `what` for an operation bfp16 does not offer.
  [[noreturn]] void refuse_for_bfp16(const std::string& what) const;
  // Why a requested memory option is not in effect (empty when all are).
  const std::string& memory_note() const { return memory_note_; }

private:
  friend class CudaPointSet;
  friend class CudaBfp16PointSet;
  friend class CudaBoundaryStore;
  friend class CudaShotFields;

  void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void do_step_planes(int k_begin, int k_end) override { step_planes_on(k_begin, k_end, stream_); }
  void do_step_planes_beside(int k_begin, int k_end) override;
  void step_planes_on(int k_begin, int k_end, cudaStream_t stream);
  PlaneSpan do_next_field_planes(int k_begin, int k_end) override;
  void do_copy_current(const Box& box, std::vector<float>& dense) const override;
  void do_set_current(const Box& box, const std::vector<float>& dense) override;
  std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) override;
  std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                         RingPrecision precision) override;
  std::unique_ptr<SnapshotStore> do_make_snapshot_store(const Box& box, int slots,
                                                         RingPrecision precision,
                                                         SnapshotPlace place) override;

  // Kinds of timed operations, one per PropagatorTiming field.
  using TimedOp = WavefieldTimer::Op;

  size_t element_bytes() const;
  // Bytes of one wavefield buffer: size x element_bytes(), or bfp16's mantissas and exponents.
  size_t field_bytes() const;
  // The type of v2dt2_, which every operation but the step kernel reads: the fields' storage, but
  // float32 for bfp16 (a block format serves wavefields, not a model read cell by cell).
  Storage model_storage() const { return row_->storage == Storage::bfp16 ? Storage::fp32 : row_->storage; }
  // Throws std::runtime_error (both numbers and `hint`) when `bytes` exceed the free device memory.
  void require_free_memory(size_t bytes, const std::string& what, const std::string& hint) const;
  // While timing is on: events around each operation (begin before the first launch, end after
  // the last), through timer_ (kernels/cuda/fields/cuda_timing.cuh): read back in batches.
  void begin_timed() const;
  void end_timed(TimedOp op) const;
  // The dense box staging buffer of copy_current / set_current, grown when needed.
  float* box_staging(const Box& box) const;

  int device_ = 0;
  int sm_count_ = 1;
  const VariantRow* row_ = nullptr;
  MemoryOptions memory_;
  LaplacianWeights weights_{};
  // The top halo is the free surface's image (solvers/contracts/free_surface.h), written before
  // each step that reads it (mirror_free_surface, kernels/cuda/fields/field_ops.cuh).
  bool free_surface_ = false;
  cudaStream_t stream_ = nullptr;
  cudaStream_t beside_ = nullptr; // step_planes_beside's, with fork_ and join_ to order the two
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  DeviceBuffer field_a_, field_b_, v2dt2_;
  // v2dt2 in the row's kernel_model type, for the step kernel only, where it differs from the
  // fields' storage (half_v2dt2); empty otherwise. kernel_v2dt2() is the one the kernel reads.
  DeviceBuffer kernel_v2dt2_;
  const DeviceBuffer& kernel_v2dt2() const { return kernel_v2dt2_.data() ? kernel_v2dt2_ : v2dt2_; }
  size_t kernel_model_bytes() const;
  DeviceBuffer damp_x_, damp_y_, damp_z_; // empty when undamped
  DeviceCpml cpml_;                       // inactive without the C-PML (kernels/cuda/fields/cpml.cuh)
  void* cur_ = nullptr;  // p[n]: field_a_ or field_b_
  void* prev_ = nullptr; // p[n-1]
  L2PersistingWindow l2_window_; // over v2dt2_ when memory_.l2_persist (cleared before stream_ goes)
  std::string memory_note_;

  mutable DeviceBuffer box_staging_; // float[box cells]: copy_current is const
  mutable WavefieldTimer timer_; // profiling (enable_timing)
};

// The point sets of a bfp16 wavefield (kernels/cuda/fields/bfp16_point_set.cu).
std::unique_ptr<PointSet> make_bfp16_point_set(CudaWavefield& field,
                                               const std::vector<PointStencil>& points, int nt);

// What a bfp16 wavefield offers, for the messages of the operations it refuses.
extern const char* const kBfp16Supports;

// A CudaWavefield running `variant` ("auto": the fastest float32 kernel on this grid, timed here;
// kernels/cuda/cuda_backend.h says more).
std::unique_ptr<CudaWavefield> make_cuda_wavefield(const PropagatorSetup& setup,
                                                   const std::string& variant,
                                                   const MemoryOptions& options, int device,
                                                   std::ostream* log);

} // namespace rtm::cuda
