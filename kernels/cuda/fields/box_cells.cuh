// Kernels over the cells of a box of a padded field (the box copies, the imaging condition, the
// Born source, the snapshots' restore): blockIdx.y walks the box's rows (fixed y and z), threads
// walk x, both with grid-stride loops, so a launch of box_grid(box) x kRowThreads covers any box
// and no cell's position needs a division.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

constexpr int kRowThreads = 128; // box kernels: threads along a row (x)

inline dim3 box_grid(const Box& b) {
  const int64_t row_blocks = (b.nx() + kRowThreads - 1) / kRowThreads;
  const int64_t rows = int64_t(b.ny()) * b.nz();
  return dim3(unsigned(std::clamp<int64_t>(row_blocks, 1, 1024)),
              unsigned(std::clamp<int64_t>(rows, 1, 65535)));
}

// Calls op(row, i, dense index, padded index) for every cell of `b` this thread owns: row is the
// box row ([z][y], y fastest), i the cell's place along it; dense indices are [z][y][x] over the
// box, x fastest.
template <class Op>
__device__ __forceinline__ void for_each_box_row_cell(const GridLayout& g, const Box& b, Op op) {
  const int nx = b.x1 - b.x0, ny = b.y1 - b.y0;
  const int64_t rows = int64_t(ny) * (b.z1 - b.z0);
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int j = int(row % ny), k = int(row / ny);
    const int64_t dense_row = row * nx;
    const int64_t padded_row = g.index(b.x0, b.y0 + j, b.z0 + k);
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < nx; i += int(gridDim.x * blockDim.x))
      op(row, i, dense_row + i, padded_row + i);
  }
}

// Calls op(dense index, padded index) for every cell of `b` this thread owns.
template <class Op>
__device__ __forceinline__ void for_each_box_cell(const GridLayout& g, const Box& b, Op op) {
  for_each_box_row_cell(g, b, [&](int64_t, int, int64_t d, int64_t c) { op(d, c); });
}

} // namespace rtm::cuda
