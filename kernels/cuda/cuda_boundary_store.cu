// The boundary store of a CUDA wavefield (solvers/contracts/wavefield.h, BoundaryStore): the ring's cell
// indices and one ring per step in device memory, in the field's storage; freed with the store.
#include <string>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_propagator.cuh"
#include "kernels/cuda/rtm_ops.cuh"

namespace rtm::cuda {

class CudaBoundaryStore final : public BoundaryStore {
public:
  // Refused up front (std::runtime_error with both numbers) when it does not fit.
  CudaBoundaryStore(CudaWavefield& field, const Box& box, int steps)
      : BoundaryStore(field, box, steps), field_(field) {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const std::vector<int64_t> index = boundary_ring_indices(field_.layout(), box);
    const size_t index_bytes = index.size() * sizeof(int64_t);
    const size_t element = field_.element_bytes();
    const size_t store_bytes = index.size() * size_t(steps) * element;
    field_.require_free_memory(
        store_bytes + index_bytes,
        "the boundary store (" + std::to_string(index.size()) + " ring cells x " +
            std::to_string(steps) + " steps x " + std::to_string(element) + " B, plus " +
            std::to_string(index_bytes >> 20) + " MiB for the ring's cell list)",
        "use snapshot reconstruction (rtm migrate --reconstruction snapshots keeps the source "
        "field in host memory), fewer time steps (a shorter record time), or a GPU with more memory");
    index_ = DeviceBuffer(index_bytes, AllocationKind::plain, field_.device_);
    store_ = DeviceBuffer(store_bytes, AllocationKind::plain, field_.device_);
    CUDA_CHECK(cudaMemcpyAsync(index_.data(), index.data(), index_bytes, cudaMemcpyHostToDevice,
                               field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_)); // `index` goes out of scope
    cells_ = int64_t(index.size());
  }
  ~CudaBoundaryStore() override {
    // Queued saves and restores may still use the store.
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
  }

private:
  void* slot(int step) const {
    return static_cast<char*>(store_.data()) + size_t(step) * size_t(cells_) * field_.element_bytes();
  }
  void do_save(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    gather_cells(field_.cur_, index_.as<int64_t>(), cells_, slot(step), field_.row_->storage,
                 field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::boundary);
  }
  void do_restore(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    scatter_cells(slot(step), index_.as<int64_t>(), cells_, field_.cur_, field_.row_->storage,
                  field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::boundary);
  }

  CudaWavefield& field_;
  int64_t cells_ = 0;
  DeviceBuffer index_, store_; // int64 ring cell indices; [step][ring cell] in the field's storage
};

std::unique_ptr<BoundaryStore> CudaWavefield::do_make_boundary_store(const Box& box, int steps) {
  return std::make_unique<CudaBoundaryStore>(*this, box, steps);
}

} // namespace rtm::cuda
