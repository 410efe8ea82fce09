// The 16-bit boundary rings of reverse time migration (docs/rtm.md, section 4, "Half the
// memory"): each step's ring, in the store's cell order, in blocks of kRingBlock cells; a block
// keeps one exponent E (its largest |value| m < 2^E, from frexp) and each value scaled by
// 2^(15 - E) (so |scaled| < 2^15), then either
//   half16:  the IEEE half nearest to it (error <= 2^-11 of the value: 11 significant bits), or
//   fixed16: the int16 nearest to it (error <= 2^(E-16) <= 2^-15 of the block's largest value).
// Restoring scales back by 2^(E - 15). Scaling by a power of two is exact, so the rounding to 16
// bits is the only error.
//
// Plain C++ (the CPU store encodes with it; the CUDA store does the same operations with
// __float2half_rn and __float2int_rn, which round to nearest even as float_to_half and
// std::nearbyint do, so both stores hold the same bits).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace rtm {

// How a boundary store keeps its rings.
enum class RingPrecision {
  full,   // the field's own storage: restore gives back exactly what was saved
  half16,  // 16-bit floats with a power-of-two scale per block of kRingBlock cells
  fixed16, // 16-bit integers with a power-of-two scale per block of kRingBlock cells
           // (both for float fields; a field stored in half keeps its own half ring)
};

constexpr int kRingBlock = 256;    // ring cells per scale
constexpr int kRingHalfBits = 15;  // scaled values stay below 2^15

// The halves of a 16-bit ring, padded to 4 bytes: its block exponents (int32) follow them.
inline int64_t ring_half_bytes(int64_t cells) { return (cells * 2 + 3) / 4 * 4; }

// Bytes per step of a ring of `cells` cells.
inline int64_t ring_step_bytes(int64_t cells, RingPrecision precision, int64_t element_bytes) {
  if (precision == RingPrecision::full || element_bytes <= 2) return cells * element_bytes;
  // half16 and fixed16: 2 bytes a cell and an exponent a block.
  const int64_t blocks = (cells + kRingBlock - 1) / kRingBlock;
  return ring_half_bytes(cells) + blocks * int64_t(sizeof(int32_t));
}

// The block's exponent: the smallest E with max_abs < 2^E (0 for an all-zero or non-finite block).
inline int32_t ring_block_exponent(float max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return 0;
  int e = 0;
  std::frexp(max_abs, &e);
  return e;
}

// IEEE binary16, round to nearest even (what __float2half_rn does), and back.
inline uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {                                 // below 2^-14: subnormal half or zero
    if (abs < 0x33000000u) return uint16_t(sign);          // below half the smallest subnormal
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    // value = mantissa x 2^(e - 150) = k x 2^-24 with k = mantissa x 2^(e - 126): drop 126 - e bits.
    const int drop = 126 - int(abs >> 23); // 14 .. 24
    uint32_t half = mantissa >> drop;
    const uint32_t rest = mantissa & ((1u << drop) - 1u), halfway = 1u << (drop - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10)); // rebias the exponent 127 -> 15
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half; // may carry into the exponent
  return uint16_t(sign | half);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(float(mantissa), -24);
  else if (exponent == 31) magnitude = mantissa ? NAN : INFINITY;
  else magnitude = std::ldexp(float(mantissa | 0x400u), int(exponent) - 25);
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

// A value of a block of exponent e in 16 bits, and back.
inline uint16_t encode_ring_value(float value, int32_t e, RingPrecision precision) {
  const float scaled = std::ldexp(value, kRingHalfBits - e);
  if (precision == RingPrecision::half16) return float_to_half(scaled);
  const float q = std::fmin(32767.0f, std::fmax(-32767.0f, std::nearbyint(scaled)));
  return uint16_t(int16_t(q));
}

inline float decode_ring_value(uint16_t code, int32_t e, RingPrecision precision) {
  const float scaled =
      precision == RingPrecision::half16 ? half_to_float(code) : float(int16_t(code));
  return std::ldexp(scaled, e - kRingHalfBits);
}

} // namespace rtm

namespace rtm {

// A box's values (dense [z][y][x]: `rows` rows of `row` cells) coded row by row: each row in blocks
// of kRingBlock cells from its start (its last block shorter), so a block never spans two rows and
// a box split into slabs of whole planes codes each cell as the whole box does. Their 16-bit values,
// then one int32 exponent per block (float32: the values themselves).
inline int64_t coded_row_blocks(int64_t row, int64_t rows) {
  return rows * ((row + kRingBlock - 1) / kRingBlock);
}
inline int64_t coded_rows_bytes(int64_t row, int64_t rows, RingPrecision precision) {
  if (precision == RingPrecision::full) return row * rows * int64_t(sizeof(float));
  return ring_half_bytes(row * rows) + coded_row_blocks(row, rows) * int64_t(sizeof(int32_t));
}

// The values coded into `out` (coded_rows_bytes bytes), as the 16-bit boundary rings code theirs
// and the CUDA snapshot store codes its slots (so both hold the same bits).
inline void encode_rows(const float* values, int64_t row, int64_t rows, RingPrecision precision,
                        void* out) {
  if (precision == RingPrecision::full) {
    std::memcpy(out, values, size_t(row * rows) * sizeof(float));
    return;
  }
  auto* codes = static_cast<uint16_t*>(out);
  auto* exponents = reinterpret_cast<int32_t*>(static_cast<char*>(out) + ring_half_bytes(row * rows));
  const int64_t per_row = (row + kRingBlock - 1) / kRingBlock;
  for (int64_t b = 0; b < rows * per_row; ++b) {
    const int64_t r = b / per_row, i0 = (b - r * per_row) * kRingBlock;
    const int64_t c0 = r * row + i0, c1 = r * row + (i0 + kRingBlock < row ? i0 + kRingBlock : row);
    float largest = 0.0f;
    for (int64_t c = c0; c < c1; ++c) largest = std::fmax(largest, std::fabs(values[c]));
    const int32_t e = ring_block_exponent(largest);
    exponents[b] = e;
    for (int64_t c = c0; c < c1; ++c) codes[c] = encode_ring_value(values[c], e, precision);
  }
}

// The inverse of encode_rows.
inline void decode_rows(const void* in, int64_t row, int64_t rows, RingPrecision precision,
                        float* values) {
  if (precision == RingPrecision::full) {
    std::memcpy(values, in, size_t(row * rows) * sizeof(float));
    return;
  }
  const auto* codes = static_cast<const uint16_t*>(in);
  const auto* exponents =
      reinterpret_cast<const int32_t*>(static_cast<const char*>(in) + ring_half_bytes(row * rows));
  const int64_t per_row = (row + kRingBlock - 1) / kRingBlock;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < row; ++i)
      values[r * row + i] =
          decode_ring_value(codes[r * row + i], exponents[r * per_row + i / kRingBlock], precision);
}

} // namespace rtm
