// The backward sweep of reverse time migration (docs/rtm.md, section 5): imaging every k-th step
// with weight k against imaging every step, on a flat reflector and on a salt body; the
// automatic interval; and step_both (the fused call) against the separate calls on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "solvers/contracts/errors.h"
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
// the same data in the same layers, so the layers' echoes cancel; the C-PML's scalar CPU passes
// would triple the runs.
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
  static const Survey s = [] {
    Survey s{"flat reflector", {}, {}, {}};
    const ModelShape shape{36, 16, 32, 10, 10, 10};
    s.truth = layered_model(shape, {200}, {2000, 2800});
    s.migration = constant_model(shape, 2000);
    s.shots = model_line(s.truth, 18, 0.35);
    return s;
  }();
  return s;
}

// A salt body in a gradient (rtm generate-model --type salt), migrated in the truth smoothed by
// nothing but its gradient: the background without the body.
const Survey& salt() {
  static const Survey s = [] {
    Survey s{"salt", {}, {}, {}};
    const ModelShape shape{40, 16, 36, 10, 10, 10};
    s.truth = salt_model(shape, 1500, 3000, 4500);
    s.migration = salt_model(shape, 1500, 3000, 3000); // the body at the surrounding velocity
    s.shots = model_line(s.truth, 15, 0.45);
    return s;
  }();
  return s;
}

MigrationResult migrate(const Survey& s, int imaging_interval, bool fused = true) {
  MigrationParams params;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = kLayerCells;
  params.imaging_interval = imaging_interval;
  params.fused_backward = fused;
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

} // namespace
} // namespace rtm
