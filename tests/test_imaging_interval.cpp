// The backward sweep of reverse time migration (docs/rtm.md, sections 4 and 5): imaging every
// k-th step with weight k against imaging every step, on a flat reflector and on a salt body; the
// automatic interval; step_both (the fused call) against the separate calls on the CPU; the 16-bit
// boundary ring (its codec, its store, and the image it gives against the float32 ring).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/ring_codec.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"

namespace rtm {
namespace {

struct Survey {
  const char* name;
  VelocityModel truth, migration;
  ShotFile shots;
};

// Absorbing layers of these runs: a thin sponge. The comparisons are between two migrations of
// the same data in the same layers, so the layers' echoes cancel; with the C-PML, whose cost on
// the CPU is about the step's again per axis whose layers hold a cell (docs/variants.md, "The
// C-PML on the CPU"), these grids of mostly layers took 3.4 times as long (11.4 CPU-s against 3.3).
constexpr int kLayerCells = 10;

// One shot over the centre, a receiver on every cell of the centre inline.
ShotFile model_line(const VelocityModel& truth, double f0, double record_time) {
  ModelingParams params;
  params.backend.backend = "cpu";
  params.wavelet.f0 = f0;
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = kLayerCells;
  params.record_time = record_time;
  const Acquisition acq = default_line_survey(truth, 1, 30.0, 1);
  std::ostringstream log;
  return model_shots(truth, acq, params, log);
}

// A flat reflector as in test_rtm.cpp, smaller: 2000 over 2800 m/s at 200 m, migrated in 2000 m/s.
const Survey& flat_reflector() {
  static const Survey survey = [] {
    Survey s{"flat reflector", {}, {}, {}};
    const ModelShape shape{36, 16, 32, 10, 10, 10};
    s.truth = layered_model(shape, {200}, {2000, 2800});
    s.migration = constant_model(shape, 2000);
    s.shots = model_line(s.truth, 18, 0.35);
    return s;
  }();
  return survey;
}

// A salt body in a gradient (rtm generate-model --type salt), migrated in the truth smoothed by
// nothing but its gradient: the background without the body.
const Survey& salt() {
  static const Survey survey = [] {
    Survey s{"salt", {}, {}, {}};
    const ModelShape shape{40, 16, 36, 10, 10, 10};
    s.truth = salt_model(shape, 1500, 3000, 4500);
    s.migration = salt_model(shape, 1500, 3000, 3000); // the body at the surrounding velocity
    s.shots = model_line(s.truth, 15, 0.45);
    return s;
  }();
  return survey;
}

// Three sweeps (boundary saving) unless `snapshots` asks for two with snapshots in that precision.
MigrationResult migrate(const Survey& s, int imaging_interval, bool fused = true,
                        RingPrecision ring = RingPrecision::full, const RingPrecision* snapshots = nullptr) {
  MigrationParams params;
  params.reconstruction = snapshots ? Reconstruction::snapshots : Reconstruction::boundary;
  if (snapshots) params.snapshot_precision = *snapshots;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = kLayerCells;
  params.imaging_interval = imaging_interval;
  params.fused_backward = fused;
  params.ring_precision = ring;
  std::ostringstream log;
  return migrate_shots(s.migration, s.shots, params, log);
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& reference) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - reference[i]) * (double(a[i]) - reference[i]);
    norm += double(reference[i]) * reference[i];
  }
  return std::sqrt(diff / norm);
}

class ImagingInterval : public ::testing::TestWithParam<int> {};

// The automatic interval images within 1% (relative L2, after the normalisation and the Laplacian
// filter) of imaging every step; the raw image and the illumination keep their amplitudes (weight
// k) to a few per cent. With RTM_IMAGING_INTERVAL_SWEEP=1 it also prints the error of every
// interval up to twice the Nyquist one (docs/rtm.md's table): where aliasing sets in.
TEST_P(ImagingInterval, AutomaticIntervalMatchesEveryStepWithinOnePercent) {
  const Survey& s = GetParam() == 0 ? flat_reflector() : salt();
  const int k = automatic_imaging_interval(s.shots.dt, s.shots.f0);
  const int nyquist = snapshot_interval(s.shots.dt, s.shots.f0);
  ASSERT_GT(k, 1) << "the test must image less often than every step";
  const MigrationResult every = migrate(s, 1);
  const MigrationResult sampled = migrate(s, 0);
  const double image_error = relative_l2(sampled.image, every.image);
  std::printf("%s: dt %.3g ms, f0 %.0f Hz, Nyquist interval of 2.5 f0 %d, automatic k = %d: "
              "final image %.2e, raw %.2e, illumination %.2e (relative L2)\n",
              s.name, s.shots.dt * 1e3, s.shots.f0, nyquist, k, image_error,
              relative_l2(sampled.raw_image, every.raw_image),
              relative_l2(sampled.illumination, every.illumination));
  EXPECT_LT(image_error, 0.01);
  EXPECT_LT(relative_l2(sampled.raw_image, every.raw_image), 0.05);
  EXPECT_LT(relative_l2(sampled.illumination, every.illumination), 0.05);
  if (std::getenv("RTM_IMAGING_INTERVAL_SWEEP"))
    for (int other = 2; other <= 2 * nyquist; ++other) {
      const MigrationResult coarse = migrate(s, other);
      std::printf("%s: k = %d (%.2f x the Nyquist interval): final image %.2e, raw %.2e, "
                  "illumination %.2e (relative L2)\n",
                  s.name, other, other * 2 * 2.5 * s.shots.f0 * s.shots.dt,
                  relative_l2(coarse.image, every.image),
                  relative_l2(coarse.raw_image, every.raw_image),
                  relative_l2(coarse.illumination, every.illumination));
    }
}

// Two sweeps (the source field's snapshots at the imaging steps) image within 1e-3 (relative L2,
// after the normalisation and the Laplacian filter) of three (boundary saving with a float32
// ring) at the same interval with int16 snapshots, the default, within 1e-5 with float32 ones: the
// same sum of the same products, but for the codec's rounding of S (docs/rtm.md, section 4).
// float16 keeps 11 bits of every value where int16 keeps 15 of each block's largest: about ten
// times the error, held to 5e-3.
TEST_P(ImagingInterval, TwoSweepImageWithinOnePerMilleOfThreeSweep) {
  const Survey& s = GetParam() == 0 ? flat_reflector() : salt();
  const MigrationResult three = migrate(s, 0);
  ASSERT_EQ(three.reconstruction, Reconstruction::boundary);
  for (const RingPrecision precision : {RingPrecision::full, RingPrecision::half16, RingPrecision::fixed16}) {
    const MigrationResult two = migrate(s, 0, true, RingPrecision::full, &precision);
    ASSERT_EQ(two.reconstruction, Reconstruction::snapshots);
    const double image_error = relative_l2(two.image, three.image);
    const double raw_error = relative_l2(two.raw_image, three.raw_image);
    const char* name = precision == RingPrecision::full ? "float32"
                       : precision == RingPrecision::half16 ? "float16" : "int16";
    std::printf("%s: %s snapshots against boundary saving: image %.3g, raw image %.3g, "
                "illumination %.3g (relative L2)\n", s.name, name, image_error, raw_error,
                relative_l2(two.illumination, three.illumination));
    const double bar = precision == RingPrecision::full     ? 1e-5
                       : precision == RingPrecision::fixed16 ? 1e-3
                                                             : 5e-3;
    EXPECT_LE(image_error, bar) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(FlatReflectorAndSalt, ImagingInterval, ::testing::Values(0, 1),
                         [](const auto& param_info) { return param_info.param == 0 ? "FlatReflector" : "Salt"; });

TEST(ImagingInterval, AutomaticIntervalFormula) {
  // floor(0.5 / (2 x 2.5 f0 x dt)): f0 = 10 Hz, dt = 1 ms -> floor(10) = 10.
  EXPECT_EQ(automatic_imaging_interval(1e-3, 10), int(std::floor(kImagingIntervalSafety * 20 + 1e-9)));
  EXPECT_EQ(automatic_imaging_interval(1e-3, 400), 1);
  MigrationParams params;
  EXPECT_EQ(imaging_interval(params, 1e-3, 10), automatic_imaging_interval(1e-3, 10));
  params.imaging_interval = 7;
  EXPECT_EQ(imaging_interval(params, 1e-3, 10), 7);
  params.imaging_interval = -1;
  EXPECT_THROW(imaging_interval(params, 1e-3, 10), InputError);
}

// On the CPU step_both is the three separate calls: the same bits, whatever the interval.
TEST(ImagingInterval, StepBothIsTheSeparateCallsOnTheCpu) {
  const Survey& s = flat_reflector();
  for (int k : {3}) {
    const MigrationResult fused = migrate(s, k, true);
    const MigrationResult separate = migrate(s, k, false);
    EXPECT_EQ(fused.raw_image, separate.raw_image) << "k = " << k;
    EXPECT_EQ(fused.illumination, separate.illumination) << "k = " << k;
  }
}

// ---- the 16-bit boundary ring ------------------------------------------------------------------

// The codecs: values of every magnitude in one block come back within the 16-bit rounding of the
// block's scale: half16 2^-11 of the value (so of the block's largest), fixed16 2^-15 of the
// block's largest; a quiet block keeps its own scale.
TEST(HalfRing, StoreRestoresEachBlockWithinItsRounding) {
  const test::RtmProblem p = test::layered_problem(30, 20, 26, 8, 4);
  CpuShotFields fields(make_propagator_setup(p.sim));
  Wavefield& w = fields.source();
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> prev(size_t(w.layout().size), 0.0f), cur(prev.size());
  // Magnitudes from 1e-30 to 1e3 across the grid: blocks of very different scales.
  for (size_t c = 0; c < cur.size(); ++c) cur[c] = u(gen) * std::pow(10.0f, float(c % 34) - 30.0f);
  const std::vector<int64_t> ring = boundary_ring_indices(w.layout(), p.box);
  for (const RingPrecision precision : {RingPrecision::half16, RingPrecision::fixed16}) {
    w.set_state(prev, cur);
    const std::unique_ptr<BoundaryStore> store = w.make_boundary_store(p.box, 2, precision);
    store->save(1);
    std::vector<float> zero(cur.size(), 0.0f);
    w.set_state(prev, zero);
    store->restore(1);
    std::vector<float> back_prev, back;
    w.get_state(back_prev, back);
    double worst = 0;
    for (size_t b0 = 0; b0 < ring.size(); b0 += kRingBlock) {
      const size_t b1 = std::min(ring.size(), b0 + kRingBlock);
      float largest = 0;
      for (size_t r = b0; r < b1; ++r) largest = std::max(largest, std::abs(cur[size_t(ring[r])]));
      for (size_t r = b0; r < b1; ++r) {
        const size_t c = size_t(ring[r]);
        worst = std::max(worst, std::abs(double(back[c]) - cur[c]) / largest);
      }
    }
    const bool half = precision == RingPrecision::half16;
    const double bound = std::ldexp(1.0, half ? -11 : -15);
    std::printf("%s ring: worst error %.3g of the block's largest value (bound %.3g)\n",
                half ? "float16" : "int16", worst, bound);
    EXPECT_LE(worst, bound);
    EXPECT_GT(worst, 0.0) << "a 16-bit ring rounds";
    // Cells outside the ring are not touched by restore.
    for (size_t c = 0; c < back.size(); ++c) {
      if (!std::binary_search(ring.begin(), ring.end(), int64_t(c))) {
        ASSERT_EQ(back[c], 0.0f) << c;
      }
    }
  }
  EXPECT_EQ(ring_step_bytes(1000, RingPrecision::half16, 4), 2000 + 4 * 4);
  EXPECT_EQ(ring_step_bytes(1001, RingPrecision::fixed16, 4), 2004 + 4 * 4);
  EXPECT_EQ(ring_step_bytes(1000, RingPrecision::half16, 2), 2000) << "a half field keeps its ring";
  EXPECT_EQ(ring_step_bytes(1000, RingPrecision::full, 4), 4000);
}

// The CPU store keeps what the contract's codec makes of the ring as one row (blocks of kRingBlock
// cells from the ring's start), bit for bit: the CUDA store is checked against the CPU one, so
// this pins both to solvers/contracts/ring_codec.h. A ring of several of the store's chunks with a
// partial last block.
TEST(HalfRing, CpuStoreHoldsTheCodecsBitsForTheRingAsOneRow) {
  const test::RtmProblem p = test::layered_problem(60, 40, 50, 8, 4);
  CpuShotFields fields(make_propagator_setup(p.sim));
  Wavefield& w = fields.source();
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> prev(size_t(w.layout().size), 0.0f), cur(prev.size());
  for (size_t c = 0; c < cur.size(); ++c) cur[c] = u(gen) * std::pow(10.0f, float(c % 37) - 30.0f);
  const std::vector<int64_t> ring = boundary_ring_indices(w.layout(), p.box);
  ASSERT_GT(ring.size(), size_t(2 * 64 * kRingBlock)) << "the ring should span several chunks";
  ASSERT_NE(ring.size() % kRingBlock, 0u) << "the ring should end in a partial block";
  std::vector<float> values(ring.size());
  for (size_t r = 0; r < ring.size(); ++r) values[r] = cur[size_t(ring[r])];
  for (const RingPrecision precision :
       {RingPrecision::full, RingPrecision::half16, RingPrecision::fixed16}) {
    const int64_t n = int64_t(ring.size());
    std::vector<unsigned char> coded(size_t(coded_rows_bytes(n, 1, precision)));
    std::vector<float> expected(ring.size());
    encode_rows(values.data(), n, 1, precision, coded.data());
    decode_rows(coded.data(), n, 1, precision, expected.data());
    w.set_state(prev, cur);
    const std::unique_ptr<BoundaryStore> store = w.make_boundary_store(p.box, 3, precision);
    store->save(2);
    w.set_state(prev, std::vector<float>(cur.size(), 0.0f));
    store->restore(2);
    std::vector<float> back_prev, back;
    w.get_state(back_prev, back);
    size_t differ = 0, rounded = 0;
    for (size_t r = 0; r < ring.size(); ++r) {
      uint32_t a = 0, b = 0;
      std::memcpy(&a, &back[size_t(ring[r])], 4);
      std::memcpy(&b, &expected[r], 4);
      differ += a != b;
      rounded += expected[r] != values[r];
    }
    EXPECT_EQ(differ, 0u) << "precision " << int(precision) << ", " << ring.size() << " ring cells";
    EXPECT_EQ(rounded > 0, precision != RingPrecision::full) << "precision " << int(precision);
  }
}

// The image with a 16-bit ring against the float32 ring's (automatic interval), relative L2 after
// normalisation and the Laplacian filter: int16 below the 1e-3 target on both models; float16
// (11 significant bits against int16's 15 at a block's top) stated, below 3e-3.
TEST(HalfRing, ImageAgainstTheFloatRing) {
  for (const Survey* s : {&flat_reflector(), &salt()}) {
    const MigrationResult full = migrate(*s, 0, true, RingPrecision::full);
    for (const RingPrecision precision : {RingPrecision::fixed16, RingPrecision::half16}) {
      const MigrationResult coded = migrate(*s, 0, true, precision);
      const double e = relative_l2(coded.image, full.image);
      const bool fixed = precision == RingPrecision::fixed16;
      std::printf("%s: %s ring vs float32 ring: final image %.2e, raw %.2e, illumination %.2e "
                  "(relative L2); ring memory %.1f%% of float32's\n",
                  s->name, fixed ? "int16" : "float16", e,
                  relative_l2(coded.raw_image, full.raw_image),
                  relative_l2(coded.illumination, full.illumination),
                  100.0 * double(coded.memory.boundary_half_bytes()) /
                      double(full.memory.boundary_bytes()));
      EXPECT_LT(e, fixed ? 1e-3 : 3e-3) << s->name;
      EXPECT_GT(e, 0.0) << s->name << ": the 16-bit ring was not used";
    }
  }
}

} // namespace
} // namespace rtm
