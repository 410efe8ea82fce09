// Time-dispersion transforms (solvers/drivers/time_dispersion.h) and the accuracy check that counts the
// time step (solvers/drivers/numerics.h): the operators themselves, then point-source runs through
// model_shots against the analytic solution w(t - r/v) / (4 pi r).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/time_dispersion.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

// A Ricker of f0 dt = 0.03 (about the default dt at 5 points per wavelength) in the middle of nt.
std::vector<double> centred_ricker(int nt, double f0_dt = 0.03) {
  std::vector<double> x(static_cast<size_t>(nt));
  for (int n = 0; n < nt; ++n) x[size_t(n)] = ricker(n, f0_dt, 0.5 * nt);
  return x;
}

// Frequency (radians per sample) where |X(theta)| peaks, to 1e-5.
double spectral_peak(const std::vector<double>& x) {
  auto magnitude = [&](double theta) {
    double re = 0, im = 0;
    for (size_t n = 0; n < x.size(); ++n) {
      re += x[n] * std::cos(theta * double(n));
      im -= x[n] * std::sin(theta * double(n));
    }
    return std::hypot(re, im);
  };
  double best = 0, best_value = -1;
  for (double theta = 0.01; theta < 3.0; theta += 1e-3)
    if (magnitude(theta) > best_value) best_value = magnitude(theta), best = theta;
  double lo = best - 1e-3, hi = best + 1e-3; // golden-section refinement
  for (int i = 0; i < 60; ++i) {
    const double a = lo + 0.382 * (hi - lo), b = lo + 0.618 * (hi - lo);
    (magnitude(a) < magnitude(b) ? lo : hi) = magnitude(a) < magnitude(b) ? a : b;
  }
  return 0.5 * (lo + hi);
}

// The transforms move a narrow-band signal's frequency exactly as the time stepping does:
// add (FTDT) takes carrier theta to 2 asin(theta/2), remove (ITDT) to 2 sin(theta/2).
TEST(TimeDispersion, MovesACarrierWhereTheTimeSteppingDoes) {
  const int nt = 1024;
  const double carrier = 1.0, sigma = 80;
  std::vector<double> x(static_cast<size_t>(nt));
  for (int n = 0; n < nt; ++n) {
    const double s = (n - 0.5 * nt) / sigma;
    x[size_t(n)] = std::exp(-s * s) * std::cos(carrier * (n - 0.5 * nt));
  }
  EXPECT_NEAR(spectral_peak(x), carrier, 2e-4);
  EXPECT_NEAR(spectral_peak(time_dispersion_direct(x, TimeDispersion::add)),
              2 * std::asin(carrier / 2), 2e-4);
  EXPECT_NEAR(spectral_peak(time_dispersion_direct(x, TimeDispersion::remove)),
              2 * std::sin(carrier / 2), 2e-4);
}

// Each undoes the other for a signal inside the band, and the matrix equals the definition.
TEST(TimeDispersion, RoundTripAndMatrixEqualsDirectEvaluation) {
  const int nt = 400;
  const std::vector<double> x = centred_ricker(nt);
  const std::vector<double> there = time_dispersion_direct(x, TimeDispersion::add);
  const std::vector<double> back = time_dispersion_direct(there, TimeDispersion::remove);
  EXPECT_GT(relative_l2(there, x), 1e-3); // the transform does something
  EXPECT_LT(relative_l2(back, x), 1e-6);
  EXPECT_LT(relative_l2(time_dispersion_direct(time_dispersion_direct(x, TimeDispersion::remove),
                                               TimeDispersion::add),
                        x),
            1e-6);

  for (TimeDispersion direction : {TimeDispersion::add, TimeDispersion::remove}) {
    std::vector<float> traces; // two traces: the Ricker and a shifted, scaled copy
    for (int copy = 0; copy < 2; ++copy)
      for (int n = 0; n < nt; ++n)
        traces.push_back(float((copy + 1) * x[size_t((n + 37 * copy) % nt)]));
    std::vector<float> transformed = traces;
    TimeDispersionTransform(nt, direction).apply(transformed);
    for (int copy = 0; copy < 2; ++copy) {
      const std::vector<double> input(traces.begin() + copy * nt, traces.begin() + (copy + 1) * nt);
      const std::vector<double> expected = time_dispersion_direct(input, direction);
      const std::vector<double> got(transformed.begin() + copy * nt,
                                    transformed.begin() + (copy + 1) * nt);
      EXPECT_LT(relative_l2(got, expected), 2e-6) << "copy " << copy;
    }
  }
  std::vector<float> ragged(size_t(nt) + 1);
  EXPECT_THROW(TimeDispersionTransform(nt, TimeDispersion::add).apply(ragged), std::invalid_argument);
}

// A point source in a homogeneous medium through model_shots; the receiver `cells` away on the x
// axis (the stencil's worst direction). The grid has no absorbing layers; its walls are just far
// enough that no wall reflection reaches the receiver before the record ends (asserted below).
struct PointRun {
  double error = 0;      // relative L2 against the analytic trace over the whole record
  std::string log;       // what model_shots printed
  double dt = 0, travel_time = 0;
  std::vector<double> modeled, exact;
};

PointRun point_source_run(double f0, int cells, double dt_fraction, bool transform) {
  const double v = 2000, h = 10;
  const double t0 = default_ricker_delay(f0), r = cells * h;
  const double record = t0 + r / v + 1.2 / f0; // the whole pulse arrives
  // A reflection's pulse starts (path / v + t0 - 1.2 / f0) after the record ends when its path
  // exceeds r + L. Mirror sources: behind the source 2 w_back + r, beyond the receiver
  // r + 2 w_front, sideways sqrt(r^2 + 4 w_side^2).
  const double L = 2.4 * v / f0;
  const int w_x = int(std::ceil(0.5 * L / h)) + 1;
  const int w_side = int(std::ceil(0.5 * std::sqrt((r + L) * (r + L) - r * r) / h)) + 1;
  const int nx = w_x + cells + w_x + 1, nyz = 2 * w_side + 1;
  for (double path : {2.0 * w_x * h + r, std::hypot(r, 2.0 * w_side * h)})
    EXPECT_GT(path / v + t0 - 1.2 / f0, record) << "the record would contain a wall reflection";
  const VelocityModel model = constant_model({nx, nyz, nyz, h, h, h}, v);
  const Position source{w_side * h, w_side * h, w_x * h};
  Acquisition acq;
  acq.sources = {source};
  acq.receivers = {{w_side * h, w_side * h, (w_x + cells) * h}};
  ModelingParams params;
  params.wavelet.f0 = f0;
  params.record_time = record;
  params.boundary.width = 0;
  params.dt = dt_fraction * kDefaultCflFraction * cfl_dt_limit(v, h, h, h);
  params.time_dispersion_transform = transform;
  std::ostringstream log;
  const ShotFile shots = model_shots(model, acq, params, log);
  PointRun run;
  run.log = log.str();
  run.dt = shots.dt;
  run.travel_time = record - t0;
  std::vector<double> modeled, exact;
  for (int t = 0; t < shots.nt; ++t) {
    modeled.push_back(shots.shots[0].data[size_t(t)]);
    exact.push_back(ricker(t * shots.dt - r / v, f0, t0) / (4 * M_PI * r));
  }
  run.error = relative_l2(modeled, exact);
  run.modeled = modeled;
  run.exact = exact;
  EXPECT_EQ(shots.time_dispersion_removed, transform);
  return run;
}

AccuracyCase case_of(double f0, const PointRun& run, bool transform) {
  return AccuracyCase{2000, 2000, f0, 10, 10, 10, run.dt, run.travel_time, transform};
}

// At the default dt, the transforms leave the spatial error alone. The spatial-only trace comes
// from Richardson extrapolation of runs at dt and dt/4 without the transforms (the time error goes
// as dt^2, so (16 p(dt/4) - p(dt)) / 15 cancels it): the transformed trace's error is that one's,
// and far below the error without the transforms.
TEST(TimeDispersion, AtTheDefaultDtOnlyTheSpatialErrorIsLeft) {
  const double f0 = 15; // 5.3 points per shortest wavelength at h = 10 m, v = 2000 m/s
  const int cells = 30;
  const PointRun plain = point_source_run(f0, cells, 1.0, false);
  const PointRun corrected = point_source_run(f0, cells, 1.0, true);
  const PointRun quarter_dt = point_source_run(f0, cells, 0.25, false);
  std::vector<double> spatial_only;
  for (size_t t = 0; t < plain.modeled.size(); ++t)
    spatial_only.push_back((16 * quarter_dt.modeled[4 * t] - plain.modeled[t]) / 15);
  const double spatial_error = relative_l2(spatial_only, plain.exact);
  std::printf("point source at %d cells, f0 %.0f Hz, default dt: error %.4f without the "
              "transforms, %.4f with them; %.4f at dt/4 without; spatial error alone (Richardson) "
              "%.4f\n",
              cells, f0, plain.error, corrected.error, quarter_dt.error, spatial_error);
  EXPECT_LT(corrected.error, 0.1 * plain.error);
  EXPECT_LT(corrected.error, quarter_dt.error);
  EXPECT_NEAR(corrected.error, spatial_error, 0.3 * spatial_error + 2e-4);
  EXPECT_LT(relative_l2(corrected.modeled, spatial_only), 0.1 * plain.error);
}

// The accuracy check: runs it accepts stay within 2% of the analytic trace at 40 cells, and runs
// just beyond the border get the warning, with and without the transforms. The border is the f0
// where the estimate reaches 2% (found by bisection on the same estimate model_shots uses).
TEST(AccuracyCheck, AcceptedRunsStayWithin2PercentAndJustBeyondIsWarned) {
  const int cells = 40;
  for (bool transform : {false, true}) {
    auto estimate = [&](double f0) {
      const double t0 = default_ricker_delay(f0);
      const double record = t0 + cells * 10 / 2000.0 + 1.2 / f0;
      const double dt = kDefaultCflFraction * cfl_dt_limit(2000, 10, 10, 10);
      return expected_trace_error({2000, 2000, f0, 10, 10, 10, dt, record - t0, transform});
    };
    double lo = 5, hi = 40;
    for (int i = 0; i < 40; ++i) (estimate(0.5 * (lo + hi)) <= kTraceErrorBound ? lo : hi) = 0.5 * (lo + hi);
    const double border = lo;
    const PointRun accepted = point_source_run(0.97 * border, cells, 1.0, transform);
    const PointRun beyond = point_source_run(1.03 * border, cells, 1.0, transform);
    std::printf("transforms %s: border f0 %.2f Hz; at 0.97x error %.4f (estimate %.4f), at 1.03x "
                "error %.4f (estimate %.4f)\n",
                transform ? "on" : "off", border, accepted.error,
                expected_trace_error(case_of(0.97 * border, accepted, transform)), beyond.error,
                expected_trace_error(case_of(1.03 * border, beyond, transform)));
    EXPECT_THAT(accepted.log, ::testing::Not(HasSubstr("expected trace error")));
    EXPECT_LT(accepted.error, kTraceErrorBound);
    EXPECT_THAT(beyond.log, HasSubstr("expected trace error"));
    // The estimate is not idly cautious: the border run is within a factor 2 of the bound.
    EXPECT_GT(accepted.error, 0.5 * kTraceErrorBound);
  }
}

// The warning names the error, the dt and the spacing that meet the bound, and those do.
TEST(AccuracyCheck, WarningGivesADtAndSpacingThatMeetTheBound) {
  AccuracyCase c{2000, 3000, 18, 10, 10, 10, 0.0, 0.6, false};
  c.dt = kDefaultCflFraction * cfl_dt_limit(c.vmax, 10, 10, 10);
  const std::string w = accuracy_warning(c);
  ASSERT_THAT(w, HasSubstr("expected trace error"));
  double dt = 0, h = 0;
  const size_t at_dt = w.find("--dt "), at_h = w.find("spacing <= ");
  ASSERT_NE(at_dt, std::string::npos) << w;
  ASSERT_NE(at_h, std::string::npos) << w;
  dt = std::atof(w.c_str() + at_dt + 5);
  h = std::atof(w.c_str() + at_h + 11);
  AccuracyCase with_dt = c;
  with_dt.dt = dt;
  EXPECT_LE(expected_trace_error(with_dt), kTraceErrorBound * 1.01);
  AccuracyCase with_h = c;
  with_h.hx = with_h.hy = with_h.hz = h;
  with_h.dt = c.dt * h / 10;
  EXPECT_LE(expected_trace_error(with_h), kTraceErrorBound * 1.01);
  // With the transforms only the spatial part counts, which is smaller here.
  AccuracyCase removed = c;
  removed.time_dispersion_removed = true;
  EXPECT_LT(expected_trace_error(removed), expected_trace_error(c));
}

// Calibration table for docs/physics.md (not run by default):
//   build-cpu/tests/test_time_dispersion --gtest_also_run_disabled_tests --gtest_filter='*Calibration*'
// "estimate" is the run's (travel time = record time - t0), "at r/v" the same model for the
// receiver's own travel time.
TEST(AccuracyCheck, DISABLED_Calibration) {
  std::printf("f0_Hz ppw cells transforms dt_ms measured estimate at_r/v\n");
  for (double f0 : {10.0, 12.5, 15.0, 18.0, 22.0})
    for (int cells : {20, 40})
      for (bool transform : {false, true}) {
        const PointRun run = point_source_run(f0, cells, 1.0, transform);
        AccuracyCase at_receiver = case_of(f0, run, transform);
        at_receiver.travel_time = cells * 10 / 2000.0;
        std::printf("%.1f %.2f %d %s %.3f %.4f %.4f %.4f\n", f0, 2000 / (2.5 * f0 * 10), cells,
                    transform ? "on" : "off", run.dt * 1e3, run.error,
                    expected_trace_error(case_of(f0, run, transform)),
                    expected_trace_error(at_receiver));
      }
}

// Migration follows the shot file's attribute: data with the time dispersion removed, given the
// forward transform with the wavelet, image like data that kept it (both consistent with the
// time stepping); the same corrected data migrated as they are (source field dispersed, data not)
// image further from both.
TEST(TimeDispersion, MigrationOfCorrectedDataMatchesUncorrectedData) {
  const VelocityModel truth = layered_model({40, 8, 36, 10, 10, 10}, {200}, {2000, 2800});
  const Acquisition acq = default_line_survey(truth, 1, 20.0, 1);
  ModelingParams modeling;
  modeling.backend.backend = "cpu";
  modeling.wavelet.f0 = 15;
  modeling.boundary.width = 12;
  modeling.record_time = 0.45;
  MigrationParams params;
  params.backend.backend = "cpu";
  params.boundary.width = 12;
  std::ostringstream log;
  ShotFile corrected = model_shots(truth, acq, modeling, log);
  modeling.time_dispersion_transform = false;
  const ShotFile plain = model_shots(truth, acq, modeling, log);
  ASSERT_TRUE(corrected.time_dispersion_removed);
  ASSERT_FALSE(plain.time_dispersion_removed);
  const std::vector<float> from_corrected = migrate_shots(truth, corrected, params, log).raw_image;
  const std::vector<float> from_plain = migrate_shots(truth, plain, params, log).raw_image;
  corrected.time_dispersion_removed = false; // migrated as they are: inconsistent
  const std::vector<float> inconsistent = migrate_shots(truth, corrected, params, log).raw_image;
  const std::vector<double> a(from_corrected.begin(), from_corrected.end());
  const std::vector<double> b(from_plain.begin(), from_plain.end());
  const std::vector<double> c(inconsistent.begin(), inconsistent.end());
  std::printf("raw images: corrected data vs plain data %.4f; migrated without the forward "
              "transform vs plain %.4f\n",
              relative_l2(a, b), relative_l2(c, b));
  EXPECT_LT(relative_l2(a, b), 0.5 * relative_l2(c, b));
}

// Cost of the transform for docs/physics.md (not run by default):
//   build-cpu/tests/test_time_dispersion --gtest_also_run_disabled_tests --gtest_filter='*Cost*'
TEST(TimeDispersion, DISABLED_Cost) {
  for (int nt : {1000, 2000, 4000}) {
    const int ntraces = 1000;
    const std::vector<double> x = centred_ricker(nt);
    std::vector<float> traces;
    for (int r = 0; r < ntraces; ++r) traces.insert(traces.end(), x.begin(), x.end());
    // CPU seconds (all threads) as well as wall seconds: a shared machine stretches the wall.
    const std::clock_t cpu_start = std::clock();
    const auto start = std::chrono::steady_clock::now();
    const TimeDispersionTransform transform(nt, TimeDispersion::remove);
    const std::clock_t cpu_built = std::clock();
    const auto built = std::chrono::steady_clock::now();
    transform.apply(traces);
    const std::clock_t cpu_done = std::clock();
    const auto done = std::chrono::steady_clock::now();
    std::printf("nt %d: matrix %.0f MB built in %.3f s wall, %.3f s CPU; %d traces in %.3f s wall, "
                "%.3f s CPU (%.3f ms CPU per trace)\n",
                nt, double(nt) * nt * 4 / 1e6, std::chrono::duration<double>(built - start).count(),
                double(cpu_built - cpu_start) / CLOCKS_PER_SEC, ntraces,
                std::chrono::duration<double>(done - built).count(),
                double(cpu_done - cpu_built) / CLOCKS_PER_SEC,
                double(cpu_done - cpu_built) / CLOCKS_PER_SEC / ntraces * 1e3);
  }
}

} // namespace
} // namespace rtm
