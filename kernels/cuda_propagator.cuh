// The CUDA implementation of the Propagator interface (kernels/propagator.h). Host code reaches it
// only through cuda_backend.h's make_propagator; the benchmark (bench.cu) and the variant
// selection use the CUDA-side extras declared here (stream, launcher switch, random fill).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/device_buffer.cuh"
#include "kernels/field_ops.cuh"
#include "kernels/variant_table.cuh"

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
  void step() override;
  void synchronize() override;

  int add_point_set(const std::vector<PointStencil>& points, int nt) override;
  void upload_series(int set, const std::vector<float>& series) override;
  std::vector<float> download_series(int set) const override;
  void inject(int set, int t, float scale) override;
  void record(int set, int t) override;
  // A reduction on the device (defined in kernels/health.cu).
  FieldHealth check_health() const override;

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

  size_t element_bytes() const;
  const DevicePointSet& point_set(int set, const char* what) const;
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
  void* cur_ = nullptr;  // p[n]: field_a_ or field_b_
  void* prev_ = nullptr; // p[n-1]
  std::vector<DevicePointSet> sets_;
  bool l2_window_active_ = false;
  size_t saved_persisting_limit_ = 0;
  std::string memory_note_;
};

} // namespace rtm::cuda
