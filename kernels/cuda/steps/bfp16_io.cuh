// Device-side access to bfp16 fields (solvers/contracts/bfp16.h): where the exponents lie, and
// loads, decodes and stores of 4 consecutive elements (a 4-aligned group lies in one block).
//
// A bfp16 field is one device allocation of bfp16::field_bytes(layout): the int16 mantissas of
// the padded layout's `size` elements, then the `size / 16` exponent bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/bfp16.h"
#include "solvers/contracts/grid_layout.h"

namespace rtm::cuda {

// The exponents of the bfp16 field at `field` (laid out for the whole grid `g`).
inline int8_t* bfp16_exponents(void* field, const GridLayout& g) {
  return reinterpret_cast<int8_t*>(static_cast<int16_t*>(field) + g.size);
}
inline const int8_t* bfp16_exponents(const void* field, const GridLayout& g) {
  return reinterpret_cast<const int8_t*>(static_cast<const int16_t*>(field) + g.size);
}

// Whether element n of the padded layout `g` is an interior cell (bfp16 stores no other), or,
// with `top_halo`, a cell of the top halo above an interior column (the free surface's image,
// which the step's mirror writes: kernels/cuda/fields/field_ops.cu).
__device__ __forceinline__ bool bfp16_interior(const GridLayout& g, int64_t n, bool top_halo = false) {
  const int64_t rel = n - g.offset;
  if (rel < 0) return false;
  const int64_t k = rel / g.plane - kHalo;
  const int64_t j = (rel % g.plane) / g.pitch - kHalo;
  const int64_t i = rel % g.pitch - kHalo;
  return i >= 0 && i < g.nx && j >= 0 && j < g.ny && k >= (top_halo ? -kHalo : 0) && k < g.nz;
}

// 4 mantissas (little-endian int16 pairs) and the exponent of their block, as loaded.
struct Bfp16x4 {
  uint2 q;
  int e;
};

// Through the read-only path: for p[n], which no thread writes during the step.
__device__ __forceinline__ Bfp16x4 bfp16_load(const int16_t* q, const int8_t* e, int64_t n) {
  return {__ldg(reinterpret_cast<const uint2*>(q + n)), int(__ldg(e + (n >> 4)))};
}
// Coherent and evict-first: for p[n-1], which the same step overwrites in place with p[n+1].
__device__ __forceinline__ Bfp16x4 bfp16_load_once(const int16_t* q, const int8_t* e, int64_t n) {
  return {__ldcs(reinterpret_cast<const uint2*>(q + n)), int(__ldcs(e + (n >> 4)))};
}
__device__ __forceinline__ Bfp16x4 bfp16_zero() { return {make_uint2(0u, 0u), bfp16::kMinExponent}; }

__device__ __forceinline__ float4 bfp16_unpack(const Bfp16x4& v) {
  const float s = bfp16::decode_scale(v.e);
  return make_float4(float(int16_t(v.q.x & 0xffffu)) * s, float(int16_t(v.q.x >> 16)) * s,
                     float(int16_t(v.q.y & 0xffffu)) * s, float(int16_t(v.q.y >> 16)) * s);
}

// The model's unsigned variant (bfp16::decode_unsigned).
__device__ __forceinline__ float4 bfp16_unpack_unsigned(const Bfp16x4& v) {
  const float s = bfp16::decode_scale_unsigned(v.e);
  return make_float4(float(v.q.x & 0xffffu) * s, float(v.q.x >> 16) * s, float(v.q.y & 0xffffu) * s,
                     float(v.q.y >> 16) * s);
}

__device__ __forceinline__ uint2 bfp16_pack(int16_t a, int16_t b, int16_t c, int16_t d) {
  return make_uint2(uint32_t(uint16_t(a)) | (uint32_t(uint16_t(b)) << 16),
                    uint32_t(uint16_t(c)) | (uint32_t(uint16_t(d)) << 16));
}

// The exponent of a block spread over the 4 consecutive lanes of a warp that hold its 16
// elements (lanes 4m .. 4m+3), from each lane's largest magnitude_bits. Every lane of the warp
// must call it.
__device__ __forceinline__ int bfp16_block_exponent_4_lanes(uint32_t m) {
  m = max(m, __shfl_xor_sync(0xffffffffu, m, 1));
  m = max(m, __shfl_xor_sync(0xffffffffu, m, 2));
  return bfp16::block_exponent(m);
}

} // namespace rtm::cuda
