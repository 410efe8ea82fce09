// transpose: naive, through a shared-memory tile, and through a tile padded by one word per row
// (docs/micro.md, "transpose"). All three use 32 x 8 threads per 32 x 32 tile, 4 elements each,
// so they differ only in how they touch memory.
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

// Reads a row of the tile (coalesced), writes it as a column: the 32 lanes of a warp store to 32
// different output rows, 32 sectors per request.
__global__ void transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  const int64_t col = int64_t(blockIdx.x) * kTile + threadIdx.x;
  const int64_t row0 = int64_t(blockIdx.y) * kTile + threadIdx.y;
  if (col >= cols) return;
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int64_t row = row0 + j;
    if (row < rows) out[col * rows + row] = in[row * cols + col];
  }
}

// Reads a tile row by row into shared memory, writes it back row by row of the output, so both
// global accesses are coalesced. Reading the tile column-wise hits one bank 32 times when rows are
// 32 words (kPad = 0); one word of padding (kPad = 1) spreads the column over all 32 banks.
template <int kPad>
__global__ void transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + kPad];
  const int64_t in_col = int64_t(blockIdx.x) * kTile + threadIdx.x;
  const int64_t in_row = int64_t(blockIdx.y) * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows)
    if (in_col < cols && in_row + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(in_row + j) * cols + in_col];
  __syncthreads();
  // This block writes output rows blockIdx.x * 32 + ... (input columns), output columns
  // blockIdx.y * 32 + ... (input rows); out[c][r] = tile[r - r0][c - c0].
  const int64_t out_col = int64_t(blockIdx.y) * kTile + threadIdx.x;
  const int64_t out_row = int64_t(blockIdx.x) * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows)
    if (out_col < rows && out_row + j < cols)
      out[(out_row + j) * rows + out_col] = tile[threadIdx.x][threadIdx.y + j];
}

void check_shape(int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1 || (rows + kTile - 1) / kTile > 65535)
    throw std::invalid_argument("transpose: need rows, cols >= 1 and rows <= 65535 * 32 (got " +
                                std::to_string(rows) + " x " + std::to_string(cols) + ")");
}

void launch_transpose(model::TransposeKind kind, const float* in, float* out, int64_t rows,
                      int64_t cols, cudaStream_t stream) {
  const dim3 block(kTile, kBlockRows);
  const dim3 grid(detail::blocks_for(cols, kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  switch (kind) {
  case model::TransposeKind::naive:
    transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
    RTM_MICRO_CHECK_LAUNCH("transpose_naive_kernel");
    break;
  case model::TransposeKind::tiled:
    transpose_tiled_kernel<0><<<grid, block, 0, stream>>>(in, out, rows, cols);
    RTM_MICRO_CHECK_LAUNCH("transpose_tiled_kernel<0>");
    break;
  case model::TransposeKind::padded:
    transpose_tiled_kernel<1><<<grid, block, 0, stream>>>(in, out, rows, cols);
    RTM_MICRO_CHECK_LAUNCH("transpose_tiled_kernel<1>");
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
  detail::DeviceBuffer<float> din(rows * cols, "transpose input"), dout(rows * cols, "transpose output");
  din.upload(in);
  dout.poison(nullptr);
  launch_transpose(kind, din.get(), dout.get(), rows, cols, nullptr);
  RTM_MICRO_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

TransposeRun run_transpose(int64_t rows, int64_t cols, const TimingOptions& timing) {
  check_shape(rows, cols);
  const int64_t n = rows * cols;
  detail::Stream stream;
  detail::DeviceBuffer<float> in(n, "transpose input"), out(n, "transpose output");
  const uint32_t seed = detail::fresh_seed();
  detail::fill_pattern(in.get(), n, seed, stream);

  TransposeRun run;
  run.rows = rows;
  run.cols = cols;
  run.copy = detail::time_launches(stream, timing,
                                   [&]() { detail::launch_copy(in.get(), out.get(), n, stream); });
  for (auto kind : {model::TransposeKind::naive, model::TransposeKind::tiled,
                    model::TransposeKind::padded}) {
    TimedKernel& k = kind == model::TransposeKind::naive   ? run.naive
                     : kind == model::TransposeKind::tiled ? run.tiled
                                                           : run.padded;
    out.poison(stream);
    launch_transpose(kind, in.get(), out.get(), rows, cols, stream);
    stream.synchronize();
    // Output element o is row o / rows, column o % rows of the cols x rows result: input (r, c) =
    // (o % rows, o / rows).
    k.check = detail::verify_output(out.download(), [&](int64_t o) {
      return pattern_value(uint64_t(o % rows) * cols + o / rows, seed);
    });
    k.time = detail::time_launches(
        stream, timing, [&]() { launch_transpose(kind, in.get(), out.get(), rows, cols, stream); });
  }
  return run;
}

} // namespace rtm::micro
