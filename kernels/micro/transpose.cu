// transpose: naive, through a shared-memory tile, and through a tile padded by one word per row
// (docs/micro.md, "transpose"). All three use 32 x 8 threads per 64 x 64 tile, 16 elements per
// thread, so they differ only in how they touch memory. (16 independent loads per thread keep
// enough bytes in flight for HBM3e; 32 x 32 tiles with 4 per thread leave the tiled kernels
// latency-bound on an H200.)
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kTile = model::kTransposeTile; // 64
constexpr int kBlockX = 32, kBlockY = 8;
static_assert(kTile % kBlockX == 0 && kTile % kBlockY == 0, "tile must split into the block");

// Reads rows of the tile (coalesced) and writes them as columns: the 32 lanes of a warp store to
// 32 different output rows, 32 sectors per request.
__global__ void transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  const int64_t col0 = int64_t(blockIdx.x) * kTile + threadIdx.x;
  const int64_t row0 = int64_t(blockIdx.y) * kTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockY)
#pragma unroll
    for (int h = 0; h < kTile; h += kBlockX) {
      const int64_t row = row0 + j, col = col0 + h;
      if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];
    }
}

// Reads a tile row by row into shared memory and writes it back row by row of the output, so both
// global accesses are coalesced. Reading the tile down a column hits one bank 32 times when a row
// is 64 words (kPad = 0); one word of padding (kPad = 1) spreads the column over all 32 banks.
template <int kPad>
__global__ void transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + kPad];
  const int64_t in_row0 = int64_t(blockIdx.y) * kTile, in_col0 = int64_t(blockIdx.x) * kTile;
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockY)
#pragma unroll
    for (int h = 0; h < kTile; h += kBlockX) {
      const int64_t row = in_row0 + threadIdx.y + j, col = in_col0 + threadIdx.x + h;
      if (row < rows && col < cols) tile[threadIdx.y + j][threadIdx.x + h] = in[row * cols + col];
    }
  __syncthreads();
  // Output row c (an input column) and column r (an input row) hold tile[r - in_row0][c - in_col0].
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockY)
#pragma unroll
    for (int h = 0; h < kTile; h += kBlockX) {
      const int64_t out_row = in_col0 + threadIdx.y + j, out_col = in_row0 + threadIdx.x + h;
      if (out_row < cols && out_col < rows)
        out[out_row * rows + out_col] = tile[threadIdx.x + h][threadIdx.y + j];
    }
}

void check_shape(int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1 || (rows + kTile - 1) / kTile > 65535)
    throw std::invalid_argument("transpose: need rows, cols >= 1 and rows <= 65535 * 64 (got " +
                                std::to_string(rows) + " x " + std::to_string(cols) + ")");
}

void launch_transpose(model::TransposeKind kind, const float* in, float* out, int64_t rows,
                      int64_t cols, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid(detail::blocks_for(cols, kTile),
                  static_cast<unsigned>((rows + kTile - 1) / kTile));
  switch (kind) {
  case model::TransposeKind::naive:
    transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_naive_kernel");
    break;
  case model::TransposeKind::tiled:
    transpose_tiled_kernel<0><<<grid, block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_tiled_kernel<0>");
    break;
  case model::TransposeKind::padded:
    transpose_tiled_kernel<1><<<grid, block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_tiled_kernel<1>");
    break;
  }
}

} // namespace

const TimedKernel& TransposeRun::kernel(model::TransposeKind kind) const {
  switch (kind) {
  case model::TransposeKind::naive: return naive;
  case model::TransposeKind::tiled: return tiled;
  case model::TransposeKind::padded: return padded;
  }
  throw std::invalid_argument("TransposeRun::kernel: unknown kind");
}

std::vector<float> transpose_once(const std::vector<float>& in, int64_t rows, int64_t cols,
                                  model::TransposeKind kind) {
  check_shape(rows, cols);
  if (static_cast<int64_t>(in.size()) != rows * cols)
    throw std::invalid_argument("transpose_once: input size is not rows x cols");
  cuda::DeviceArray<float> din(rows * cols, "transpose input"),
      dout(rows * cols, "transpose output");
  din.upload(in);
  dout.poison(nullptr);
  launch_transpose(kind, din.data(), dout.data(), rows, cols, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

TransposeRun run_transpose(int64_t rows, int64_t cols, const TimingOptions& timing) {
  check_shape(rows, cols);
  const int64_t n = rows * cols;
  cuda::Stream stream;
  cuda::DeviceArray<float> in(n, "transpose input"), out(n, "transpose output");
  const uint32_t seed = detail::fresh_seed();
  detail::fill_pattern(in.data(), n, seed, stream);

  TransposeRun run;
  run.rows = rows;
  run.cols = cols;
  run.copy = detail::time_launches(stream, timing,
                                   [&]() { detail::launch_copy(in.data(), out.data(), n, stream); });
  for (auto kind :
       {model::TransposeKind::naive, model::TransposeKind::tiled, model::TransposeKind::padded}) {
    TimedKernel& k = kind == model::TransposeKind::naive   ? run.naive
                     : kind == model::TransposeKind::tiled ? run.tiled
                                                           : run.padded;
    out.poison(stream);
    launch_transpose(kind, in.data(), out.data(), rows, cols, stream);
    stream.synchronize();
    // Output element o is row o / rows, column o % rows of the cols x rows result: input (r, c) =
    // (o % rows, o / rows).
    k.check = detail::verify_output(out.download(), [&](int64_t o) {
      return pattern_value(uint64_t(o % rows) * cols + o / rows, seed);
    });
    k.time = detail::time_launches(
        stream, timing, [&]() { launch_transpose(kind, in.data(), out.data(), rows, cols, stream); });
  }
  return run;
}

} // namespace rtm::micro
