// The boundary store of a CUDA wavefield (solvers/contracts/wavefield.h, BoundaryStore): the ring's cell
// indices and one ring per step in device memory, in the field's storage or (RingPrecision::half16,
// float fields) in 16-bit floats with a scale per block (solvers/contracts/ring_codec.h); freed with
// the store.
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/block_codec.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"

namespace rtm::cuda {
namespace {

// One thread block per ring block (block_codec.cuh): the block's exponent, then each value coded.
template <bool kFixed>
__global__ void __launch_bounds__(kRingBlock)
    save_half_ring_kernel(const float* __restrict__ field, const int64_t* __restrict__ index,
                          int64_t count, uint16_t* __restrict__ ring, int32_t* __restrict__ exponents) {
  const int64_t r = int64_t(blockIdx.x) * kRingBlock + threadIdx.x;
  const float v = r < count ? field[index[r]] : 0.0f;
  const int32_t e = block_exponent_of(v, &exponents[blockIdx.x]);
  if (r >= count) return;
  ring[r] = encode_block_value<kFixed>(v, e);
}

template <bool kFixed>
__global__ void restore_half_ring_kernel(const uint16_t* __restrict__ ring,
                                         const int32_t* __restrict__ exponents,
                                         const int64_t* __restrict__ index, int64_t count,
                                         float* __restrict__ field) {
  const int64_t r = int64_t(blockIdx.x) * kRingBlock + threadIdx.x;
  if (r >= count) return;
  field[index[r]] = decode_block_value<kFixed>(ring[r], exponents[r / kRingBlock]);
}

} // namespace

class CudaBoundaryStore final : public BoundaryStore {
public:
  // Refused up front (std::runtime_error with both numbers) when it does not fit.
  CudaBoundaryStore(CudaWavefield& field, const Box& box, int steps, RingPrecision precision)
      : BoundaryStore(field, box, steps), field_(field) {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const std::vector<int64_t> index = boundary_ring_indices(field_.layout(), box);
    const size_t index_bytes = index.size() * sizeof(int64_t);
    const size_t element = field_.element_bytes();
    // A field stored in half keeps its own half ring (already 2 bytes, saved bit for bit).
    half_ = precision != RingPrecision::full && field_.row_->storage == Storage::fp32;
    fixed_ = precision == RingPrecision::fixed16;
    cells_ = int64_t(index.size());
    blocks_ = (cells_ + kRingBlock - 1) / kRingBlock;
    step_bytes_ = size_t(ring_step_bytes(cells_, half_ ? RingPrecision::half16 : RingPrecision::full,
                                         int64_t(element)));
    const size_t store_bytes = step_bytes_ * size_t(steps);
    field_.require_free_memory(
        store_bytes + index_bytes,
        "the boundary store (" + std::to_string(index.size()) + " ring cells x " +
            std::to_string(steps) + " steps x " +
            (half_ ? std::string("2 B + a 4 B exponent per 256 cells") : std::to_string(element) + " B") +
            ", plus " + std::to_string(index_bytes >> 20) + " MiB for the ring's cell list)",
        "use snapshot reconstruction (rtm migrate --reconstruction snapshots keeps the source "
        "field in host memory), fewer time steps (a shorter record time), or a GPU with more memory");
    index_ = DeviceBuffer(index_bytes, AllocationKind::plain, field_.device_);
    store_ = DeviceBuffer(store_bytes, AllocationKind::plain, field_.device_);
    CUDA_CHECK(cudaMemcpyAsync(index_.data(), index.data(), index_bytes, cudaMemcpyHostToDevice,
                               field_.stream_));
    CUDA_CHECK(cudaStreamSynchronize(field_.stream_)); // `index` goes out of scope
  }
  ~CudaBoundaryStore() override {
    // Queued saves and restores may still use the store.
    cudaSetDevice(field_.device_);
    cudaStreamSynchronize(field_.stream_);
  }

private:
  // A step's slot: its ring, then (16-bit rings) its blocks' exponents.
  void* slot(int step) const { return static_cast<char*>(store_.data()) + size_t(step) * step_bytes_; }
  int32_t* exponents(int step) const {
    return reinterpret_cast<int32_t*>(static_cast<char*>(slot(step)) + size_t(ring_half_bytes(cells_)));
  }
  void do_save(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    if (half_) {
      if (cells_ > 0) {
        const auto kernel = fixed_ ? save_half_ring_kernel<true> : save_half_ring_kernel<false>;
        kernel<<<unsigned(blocks_), kRingBlock, 0, field_.stream_>>>(
            static_cast<const float*>(field_.cur_), index_.as<int64_t>(), cells_,
            static_cast<uint16_t*>(slot(step)), exponents(step));
        CUDA_CHECK_LAUNCH("save_half_ring_kernel");
      }
      field_.end_timed(CudaWavefield::TimedOp::boundary);
      return;
    }
    gather_cells(field_.cur_, index_.as<int64_t>(), cells_, slot(step), field_.row_->storage,
                 field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::boundary);
  }
  void do_restore(int step) override {
    CUDA_CHECK(cudaSetDevice(field_.device_));
    field_.begin_timed();
    if (half_) {
      if (cells_ > 0) {
        const auto kernel = fixed_ ? restore_half_ring_kernel<true> : restore_half_ring_kernel<false>;
        kernel<<<unsigned(blocks_), kRingBlock, 0, field_.stream_>>>(
            static_cast<const uint16_t*>(slot(step)), exponents(step), index_.as<int64_t>(),
            cells_, static_cast<float*>(field_.cur_));
        CUDA_CHECK_LAUNCH("restore_half_ring_kernel");
      }
      field_.end_timed(CudaWavefield::TimedOp::boundary);
      return;
    }
    scatter_cells(slot(step), index_.as<int64_t>(), cells_, field_.cur_, field_.row_->storage,
                  field_.stream_);
    field_.end_timed(CudaWavefield::TimedOp::boundary);
  }

  CudaWavefield& field_;
  bool half_ = false;  // a 16-bit ring (float fields)
  bool fixed_ = false; // of int16 values; else of halves
  int64_t cells_ = 0, blocks_ = 0;
  size_t step_bytes_ = 0;
  // int64 ring cell indices; per step: [ring cell] in the field's storage, or [ring cell] in half
  // and [block] int32 exponents.
  DeviceBuffer index_, store_;
};

std::unique_ptr<BoundaryStore> CudaWavefield::do_make_boundary_store(const Box& box, int steps,
                                                                  RingPrecision precision) {
  if (row_->storage == Storage::bfp16) refuse_for_bfp16("boundary stores (migration)");
  return std::make_unique<CudaBoundaryStore>(*this, box, steps, precision);
}

} // namespace rtm::cuda
