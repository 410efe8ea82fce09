// solvers/contracts/ring_codec.h's 16-bit block codec on a GPU, shared by the boundary store's
// rings (cuda_boundary_store.cu) and the snapshot store's slots (cuda_snapshot_store.cu): a thread
// block of kRingBlock threads codes one block, with the CPU's operations (__float2half_rn and
// __float2int_rn round to nearest even, as float_to_half and std::nearbyint do), so both stores
// hold the CPU's bits.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/ring_codec.h"

namespace rtm::cuda {

static_assert(kRingBlock == 256, "one thread block of 256 threads per coded block");

// The exponent of the thread block's values (v: this thread's, 0 for a thread past the block's
// end), as ring_block_exponent: the largest |value| by warp shuffles, then the 8 warps'. Every
// thread of the block calls it and gets it; thread 0 also stores it at *exponent.
__device__ __forceinline__ int32_t block_exponent_of(float v, int32_t* exponent) {
  __shared__ float warp_max[kRingBlock / 32];
  __shared__ int32_t block_exponent;
  float m = fabsf(v);
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float largest = 0.0f;
    for (int w = 0; w < kRingBlock / 32; ++w) largest = fmaxf(largest, warp_max[w]);
    int e = 0;
    if (largest > 0.0f && isfinite(largest)) frexpf(largest, &e);
    block_exponent = e;
    *exponent = e;
  }
  __syncthreads();
  return block_exponent;
}

// A value of a block of exponent e in 16 bits, and back (encode_ring_value, decode_ring_value).
template <bool kFixed>
__device__ __forceinline__ uint16_t encode_block_value(float v, int32_t e) {
  const float scaled = ldexpf(v, kRingHalfBits - e);
  if constexpr (kFixed) return uint16_t(int16_t(min(32767, max(-32767, __float2int_rn(scaled)))));
  else return __half_as_ushort(__float2half_rn(scaled));
}
template <bool kFixed>
__device__ __forceinline__ float decode_block_value(uint16_t code, int32_t e) {
  const float scaled = kFixed ? float(int16_t(code)) : __half2float(__ushort_as_half(code));
  return ldexpf(scaled, e - kRingHalfBits);
}

} // namespace rtm::cuda
