// Point sets of a bfp16 wavefield (solvers/contracts/wavefield.h, PointSet; the float32 and half
// ones are in kernels/cuda/fields/cuda_point_set.cu, whose arithmetic this file keeps).
//
// Recording decodes each cell where it reads it. Injection cannot add to a cell alone: a cell's
// value is its mantissa times its block's exponent, and the sum may need another exponent for
// the whole block. So each injection
//   1. decodes every block the set's cells touch (known when the set is made) into a float
//      scratch array, a block's 16 values together (blocks sorted by index: a stencil row, at
//      most 8 cells, spans at most 2 blocks, which then lie side by side in the scratch);
//   2. adds each point's contribution there, with inject_kernel's arithmetic (atomics: points
//      may share cells);
//   3. encodes each touched block again from its interior cells (bfp16::encode_block's order).
// Three small launches per injection, about the cost of one float32 injection's atomics.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cuda/steps/bfp16_io.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/fields/point_ops.cuh"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float decoded(const int16_t* q, const int8_t* e, int64_t n) {
  return bfp16::decode(q[n], e[n >> 4]);
}

// scratch[16 s + i] = element 16 blocks[s] + i.
__global__ void decode_blocks_kernel(const int16_t* q, const int8_t* e, const int64_t* blocks,
                                     int count, float* scratch) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= int64_t(count) * bfp16::kBlock) return;
  const int64_t s = t / bfp16::kBlock, i = t % bfp16::kBlock;
  scratch[t] = decoded(q, e, blocks[s] * bfp16::kBlock + i);
}

// inject_kernel of cuda_point_set.cu with the cell's float in the scratch: row_at[point][c][b] is
// the scratch position of the row's first cell.
__global__ void __launch_bounds__(kPointThreads)
    inject_scratch_kernel(float* scratch, const float* v2dt2, GridLayout g,
                          const PointStencil* points, const int* row_at, const float* series_row,
                          float scale) {
  const PointStencil& s = points[blockIdx.x];
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  const int* rows = row_at + blockIdx.x * kPointThreads;
  for_each_injected_cell(s, [&](int a, int b, int c, float w) {
    const float term = __fmul_rn(__fmul_rn(w, v2dt2[g.index(s.i0 + a, s.j0 + b, s.k0 + c)]), amp);
    atomicAdd(scratch + rows[c * kMaxPointTaps + b] + a, term);
  });
}

// One thread per touched block: encoded again from its interior cells.
__global__ void encode_blocks_kernel(GridLayout g, const float* scratch, const int64_t* blocks,
                                     int count, int16_t* q, int8_t* e) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count) return;
  const int64_t first = blocks[s] * bfp16::kBlock;
  const float* v = scratch + int64_t(s) * bfp16::kBlock;
  uint32_t m = 0;
  for (int i = 0; i < bfp16::kBlock; ++i)
    if (bfp16_interior(g, first + i)) m = max(m, bfp16::magnitude_bits(v[i]));
  const int block_e = bfp16::block_exponent(m);
  for (int i = 0; i < bfp16::kBlock; ++i)
    q[first + i] = bfp16_interior(g, first + i) ? bfp16::encode(v[i], block_e) : int16_t(0);
  e[blocks[s]] = int8_t(block_e);
}

// record_kernel of cuda_point_set.cu, each cell decoded.
__global__ void __launch_bounds__(kPointThreads)
    record_kernel(const int16_t* q, const int8_t* e, GridLayout g, const PointStencil* points,
                  float* series_row) {
  const float v = record_point(points[blockIdx.x], g, [&](int64_t n) { return decoded(q, e, n); });
  if (threadIdx.x == 0) series_row[blockIdx.x] = v;
}

template <class T> DeviceBuffer upload(const std::vector<T>& host, int device, cudaStream_t stream) {
  DeviceBuffer buffer(std::max<size_t>(host.size(), 1) * sizeof(T), AllocationKind::plain, device);
  if (!host.empty())
    CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host.data(), host.size() * sizeof(T),
                               cudaMemcpyHostToDevice, stream));
  return buffer;
}

} // namespace

class CudaBfp16PointSet final : public PointSet {
public:
  CudaBfp16PointSet(CudaWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field),
        buffers_(points, nt, field.device_, field.stream_) {
    const GridLayout& g = field_.layout();
    // The blocks the cells touch, sorted, and each stencil row's place in the scratch array.
    for (const PointStencil& p : points)
      for (int c = 0; c < p.nz; ++c)
        for (int b = 0; b < p.ny; ++b)
          for (int a = 0; a < p.nx; ++a)
            blocks_.push_back(g.index(p.i0 + a, p.j0 + b, p.k0 + c) / bfp16::kBlock);
    std::sort(blocks_.begin(), blocks_.end());
    blocks_.erase(std::unique(blocks_.begin(), blocks_.end()), blocks_.end());
    std::vector<int> row_at(points.size() * size_t(kPointThreads), 0);
    for (size_t n = 0; n < points.size(); ++n) {
      const PointStencil& p = points[n];
      for (int c = 0; c < p.nz; ++c)
        for (int b = 0; b < p.ny; ++b) {
          const int64_t first = g.index(p.i0, p.j0 + b, p.k0 + c);
          const int64_t block = first / bfp16::kBlock;
          const auto rank = std::lower_bound(blocks_.begin(), blocks_.end(), block) - blocks_.begin();
          row_at[n * kPointThreads + size_t(c * kMaxPointTaps + b)] =
              int(rank * bfp16::kBlock + first % bfp16::kBlock);
        }
    }
    cudaStream_t stream = field_.stream_;
    blocks_device_ = upload(blocks_, field_.device_, stream);
    row_at_ = upload(row_at, field_.device_, stream);
    scratch_ = DeviceBuffer(std::max<size_t>(blocks_.size(), 1) * bfp16::kBlock * sizeof(float),
                            AllocationKind::plain, field_.device_);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

private:
  void do_upload_series(const std::vector<float>& series) override { buffers_.upload_series(series); }
  std::vector<float> do_download_series() const override { return buffers_.download_series(); }

  void do_inject(int t, float scale) override {
    if (size() == 0 || blocks_.empty()) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const GridLayout& g = field_.layout();
    cudaStream_t stream = field_.stream_;
    auto* q = static_cast<int16_t*>(field_.cur_);
    int8_t* e = bfp16_exponents(field_.cur_, g);
    const int count = int(blocks_.size());
    const int64_t* blocks = blocks_device_.as<int64_t>();
    float* scratch = scratch_.as<float>();
    field_.begin_timed();
    const int64_t values = int64_t(count) * bfp16::kBlock;
    decode_blocks_kernel<<<unsigned((values + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        q, e, blocks, count, scratch);
    CUDA_CHECK_LAUNCH("bfp16 decode_blocks_kernel");
    inject_scratch_kernel<<<size(), kPointThreads, 0, stream>>>(
        scratch, field_.v2dt2_.as<float>(), g, buffers_.stencils(), row_at_.as<int>(),
        buffers_.series_row(t), scale);
    CUDA_CHECK_LAUNCH("bfp16 inject_scratch_kernel");
    encode_blocks_kernel<<<unsigned((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        g, scratch, blocks, count, q, e);
    CUDA_CHECK_LAUNCH("bfp16 encode_blocks_kernel");
    field_.end_timed(CudaWavefield::TimedOp::points);
  }

  void do_record(int t) override {
    if (size() == 0) return;
    CUDA_CHECK(cudaSetDevice(field_.device_));
    const GridLayout& g = field_.layout();
    field_.begin_timed();
    record_kernel<<<size(), kPointThreads, 0, field_.stream_>>>(
        static_cast<const int16_t*>(field_.cur_), bfp16_exponents(static_cast<const void*>(field_.cur_), g),
        g, buffers_.stencils(), buffers_.series_row(t));
    CUDA_CHECK_LAUNCH("bfp16 record_kernel");
    field_.end_timed(CudaWavefield::TimedOp::points);
  }

  CudaWavefield& field_;
  std::vector<int64_t> blocks_; // the touched blocks (element index / 16), sorted
  DeviceBuffer blocks_device_;  // int64_t[blocks_.size()]
  DeviceBuffer row_at_;         // int[size()][kPointThreads]
  DeviceBuffer scratch_;        // float[blocks_.size() * 16]
  PointBuffers buffers_;        // stencils, series; destroyed first, waiting for the stream
};

std::unique_ptr<PointSet> make_bfp16_point_set(CudaWavefield& field,
                                               const std::vector<PointStencil>& points, int nt) {
  return std::make_unique<CudaBfp16PointSet>(field, points, nt);
}

} // namespace rtm::cuda
