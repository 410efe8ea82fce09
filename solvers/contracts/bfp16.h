// Block floating point with 16-bit mantissas (bfp16): the wavefield storage of the CUDA variant
// bfp16 (docs/variants.md, "Block floating point"). Plain C++ that the CUDA kernels compile as
// __host__ __device__ functions, so the CPU twin the tests use is the GPU's arithmetic itself.
//
// A block is 16 consecutive elements of a padded array (GridLayout): since index(0, j, k) is a
// multiple of 32, block b = index >> 4 covers the cells x = 16 m .. 16 m + 15 of one row. Each
// element keeps an int16 mantissa q, each block one exponent byte e:
//     value = q * 2^(e - 15),   |q| <= 32767,   e = the least integer with max |value| < 2^e,
// so every stored value is within 2^-16 (half a mantissa step) of 2^e, relative to the block's
// largest magnitude: at most 2^-15 of it. The exponent follows the amplitude, so small fields keep
// their 15 bits (IEEE half loses them below its normal range, 6.1e-5).
// Only interior cells are stored: halo and padding hold q = 0 (the rigid halo of a run), so a
// block's exponent may change without touching them.
// Special exponents: kMinExponent for a block of zeros (blocks below 2^-111 keep fewer bits, and
// subnormal ones flush to zero); kNonFinite for a block holding an infinity or a NaN: all its elements decode as NaN, so the
// health check still sees a blow-up.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "solvers/contracts/grid_layout.h"

#if defined(__CUDACC__)
#define RTM_BFP16_HD __host__ __device__ __forceinline__
#else
#define RTM_BFP16_HD inline
#endif

namespace rtm::bfp16 {

constexpr int kBlock = 16;          // elements per exponent
constexpr int kMantissaMax = 32767; // |q|
constexpr int kMinExponent = -110;  // zero blocks; the scales 2^(+-(e-15)), 2^(+-(e-16)) stay normal
constexpr int kMaxExponent = 126;   // magnitudes up to 2^126 (larger ones: kNonFinite)
constexpr int kNonFinite = 127;     // the block holds inf or NaN: decodes as NaN

RTM_BFP16_HD uint32_t float_bits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
#endif
}
RTM_BFP16_HD float bits_float(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
#endif
}

// |v| as bits: for non-negative floats the integer order is the float order, and a NaN (above
// the infinity's bits) wins every max, so an integer max over a block propagates NaN.
RTM_BFP16_HD uint32_t magnitude_bits(float v) { return float_bits(v) & 0x7fffffffu; }

// The block exponent from the largest magnitude_bits of the block.
RTM_BFP16_HD int block_exponent(uint32_t max_magnitude_bits) {
  const int biased = int(max_magnitude_bits >> 23); // sign bit is clear
  if (biased == 0xff) return kNonFinite;
  if (biased == 0) return kMinExponent; // zero or subnormal: flushed
  const int e = biased - 126;           // max in [2^(e-1), 2^e)
  if (e > kMaxExponent) return kNonFinite;
  return e < kMinExponent ? kMinExponent : e;
}

// 2^(15 - e): the encoding factor (exact: a power of two, a normal float for every finite e).
RTM_BFP16_HD float encode_scale(int e) { return bits_float(uint32_t(15 - e + 127) << 23); }
// 2^(e - 15), or NaN for kNonFinite: the decoding factor.
RTM_BFP16_HD float decode_scale(int e) {
  return e == kNonFinite ? bits_float(0x7fc00000u) : bits_float(uint32_t(e - 15 + 127) << 23);
}

// The mantissa of v in a block of exponent e: round to nearest, ties to even (the GPU's
// __float2int_rn, the host's default rounding mode), clamped to +-32767 (a value just below 2^e
// rounds to 2^15). The product with the scale is exact, so host and device agree to the bit.
RTM_BFP16_HD int16_t encode(float v, int e) {
  if (e == kNonFinite) return 0;
  const float scaled = v * encode_scale(e);
#if defined(__CUDA_ARCH__)
  int q = __float2int_rn(scaled);
#else
  int q = int(std::nearbyint(scaled));
#endif
  q = q > kMantissaMax ? kMantissaMax : q;
  q = q < -kMantissaMax ? -kMantissaMax : q;
  return int16_t(q);
}

RTM_BFP16_HD float decode(int16_t q, int e) { return float(q) * decode_scale(e); }

// The model's variant (v2dt2 > 0 in 16 bits, the bfp16_model16 kernel): unsigned mantissas,
// value = q 2^(e - 16), q <= 65535, so the block's largest value keeps 16 significant bits and
// every value is within half a step, 2^(e-17) <= 2^-16 of the block's largest. Negative
// values are not representable and clamp to zero (v2dt2 never is).
constexpr int kUnsignedMantissaMax = 65535;
RTM_BFP16_HD float encode_scale_unsigned(int e) { return bits_float(uint32_t(16 - e + 127) << 23); }
RTM_BFP16_HD float decode_scale_unsigned(int e) {
  return e == kNonFinite ? bits_float(0x7fc00000u) : bits_float(uint32_t(e - 16 + 127) << 23);
}
RTM_BFP16_HD uint16_t encode_unsigned(float v, int e) {
  if (e == kNonFinite) return 0;
  const float scaled = v * encode_scale_unsigned(e);
#if defined(__CUDA_ARCH__)
  int q = __float2int_rn(scaled);
#else
  int q = int(std::nearbyint(scaled));
#endif
  q = q > kUnsignedMantissaMax ? kUnsignedMantissaMax : q;
  q = q < 0 ? 0 : q;
  return uint16_t(q);
}
RTM_BFP16_HD float decode_unsigned(uint16_t q, int e) { return float(q) * decode_scale_unsigned(e); }

// ---- the CPU twin: whole blocks, whole fields (host only) ----------------------------------

// Encodes `n` <= kBlock values (one block; the missing ones count as zeros) and returns e.
inline int encode_block(const float* values, int n, int16_t* mantissas) {
  uint32_t m = 0;
  for (int i = 0; i < n; ++i) m = m > magnitude_bits(values[i]) ? m : magnitude_bits(values[i]);
  const int e = block_exponent(m);
  for (int i = 0; i < n; ++i) mantissas[i] = encode(values[i], e);
  return e;
}

// A padded field as bfp16 holds it: the interior cells of each block encoded together, every
// other element (halo, padding) zero.
inline void quantise_field(const GridLayout& g, std::vector<float>& field) {
  int16_t q[kBlock];
  float block[kBlock];
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int x0 = 0; x0 < g.nx; x0 += kBlock) {
        const int n = g.nx - x0 < kBlock ? g.nx - x0 : kBlock;
        float* row = field.data() + g.index(x0, j, k);
        for (int i = 0; i < n; ++i) block[i] = row[i];
        const int e = encode_block(block, n, q);
        for (int i = 0; i < n; ++i) row[i] = decode(q[i], e);
      }
  for (int64_t n = 0; n < g.size; ++n) {
    const int64_t rel = n - g.offset;
    const int64_t k = rel < 0 ? -1 : rel / g.plane - kHalo;
    const int64_t j = rel < 0 ? -1 : (rel % g.plane) / g.pitch - kHalo;
    const int64_t i = rel < 0 ? -1 : rel % g.pitch - kHalo;
    if (!(i >= 0 && i < g.nx && j >= 0 && j < g.ny && k >= 0 && k < g.nz)) field[size_t(n)] = 0.0f;
  }
}

// A dense [nz][ny][nx] v2dt2 as bfp16_model16 holds it: blocks of 16 along x from x = 0 (the padded
// layout's blocks), unsigned 16-bit mantissas.
inline void quantise_model(int nx, int ny, int nz, std::vector<float>& dense) {
  for (int64_t row = 0; row < int64_t(ny) * nz; ++row)
    for (int x0 = 0; x0 < nx; x0 += kBlock) {
      float* v = dense.data() + row * nx + x0;
      const int n = nx - x0 < kBlock ? nx - x0 : kBlock;
      uint32_t m = 0;
      for (int i = 0; i < n; ++i) m = m > magnitude_bits(v[i]) ? m : magnitude_bits(v[i]);
      const int e = block_exponent(m);
      for (int i = 0; i < n; ++i) v[i] = decode_unsigned(encode_unsigned(v[i], e), e);
    }
}

// Bytes of one bfp16 field on the device: an int16 per element and a byte per block.
constexpr int64_t field_bytes(const GridLayout& g) { return g.size * 2 + g.size / kBlock; }

} // namespace rtm::bfp16
