// Point-set operations on a device field that more than one wavefield uses (kernels/cuda/
// cuda_point_set.cu defines them with its kernels): the TTI wavefield records p as the acoustic
// one records its field.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/field_ops.cuh"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

// series_row[point] = sum over the point's cells of weight * field[cell], in PointStencil's order
// (the CPU reference's, to the bit), for the `count` device stencils `points`; field in layout g.
// Queued on `stream`.
void record_points(const GridLayout& g, DeviceField field, const PointStencil* points, int count,
                   float* series_row, cudaStream_t stream);

} // namespace rtm::cuda
