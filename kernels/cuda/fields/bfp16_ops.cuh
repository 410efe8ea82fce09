// Whole-field operations on bfp16 fields (solvers/contracts/bfp16.h, kernels/cuda/steps/bfp16_io.cuh):
// float32 <-> bfp16 for state upload and download, and a float32 copy for the operations that
// read a field whole (the health check, the bench's error). All run on the given stream and do
// not synchronise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/grid_layout.h"

namespace rtm::cuda {

// Encodes the interior cells of the padded float array `src` into the bfp16 field `dst` (both
// laid out by `g`); every other element of `dst` becomes zero (bfp16 keeps no halo values).
void bfp16_encode_field(const GridLayout& g, const float* src, void* dst, cudaStream_t stream);
// Decodes the bfp16 field `src` into the padded float array `dst`: the interior cells, with
// `top_halo` also the top halo above them (the free surface's image), and zeros everywhere else.
void bfp16_decode_field(const GridLayout& g, const void* src, float* dst, cudaStream_t stream,
                        bool top_halo = false);
// Encodes the interior cells of the padded float array `src` (v2dt2 >= 0) into `dst` as the
// bfp16_model16 kernel reads it: unsigned 16-bit mantissas and the exponent bytes
// (bfp16::encode_unsigned; bfp16::quantise_model is the CPU twin), zero elsewhere.
void bfp16_encode_model(const GridLayout& g, const float* src, void* dst, cudaStream_t stream);

} // namespace rtm::cuda
