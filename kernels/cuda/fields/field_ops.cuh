// Whole-array operations on device fields that the propagator and the benchmark need around the
// wave steps: random fills, float <-> half conversion, dense -> padded scatter, and the relative
// L2 difference of two wavefields. All run on the given stream; none synchronises unless it says.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/grid_layout.h"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {

// A device array in the padded layout with its element type.
struct DeviceField {
  const void* data = nullptr;
  Storage storage = Storage::fp32;
};

// Fills all `count` elements with values whose magnitude lies in [0.1, 1] and whose sign is
// random: non-zero everywhere, reproducible from `seed` (the same values for either storage,
// up to the rounding to half).
void fill_random(void* data, Storage storage, int64_t count, uint64_t seed, cudaStream_t stream);

// Elementwise conversions of `count` elements.
void convert_float_to_half(const float* src, void* dst_half, int64_t count, cudaStream_t stream);
void convert_half_to_float(const void* src_half, float* dst, int64_t count, cudaStream_t stream);

// Writes the dense [nz][ny][nx] array `dense` into the interior cells of the padded `padded`
// (element type `storage`); halo and padding are left as they are.
void scatter_interior(const GridLayout& g, const float* dense, void* padded, Storage storage,
                      cudaStream_t stream);

// The free surface's image in the top halo of `field` (solvers/contracts/free_surface.h: plane -1
// zero, planes -2, -3, -4 minus planes 0, 1, 2, interior columns), the same bits as the host's
// mirror_free_surface for float32 (and for half, its sign flipped). bfp16: the mantissas of every
// block of the interior rows negated and the blocks' exponents copied (a block of zeros on plane
// -1), so the halo decodes to minus the source planes' decoded values exactly. `g` is the layout
// of the whole field (a TTI layout for p or q of a TTI pair). Queued on `stream`.
void mirror_free_surface(const GridLayout& g, void* field, Storage storage, cudaStream_t stream);

// sqrt( sum (a - b)^2 / sum b^2 ) over the interior cells, accumulated in double; synchronises
// the stream to return the value. Returns 0 when both are zero and +inf when only b is.
double relative_l2_difference(const GridLayout& g, DeviceField a, DeviceField b,
                              cudaStream_t stream);

} // namespace rtm::cuda
