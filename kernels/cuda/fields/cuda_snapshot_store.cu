// The snapshot store of a CUDA wavefield (solvers/contracts/wavefield.h, SnapshotStore): each slot
// the current field inside the box in the dense [z][y][x] order, coded in blocks of kRingBlock
// cells of a row as solvers/contracts/ring_codec.h's encode_rows codes them (the CPU's HostSnapshotStore
// holds the same bits), or float32 (RingPrecision::full). The slots live in device memory
// (SnapshotPlace::device) or in pinned host memory (host), reached through two device staging
// slots and a copy stream of the store's own, so that a save's copy out and the next restore's
// copy in run beside the wave steps.
#include "kernels/cuda/fields/cuda_snapshot_store.cuh"

#include <string>

#include "kernels/cuda/fields/block_codec.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/cuda_stream.cuh"
#include "kernels/cuda/util/event_timer.cuh"

namespace rtm::cuda {
namespace {

// A warp per coded block (encode_rows: a row's cells in blocks of kRingBlock from its start; block
// b is piece b % per_row of box row b / per_row), kCodecWarps warps per thread block. A lane holds
// 8 of the block's cells, lane-interleaved (cell s * 32 + lane), so that every load and store of
// the warp is one coalesced piece of the row, 8 of them in flight per lane; the exponent comes from
// the warp's largest |value| by shuffles alone. A thread block per coded block (a thread per cell,
// a block-wide reduction through shared memory and two barriers) moved the snapshots' 6 B per cell
// at about a quarter of the bandwidth (docs/tuning-log.md section 18). Same operations as
// block_codec.cuh's, so the CPU's bits.
constexpr int kCodecWarps = 8;
constexpr int kCellsPerLane = kRingBlock / 32;

struct CodedBlock {
  int64_t row = 0;     // box row ([z][y], y fastest)
  int first = 0;       // its first cell along the row
  int64_t padded = 0;  // padded index of the row's first box cell
};

__device__ __forceinline__ CodedBlock coded_block(const GridLayout& g, const Box& b, int per_row,
                                                  int64_t block) {
  const int ny = b.y1 - b.y0;
  CodedBlock c;
  c.row = block / per_row;
  c.first = int(block - c.row * per_row) * kRingBlock;
  c.padded = g.index(b.x0, b.y0 + int(c.row % ny), b.z0 + int(c.row / ny));
  return c;
}

template <bool kFixed>
__global__ void __launch_bounds__(32 * kCodecWarps)
    save_box_coded_kernel(const GridLayout g, const Box b, int per_row, int64_t blocks,
                          const float* __restrict__ field, uint16_t* __restrict__ codes,
                          int32_t* __restrict__ exponents) {
  const int64_t block = int64_t(blockIdx.x) * kCodecWarps + int(threadIdx.x) / 32;
  if (block >= blocks) return; // the whole warp
  const int lane = int(threadIdx.x) % 32;
  const int nx = b.x1 - b.x0;
  const CodedBlock c = coded_block(g, b, per_row, block);
  float v[kCellsPerLane];
  float largest = 0.0f;
#pragma unroll
  for (int s = 0; s < kCellsPerLane; ++s) {
    const int i = c.first + s * 32 + lane;
    v[s] = i < nx ? field[c.padded + i] : 0.0f; // 0 past the row's end, as block_exponent_of
    largest = fmaxf(largest, fabsf(v[s]));
  }
  for (int offset = 16; offset > 0; offset /= 2)
    largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, offset));
  int e = 0; // as block_exponent_of (ring_block_exponent)
  if (largest > 0.0f && isfinite(largest)) frexpf(largest, &e);
  if (lane == 0) exponents[block] = e;
#pragma unroll
  for (int s = 0; s < kCellsPerLane; ++s) {
    const int i = c.first + s * 32 + lane;
    if (i < nx) codes[c.row * nx + i] = encode_block_value<kFixed>(v[s], e);
  }
}

template <bool kFixed>
__global__ void __launch_bounds__(32 * kCodecWarps)
    restore_box_coded_kernel(const GridLayout g, const Box b, int per_row, int64_t blocks,
                             const uint16_t* __restrict__ codes,
                             const int32_t* __restrict__ exponents, float* __restrict__ field) {
  const int64_t block = int64_t(blockIdx.x) * kCodecWarps + int(threadIdx.x) / 32;
  if (block >= blocks) return;
  const int lane = int(threadIdx.x) % 32;
  const int nx = b.x1 - b.x0;
  const CodedBlock c = coded_block(g, b, per_row, block);
  const int32_t e = exponents[block];
  uint16_t code[kCellsPerLane];
#pragma unroll
  for (int s = 0; s < kCellsPerLane; ++s) {
    const int i = c.first + s * 32 + lane;
    code[s] = i < nx ? codes[c.row * nx + i] : uint16_t(0);
  }
#pragma unroll
  for (int s = 0; s < kCellsPerLane; ++s) {
    const int i = c.first + s * 32 + lane;
    if (i < nx) field[c.padded + i] = decode_block_value<kFixed>(code[s], e);
  }
}

inline unsigned codec_grid(int64_t blocks) {
  return unsigned((blocks + kCodecWarps - 1) / kCodecWarps);
}

// The precision a field of `storage` keeps its snapshots in: 16-bit codes for float32 fields,
// float32 values for half fields (their own 16 bits, exactly).
RingPrecision effective_precision(Storage storage, RingPrecision asked) {
  return storage == Storage::fp32 ? asked : RingPrecision::full;
}

} // namespace

class CudaSnapshotStore final : public SnapshotStore {
public:
  // Refused up front (std::runtime_error with both numbers) when device slots do not fit.
  CudaSnapshotStore(const SnapshotFieldAccess& field, const Box& box, int slots,
                    RingPrecision precision, SnapshotPlace place)
      : SnapshotStore(*field.owner, box, slots, effective_precision(field.storage, precision), place),
        field_(field), cells_(box.cells()),
        per_row_(int((box.nx() + kRingBlock - 1) / kRingBlock)),
        slot_bytes_(size_t(coded_rows_bytes(box.nx(), cells_ / box.nx(), this->precision()))) {
    CUDA_CHECK(cudaSetDevice(field_.device));
    const std::string what = std::to_string(slots) + " snapshots of " + std::to_string(cells_) +
                             " cells (" + std::to_string(slot_bytes_ >> 20) + " MiB each)";
    if (place == SnapshotPlace::device) {
      field_.require_free_memory(slot_bytes_ * size_t(slots), "the source field's " + what,
                                 "keep them in host memory (--snapshot-memory host) or use "
                                 "boundary reconstruction (--reconstruction boundary)");
      store_ = DeviceBuffer(slot_bytes_ * size_t(slots), AllocationKind::plain, field_.device,
                            "the source field's snapshots");
    } else {
      field_.require_free_memory(2 * slot_bytes_, "the staging of the source field's " + what, "");
      for (DeviceBuffer& staging : staging_)
        staging = DeviceBuffer(slot_bytes_, AllocationKind::plain, field_.device,
                               "the snapshots' staging");
      const cudaError_t status =
          cudaHostAlloc(&host_, slot_bytes_ * size_t(slots), cudaHostAllocDefault);
      if (status != cudaSuccess) {
        (void)cudaGetLastError();
        host_ = nullptr;
        throw std::runtime_error(field_.owner->name() +
                                 ": pinned host memory for the source field's " + what + " could not be allocated (" + cudaGetErrorString(status) +
                                 "); use boundary reconstruction (--reconstruction boundary)");
      }
    }
  }
  ~CudaSnapshotStore() override {
    // Queued saves, restores and copies may still use the slots.
    cudaSetDevice(field_.device);
    cudaStreamSynchronize(field_.stream);
    cudaStreamSynchronize(copy_);
    if (host_) cudaFreeHost(host_);
  }

private:
  char* device_slot(int slot) const { return store_.as<char>() + size_t(slot) * slot_bytes_; }
  char* host_slot(int slot) const { return static_cast<char*>(host_) + size_t(slot) * slot_bytes_; }

  // The current field inside the box, coded into `out` (device memory), on the field's stream.
  void encode(void* out) const {
    const GridLayout& g = field_.owner->layout();
    if (precision() == RingPrecision::full) {
      pack_box(g, box(), field_.current(), field_.storage, static_cast<float*>(out), field_.stream);
      return;
    }
    const int64_t blocks = coded_row_blocks(box().nx(), cells_ / box().nx());
    auto* codes = static_cast<uint16_t*>(out);
    auto* exponents = reinterpret_cast<int32_t*>(static_cast<char*>(out) + ring_half_bytes(cells_));
    const auto kernel = precision() == RingPrecision::fixed16 ? save_box_coded_kernel<true>
                                                              : save_box_coded_kernel<false>;
    kernel<<<codec_grid(blocks), 32 * kCodecWarps, 0, field_.stream>>>(
        g, box(), per_row_, blocks, static_cast<const float*>(field_.current()), codes, exponents);
    CUDA_CHECK_LAUNCH("save_box_coded_kernel");
  }
  // `in` (device memory) decoded into the current field inside the box, on the field's stream.
  void decode(const void* in) {
    const GridLayout& g = field_.owner->layout();
    if (precision() == RingPrecision::full) {
      unpack_box(g, box(), static_cast<const float*>(in), field_.current(), field_.storage,
                 field_.stream);
      return;
    }
    const auto* codes = static_cast<const uint16_t*>(in);
    const auto* exponents =
        reinterpret_cast<const int32_t*>(static_cast<const char*>(in) + ring_half_bytes(cells_));
    const auto kernel = precision() == RingPrecision::fixed16 ? restore_box_coded_kernel<true>
                                                              : restore_box_coded_kernel<false>;
    const int64_t blocks = coded_row_blocks(box().nx(), cells_ / box().nx());
    kernel<<<codec_grid(blocks), 32 * kCodecWarps, 0, field_.stream>>>(
        g, box(), per_row_, blocks, codes, exponents, static_cast<float*>(field_.current()));
    CUDA_CHECK_LAUNCH("restore_box_coded_kernel");
  }

  // Host slots: staging buffer b's users are the field's stream (encode, decode; then `used_`)
  // and the copy stream (the copies; then `copied_`); each waits for the other's last event.
  void copy_in(int slot, int b) {
    CUDA_CHECK(cudaStreamWaitEvent(copy_, used_[b], 0));
    CUDA_CHECK(cudaMemcpyAsync(staging_[b].data(), host_slot(slot), slot_bytes_,
                               cudaMemcpyHostToDevice, copy_));
    CUDA_CHECK(cudaEventRecord(copied_[b], copy_));
    holds_[b] = slot;
  }

  void do_save(int slot) override {
    CUDA_CHECK(cudaSetDevice(field_.device));
    field_.begin_timed();
    if (place() == SnapshotPlace::device) {
      encode(device_slot(slot));
    } else {
      const int b = next_;
      next_ = 1 - next_;
      CUDA_CHECK(cudaStreamWaitEvent(field_.stream, copied_[b], 0));
      encode(staging_[b].data());
      CUDA_CHECK(cudaEventRecord(used_[b], field_.stream));
      CUDA_CHECK(cudaStreamWaitEvent(copy_, used_[b], 0));
      CUDA_CHECK(cudaMemcpyAsync(host_slot(slot), staging_[b].data(), slot_bytes_,
                                 cudaMemcpyDeviceToHost, copy_));
      CUDA_CHECK(cudaEventRecord(copied_[b], copy_));
      holds_[b] = -1;
    }
    field_.end_timed();
  }

  void do_restore(int slot) override {
    CUDA_CHECK(cudaSetDevice(field_.device));
    field_.begin_timed();
    if (place() == SnapshotPlace::device) {
      decode(device_slot(slot));
    } else {
      int b = holds_[0] == slot ? 0 : holds_[1] == slot ? 1 : -1;
      if (b < 0) {
        b = next_;
        copy_in(slot, b);
      }
      CUDA_CHECK(cudaStreamWaitEvent(field_.stream, copied_[b], 0));
      decode(staging_[b].data());
      CUDA_CHECK(cudaEventRecord(used_[b], field_.stream));
      holds_[b] = -1;
      next_ = 1 - b;
      // The backward sweep's next slot, fetched while the steps in between run.
      if (slot > 0) copy_in(slot - 1, next_);
    }
    field_.end_timed();
  }

  SnapshotFieldAccess field_;
  int64_t cells_ = 0;
  int per_row_ = 1; // coded blocks per row of the box
  size_t slot_bytes_ = 0;
  DeviceBuffer store_;       // device slots
  void* host_ = nullptr;     // pinned host slots
  DeviceBuffer staging_[2];  // host slots' way to and from the field
  Stream copy_; // the host slots' copies
  Event used_[2], copied_[2];
  int holds_[2] = {-1, -1}; // the slot a staging buffer holds (copied in), -1: none
  int next_ = 0;            // the staging buffer the next save (or an unfetched restore) takes
};

std::unique_ptr<SnapshotStore> make_cuda_snapshot_store(const SnapshotFieldAccess& field,
                                                        const Box& box, int slots,
                                                        RingPrecision precision,
                                                        SnapshotPlace place) {
  return std::make_unique<CudaSnapshotStore>(field, box, slots, precision, place);
}

std::unique_ptr<SnapshotStore> CudaWavefield::do_make_snapshot_store(const Box& box, int slots,
                                                                    RingPrecision precision,
                                                                    SnapshotPlace place) {
  if (row_->storage == Storage::bfp16) refuse_for_bfp16("snapshot stores (migration)");
  SnapshotFieldAccess field;
  field.owner = this;
  field.device = device_;
  field.stream = stream_;
  field.storage = row_->storage;
  field.current = [this] { return cur_; };
  field.require_free_memory = [this](size_t bytes, const std::string& what, const std::string& hint) {
    require_free_memory(bytes, what, hint);
  };
  field.begin_timed = [this] { begin_timed(); };
  field.end_timed = [this] { end_timed(TimedOp::box_copy); };
  return make_cuda_snapshot_store(field, box, slots, precision, place);
}

} // namespace rtm::cuda
