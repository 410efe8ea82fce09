// The numerical health of a device wavefield (solvers/contracts/field_health.h gives the rules): two passes
// over the interior, each one read of the field (a quarter of a float32 step's traffic): the
// largest |p| bit pattern (NaN > inf > largest finite), then the lowest dense index holding it.
#pragma once

#include <cuda_runtime.h>

#include "solvers/contracts/field_health.h"
#include "kernels/cuda/fields/field_ops.cuh"

namespace rtm::cuda {

// Synchronises `stream` to return the result.
FieldHealth field_health(const GridLayout& g, DeviceField field, cudaStream_t stream);

} // namespace rtm::cuda
