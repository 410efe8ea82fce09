// Block floating point storage (solvers/contracts/bfp16.h), on the CPU: the codec the bfp16 GPU
// kernel compiles (the same functions, __host__ __device__), its error bound, and the CPU twin of a
// bfp16 run (tests/support/bfp16_emulation.h) on the bench's point workload.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "solvers/contracts/bfp16.h"
#include "tests/support/bfp16_emulation.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

// Every stored value is within 2^-15 of its block's largest magnitude (the header's bound: half a
// mantissa step, 2^(e-16), with max >= 2^(e-1); or, where a value just below 2^e clamps to 32767,
// less than 2^(e-15) with max close to 2^e), at every amplitude from 1e-30 to 1e30.
TEST(Bfp16Codec, ErrorIsAtMostTwoToTheMinus15OfTheBlockMaximum) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-100, 100);
  for (int trial = 0; trial < 20000; ++trial) {
    const float amplitude = std::ldexp(1.0f, exponent(rng));
    float v[bfp16::kBlock];
    // Some blocks with one large value among small ones, some uniform.
    for (float& x : v) x = unit(rng) * amplitude * (trial % 2 ? 1.0f : 1e-3f);
    v[trial % bfp16::kBlock] = unit(rng) * amplitude;
    int16_t q[bfp16::kBlock];
    const int e = bfp16::encode_block(v, bfp16::kBlock, q);
    float max = 0;
    for (float x : v) max = std::max(max, std::fabs(x));
    ASSERT_LT(max, std::ldexp(1.0f, e));
    ASSERT_GE(max, std::ldexp(1.0f, e - 1));
    for (int i = 0; i < bfp16::kBlock; ++i) {
      const float d = bfp16::decode(q[i], e);
      ASSERT_LE(std::fabs(d - v[i]), std::ldexp(max, -15)) << v[i] << " in a block of max " << max;
      // Round to nearest: within half a step unless clamped at the top.
      if (std::abs(int(q[i])) < bfp16::kMantissaMax) {
        ASSERT_LE(std::fabs(d - v[i]), std::ldexp(1.0f, e - 16)) << v[i];
      }
    }
  }
}

TEST(Bfp16Codec, ClampsRoundsToEvenAndIsIdempotent) {
  // Just below 2^0: rounds to 2^15, clamped to 32767.
  EXPECT_EQ(bfp16::encode(std::nextafter(1.0f, 0.0f), 0), bfp16::kMantissaMax);
  EXPECT_EQ(bfp16::encode(-std::nextafter(1.0f, 0.0f), 0), -bfp16::kMantissaMax);
  // Ties to even: 2.5 and 3.5 steps.
  EXPECT_EQ(bfp16::encode(std::ldexp(2.5f, -15), 0), 2);
  EXPECT_EQ(bfp16::encode(std::ldexp(3.5f, -15), 0), 4);
  // A decoded block encodes to itself.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int trial = 0; trial < 1000; ++trial) {
    float v[bfp16::kBlock], d[bfp16::kBlock];
    for (float& x : v) x = unit(rng) * 1e-3f;
    int16_t q[bfp16::kBlock], q2[bfp16::kBlock];
    const int e = bfp16::encode_block(v, bfp16::kBlock, q);
    for (int i = 0; i < bfp16::kBlock; ++i) d[i] = bfp16::decode(q[i], e);
    ASSERT_EQ(bfp16::encode_block(d, bfp16::kBlock, q2), e);
    for (int i = 0; i < bfp16::kBlock; ++i) ASSERT_EQ(q2[i], q[i]);
  }
}

TEST(Bfp16Codec, ZerosStayZeroAndNonFiniteBlocksDecodeAsNan) {
  float zeros[bfp16::kBlock] = {};
  int16_t q[bfp16::kBlock];
  EXPECT_EQ(bfp16::encode_block(zeros, bfp16::kBlock, q), bfp16::kMinExponent);
  for (int16_t m : q) EXPECT_EQ(bfp16::decode(m, bfp16::kMinExponent), 0.0f);
  // Subnormal magnitudes flush to zero.
  float tiny[bfp16::kBlock] = {std::numeric_limits<float>::denorm_min()};
  EXPECT_EQ(bfp16::decode(q[0], bfp16::encode_block(tiny, bfp16::kBlock, q)), 0.0f);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::ldexp(1.0f, 127)}) {
    float v[bfp16::kBlock] = {1.0f, bad, 2.0f};
    const int e = bfp16::encode_block(v, bfp16::kBlock, q);
    EXPECT_EQ(e, bfp16::kNonFinite) << bad;
    for (int i = 0; i < bfp16::kBlock; ++i) EXPECT_TRUE(std::isnan(bfp16::decode(q[i], e))) << bad;
  }
  // The largest finite exponent still decodes a finite value.
  float big[bfp16::kBlock] = {std::ldexp(1.5f, 125)};
  const int e = bfp16::encode_block(big, bfp16::kBlock, q);
  EXPECT_EQ(e, 126);
  EXPECT_EQ(bfp16::decode(q[0], e), big[0]);
}

// The model's unsigned variant (bfp16_model16): 16 significant bits for the block's largest
// value, every value within half a step, 2^(e-17) <= 2^-16 of the block's largest, negatives
// clamped to zero; rows blocked from x = 0.
TEST(Bfp16Codec, UnsignedModelKeepsSixteenBits) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> model(0.05f, 1.0f);
  const int nx = 37, ny = 3, nz = 2;
  std::vector<float> v(size_t(nx) * ny * nz);
  for (float& x : v) x = model(rng) * 16.0f;
  std::vector<float> q = v;
  bfp16::quantise_model(nx, ny, nz, q);
  for (int64_t row = 0; row < int64_t(ny) * nz; ++row)
    for (int x0 = 0; x0 < nx; x0 += bfp16::kBlock) {
      float max = 0;
      for (int x = x0; x < std::min(nx, x0 + bfp16::kBlock); ++x) max = std::max(max, v[size_t(row * nx + x)]);
      for (int x = x0; x < std::min(nx, x0 + bfp16::kBlock); ++x) {
        const size_t c = size_t(row * nx + x);
        ASSERT_LE(std::fabs(q[c] - v[c]), std::ldexp(max, -16)) << v[c];
      }
    }
  EXPECT_EQ(bfp16::encode_unsigned(-1.0f, 1), 0);
  EXPECT_EQ(bfp16::encode_unsigned(std::nextafter(2.0f, 0.0f), 1), bfp16::kUnsignedMantissaMax);
}

// Blocks are the 16-element runs of a padded row (index(0, j, k) is a multiple of 32), the
// interior is kept and every other element becomes zero.
TEST(Bfp16Codec, QuantiseFieldKeepsTheInteriorOnly) {
  const GridLayout g = make_layout(37, 5, 3);
  ASSERT_EQ(g.index(0, 0, 0) % 32, 0);
  std::vector<float> f(size_t(g.size), 0.5f);
  bfp16::quantise_field(g, f);
  double sum = 0;
  for (float v : f) sum += v;
  EXPECT_DOUBLE_EQ(sum, 0.5 * double(g.interior_cells())); // 0.5 is exact; the rest zero
  EXPECT_EQ(f[size_t(g.index(-1, 0, 0))], 0.0f);
  EXPECT_EQ(f[size_t(g.index(37, 0, 0))], 0.0f);
  EXPECT_EQ(f[size_t(g.index(36, 4, 2))], 0.5f);
}

// The CPU twin of a bfp16 run against float32 on the point workload (the tuning log's emulation,
// with an exponent per 16 cells and a float32 v2dt2): after 200 steps on 32^3 the error is far
// below the 1e-3 goal, and not zero (the storage does round). Figures: docs/variants.md.
// The float32 run both emulation tests compare with, made once.
const std::vector<float>& float32_point_run() {
  static const std::vector<float> f32 =
      test::run_point_workload_on_cpu(test::bfp16_point_workload(32, 200), false);
  return f32;
}

TEST(Bfp16Emulation, PointWorkloadStaysWithinTheGoal) {
  const test::PointWorkload w = test::bfp16_point_workload(32, 200);
  const std::vector<float>& f32 = float32_point_run();
  const std::vector<float> bfp = test::run_point_workload_on_cpu(w, true);
  const double error = interior_relative_l2(w.setup.layout, bfp, f32);
  std::printf("bfp16 emulation, 32^3, 200 point-source steps: relative L2 %.3e\n", error);
  EXPECT_LT(error, 1e-3);
  EXPECT_GT(error, 1e-6);
}

// The same with v2dt2 in 16 bits (bfp16_model16): the model's rounding adds a velocity error that
// grows with the steps (docs/variants.md), small at this step count.
TEST(Bfp16Emulation, SixteenBitModelStaysWithinTheGoal) {
  const test::PointWorkload w = test::bfp16_point_workload(32, 200);
  test::PointWorkload model16 = w;
  bfp16::quantise_model(32, 32, 32, model16.setup.v2dt2);
  EXPECT_NE(model16.setup.v2dt2[0], w.setup.v2dt2[0]) << "the bench's v2dt2 is not a 16-bit value";
  const std::vector<float>& f32 = float32_point_run();
  const std::vector<float> bfp = test::run_point_workload_on_cpu(model16, true);
  const double error = interior_relative_l2(w.setup.layout, bfp, f32);
  std::printf("bfp16 with a 16-bit v2dt2, 32^3, 200 point-source steps: relative L2 %.3e\n", error);
  EXPECT_LT(error, 1e-3);
  EXPECT_GT(error, 1e-6);
}

} // namespace
} // namespace rtm
