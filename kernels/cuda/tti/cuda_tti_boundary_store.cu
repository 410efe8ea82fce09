// The boundary store of the CUDA TTI wavefield (solvers/contracts/tti_ring.h): per step, the ring of
// p and then the ring of q, kTtiRing = 2 kHalo cells thick (the TTI step's two passes reach that
// far), in float32 as on the CPU (kernels/cpu/tti_propagator.cpp, CpuTtiBoundaryStore). The acoustic
// store's gather and scatter (rtm_ops.cuh) move it, over one cell list holding p's ring cells and
// then q's.
#include <string>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"
#include "solvers/contracts/tti_ring.h"

namespace rtm::cuda {

class CudaTtiBoundaryStore final : public BoundaryStore {
public:
  // Refused up front (std::runtime_error with both numbers) when it does not fit.
  CudaTtiBoundaryStore(CudaTtiWavefield& field, const Box& box, int steps)
      : BoundaryStore(field, box, steps), field_(field) {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    std::vector<int64_t> index = tti_ring_indices(field_.layout(), box);
    const size_t ring = index.size();
    const int64_t qo = tti_q_offset(field_.layout());
    index.reserve(2 * ring);
    for (size_t c = 0; c < ring; ++c) index.push_back(index[c] + qo);
    cells_ = int64_t(index.size());
    const size_t index_bytes = index.size() * sizeof(int64_t);
    const size_t store_bytes = size_t(cells_) * sizeof(float) * size_t(steps);
    field_.require_free_memory(
        store_bytes + index_bytes,
        "the TTI boundary store (" + std::to_string(ring) + " ring cells of p and of q x " +
            std::to_string(steps) + " steps x 4 B, plus " + std::to_string(index_bytes >> 20) +
            " MiB for the ring's cell list)",
        "record a shorter time, use a smaller model, or a GPU with more memory");
    index_ = DeviceBuffer(index_bytes, AllocationKind::plain, field_.device_);
    store_ = DeviceBuffer(store_bytes, AllocationKind::plain, field_.device_);
    CUDA_CHECK(cudaMemcpyAsync(index_.data(), index.data(), index_bytes, cudaMemcpyHostToDevice,
                               field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_)); // `index` goes out of scope
  }
  ~CudaTtiBoundaryStore() override {
    // Queued saves and restores may still use the store.
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
  }

private:
  float* slot(int step) const { return store_.as<float>() + size_t(step) * size_t(cells_); }
  void do_save(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    gather_cells(field_.cur(), index_.as<int64_t>(), cells_, slot(step), Storage::fp32, field_.stream_);
    field_.end_timed(CudaTtiWavefield::TimedOp::boundary);
  }
  void do_restore(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    scatter_cells(slot(step), index_.as<int64_t>(), cells_, field_.cur(), Storage::fp32, field_.stream_);
    field_.end_timed(CudaTtiWavefield::TimedOp::boundary);
  }

  CudaTtiWavefield& field_;
  int64_t cells_ = 0;      // ring cells of p and of q
  DeviceBuffer index_;     // int64 cell indices: p's ring, then q's
  DeviceBuffer store_;     // float [step][p ring, q ring]
};

std::unique_ptr<BoundaryStore> CudaTtiWavefield::do_make_boundary_store(const Box& box, int steps,
                                                                     RingPrecision precision) {
  if (precision != RingPrecision::full)
    throw std::invalid_argument(name() + ": the TTI boundary store keeps float32 rings only "
                                         "(--ring-precision float32)");
  return std::make_unique<CudaTtiBoundaryStore>(*this, box, steps);
}

} // namespace rtm::cuda
