// transpose: naive, through a shared-memory tile, and through a tile padded by one word per row
// (docs/micro.md, "transpose"). naive, tiled and tiled+pad use 32 x 8 threads per 64 x 64 tile,
// 16 elements per thread, so they differ only in how they touch memory (16 independent loads per
// thread keep many bytes in flight for HBM3e). pad32 is the textbook version (32 x 32 tile padded
// to 33, 32 x 8 threads, 4 elements per thread) and pad32-f64 the same with 8-byte elements, to
// compare with: which of bytes in flight and request size binds the padded transpose.
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kTile = model::kTransposeTile;           // 64
constexpr int kSmallTile = model::kTransposeSmallTile; // 32
constexpr int kBlockX = 32, kBlockY = 8;

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
// is 64 words (kPad = 0); one element of padding (kPad = 1) spreads the column over all 32 banks
// (for 8-byte elements: over all 32 banks within each half-warp, which is all 8-byte accesses ask).
// Each thread moves kTileT / 8 x kTileT / 32 elements: 16 for 64 x 64 tiles, 4 for 32 x 32.
template <int kTileT, int kPad, class T>
__device__ __forceinline__ void transpose_through_tile(const T* __restrict__ in, T* __restrict__ out,
                                                       int64_t rows, int64_t cols) {
  static_assert(kTileT % kBlockX == 0 && kTileT % kBlockY == 0, "tile must split into the block");
  __shared__ T tile[kTileT][kTileT + kPad];
  const int64_t in_row0 = int64_t(blockIdx.y) * kTileT, in_col0 = int64_t(blockIdx.x) * kTileT;
#pragma unroll
  for (int j = 0; j < kTileT; j += kBlockY)
#pragma unroll
    for (int h = 0; h < kTileT; h += kBlockX) {
      const int64_t row = in_row0 + threadIdx.y + j, col = in_col0 + threadIdx.x + h;
      if (row < rows && col < cols) tile[threadIdx.y + j][threadIdx.x + h] = in[row * cols + col];
    }
  __syncthreads();
  // Output row c (an input column) and column r (an input row) hold tile[r - in_row0][c - in_col0].
#pragma unroll
  for (int j = 0; j < kTileT; j += kBlockY)
#pragma unroll
    for (int h = 0; h < kTileT; h += kBlockX) {
      const int64_t out_row = in_col0 + threadIdx.y + j, out_col = in_row0 + threadIdx.x + h;
      if (out_row < cols && out_col < rows)
        out[out_row * rows + out_col] = tile[threadIdx.x + h][threadIdx.y + j];
    }
}

// One kernel name per variant, so that Nsight Compute's --kernel-name and its reports tell them
// apart without template arguments (.ci/micro-counters).
__global__ void transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  transpose_through_tile<kTile, 0>(in, out, rows, cols);
}
__global__ void transpose_padded_kernel(const float* __restrict__ in, float* __restrict__ out,
                                        int64_t rows, int64_t cols) {
  transpose_through_tile<kTile, 1>(in, out, rows, cols);
}
__global__ void transpose_pad32_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  transpose_through_tile<kSmallTile, 1>(in, out, rows, cols);
}
__global__ void transpose_pad32_f64_kernel(const double* __restrict__ in, double* __restrict__ out,
                                           int64_t rows, int64_t cols) {
  transpose_through_tile<kSmallTile, 1>(in, out, rows, cols);
}

void check_shape(model::TransposeKind kind, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1 || (rows + kSmallTile - 1) / kSmallTile > 65535)
    throw std::invalid_argument("transpose: need rows, cols >= 1 and rows <= 65535 * 32 (got " +
                                std::to_string(rows) + " x " + std::to_string(cols) + ")");
  if (kind == model::TransposeKind::padded32_f64 && cols % 2)
    throw std::invalid_argument("transpose pad32-f64: the columns must be even (pairs of floats "
                                "are one 8-byte element), got " +
                                std::to_string(cols));
}

// rows x cols floats; pad32-f64 reads them as rows x cols/2 doubles (and writes cols/2 x rows).
void launch_transpose(model::TransposeKind kind, const float* in, float* out, int64_t rows,
                      int64_t cols, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  auto grid = [&](int tile, int64_t c) {
    return dim3(detail::blocks_for(c, tile), static_cast<unsigned>((rows + tile - 1) / tile));
  };
  switch (kind) {
  case model::TransposeKind::naive:
    transpose_naive_kernel<<<grid(kTile, cols), block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_naive_kernel");
    break;
  case model::TransposeKind::tiled:
    transpose_tiled_kernel<<<grid(kTile, cols), block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_tiled_kernel");
    break;
  case model::TransposeKind::padded:
    transpose_padded_kernel<<<grid(kTile, cols), block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_padded_kernel");
    break;
  case model::TransposeKind::padded32:
    transpose_pad32_kernel<<<grid(kSmallTile, cols), block, 0, stream>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH("transpose_pad32_kernel");
    break;
  case model::TransposeKind::padded32_f64:
    // cudaMalloc'd buffers are 256-byte aligned: the floats may be read as doubles.
    transpose_pad32_f64_kernel<<<grid(kSmallTile, cols / 2), block, 0, stream>>>(
        reinterpret_cast<const double*>(in), reinterpret_cast<double*>(out), rows, cols / 2);
    CUDA_CHECK_LAUNCH("transpose_pad32_f64_kernel");
    break;
  }
}

// The input float the output float `o` must hold: output element o of the cols x rows result is
// input (o % rows, o / rows); with 8-byte elements, float o is half o % 2 of double o / 2 of the
// cols/2 x rows result.
uint64_t transposed_source(model::TransposeKind kind, int64_t o, int64_t rows, int64_t cols) {
  if (kind != model::TransposeKind::padded32_f64) return uint64_t(o % rows) * cols + o / rows;
  const int64_t d = o / 2;
  return uint64_t(d % rows) * cols + 2 * (d / rows) + o % 2;
}

} // namespace

const TimedKernel& TransposeRun::kernel(model::TransposeKind kind) const {
  const auto i = static_cast<size_t>(kind);
  if (i >= kernels.size()) throw std::invalid_argument("TransposeRun::kernel: unknown kind");
  return kernels[i];
}

std::vector<float> transpose_once(const std::vector<float>& in, int64_t rows, int64_t cols,
                                  model::TransposeKind kind) {
  check_shape(kind, rows, cols);
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

TransposeRun run_transpose(int64_t rows, int64_t cols, const TimingOptions& timing,
                           const std::vector<model::TransposeKind>& kinds) {
  for (auto kind : kinds) check_shape(kind, rows, cols);
  check_shape(model::TransposeKind::naive, rows, cols);
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
  out.poison(stream);
  detail::launch_copy_scalar(in.data(), out.data(), n, stream);
  stream.synchronize();
  run.copy_scalar.check =
      detail::verify_output(out.download(), [&](int64_t i) { return pattern_value(i, seed); });
  run.copy_scalar.time = detail::time_launches(
      stream, timing, [&]() { detail::launch_copy_scalar(in.data(), out.data(), n, stream); });
  for (auto kind : kinds) {
    TimedKernel& k = run.kernels[static_cast<size_t>(kind)];
    out.poison(stream);
    launch_transpose(kind, in.data(), out.data(), rows, cols, stream);
    stream.synchronize();
    k.check = detail::verify_output(out.download(), [&](int64_t o) {
      return pattern_value(transposed_source(kind, o, rows, cols), seed);
    });
    k.time = detail::time_launches(
        stream, timing, [&]() { launch_transpose(kind, in.data(), out.data(), rows, cols, stream); });
  }
  return run;
}

} // namespace rtm::micro
