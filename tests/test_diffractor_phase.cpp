// A point scatterer and a flat reflector imaged from raw shots under a 3 x 3 shot grid with areal,
// line and sparse receivers, with the default options (docs/rtm.md, 6a): the automatic data phase
// filter takes the order halfway between a point's zero-phase order (2) and a reflector's (half
// the directions the source-receiver midpoints fill densely) where the midpoints fill two
// directions, so both image within a cell of their place, 45 degrees from zero phase, of opposite
// signs; with one the reflector's order (the point 135 degrees off). The phases as predicted. The
// count of directions behind the order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <vector>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/imaging_condition.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/data_phase_filter.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"

namespace rtm {
namespace {

// ---- The count of dense directions ------------------------------------------------------------

// The directions a reflector's image sums over are those of the source-receiver midpoints.
TEST(AcquisitionDenseDims, CountTheDirectionsTheMidpointsFill) {
  const double v = 2000, f0 = 20; // wavelength 100 m: dense below 50 m, long from 100 m
  auto dims = [&](const std::vector<Position>& sources, const std::vector<Position>& receivers) {
    std::vector<const std::vector<Position>*> spreads(sources.size(), &receivers);
    return acquisition_dense_dims(acquisition_midpoints(sources, spreads), v, f0);
  };
  const std::vector<Position> one_shot = {{20, 150, 200}};
  const std::vector<Position> shot_grid = grid_at_depth(20, 45, 235, 95, 45, 235, 95); // 3 x 3
  std::vector<Position> crossline_shots;
  for (int j = 0; j <= 30; ++j) crossline_shots.push_back({20, 10.0 * j, 205});
  const std::vector<Position> inline_receivers = line_along_x(20, 150, 0, 400, 10);
  const std::vector<Position> areal = grid_at_depth(20, 0, 400, 10, 0, 300, 10);
  EXPECT_EQ(dims(one_shot, {{20, 150, 300}}), 0) << "one pair";
  EXPECT_EQ(dims(one_shot, grid_at_depth(20, 0, 400, 120, 0, 300, 120)), 0) << "sparse";
  EXPECT_EQ(dims(one_shot, inline_receivers), 1);
  EXPECT_EQ(dims(line_along_x(20, 150, 0, 400, 100), inline_receivers), 1) << "a 2-D line";
  EXPECT_EQ(dims(crossline_shots, inline_receivers), 2) << "a cross-spread";
  EXPECT_EQ(dims(one_shot, areal), 2);
  // Sparse receivers under a 3 x 3 shot grid: the shots fill in the midpoints between them.
  EXPECT_EQ(dims(shot_grid, grid_at_depth(20, 0, 240, 120, 0, 240, 120)), 2);
  // The automatic order: halfway between a point's 2 and a reflector's d / 2 for d = 2, the
  // reflector's below.
  EXPECT_EQ(automatic_data_phase_order(0), 0.0);
  EXPECT_EQ(automatic_data_phase_order(1), 0.5);
  EXPECT_EQ(automatic_data_phase_order(2), 1.5);
  EXPECT_EQ(residual_phase_degrees(1.5, 2.0), 45.0);
  EXPECT_EQ(residual_phase_degrees(1.5, 1.0), -45.0);
}

TEST(DataPhaseFilter, AnOrderIsANumberFromZeroToThree) {
  double order = -1;
  EXPECT_TRUE(parse_data_phase_order("1.5", order));
  EXPECT_EQ(order, 1.5);
  EXPECT_FALSE(parse_data_phase_order("full", order));
  EXPECT_FALSE(parse_data_phase_order("1.5x", order));
  EXPECT_THROW(parse_data_phase_order("3.5", order), InputError);
  EXPECT_THROW(parse_data_phase_order("-1", order), InputError);
  EXPECT_EQ(describe_data_phase_filter(DataPhaseFilter::automatic, 1.25), "auto, order 1.25");
}

// ---- Images ---------------------------------------------------------------------------------------

enum class Spread { areal, line, sparse };

struct Target {
  const char* name;
  Spread spread;
  bool reflector; // a flat velocity increase between grid nodes; else a one-cell scatterer
  // What the acquisition allows (docs/rtm.md, 6a, "Measured"): with a line of receivers no filter
  // keeps both a point and a reflector within 45 degrees, and the automatic one keeps the
  // reflector (the point 135 degrees off: its negative lobe is the strongest); the line places the
  // point across it no better than the three shot rows (a ghost 9 cells across). Receivers 120 m
  // apart leave each pair's isochron (an acquisition footprint) at up to 0.8 of the image.
  bool positive_peak;   // the strongest value is positive (a velocity increase)
  bool focused;         // nothing farther than 3 cells from the truth reaches half of it
};
void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

// The model: 28^3 cells of 10 m, 2000 m/s with 2500 m/s at cell (14, 14, 14) or from 135 m down
// (between cells 13 and 14); 3 x 3 shots and the receivers 30 m deep; f0 20 Hz (a 100 m
// wavelength, 5 cells at the image's 2 omega / v); C-PML of 10 cells.
constexpr int kN = 28, kCentre = 14, kWidth = 10;
constexpr double kH = 10;

struct TargetImage {
  MigrationResult result;
  double truth_k = 0;           // the scatterer's cell or the interface as drawn (cells)
  double strongest = 0;         // the largest |image| below the acquisition, signed
  int i = 0, j = 0, k = 0;      // where
  double far = 0;               // the largest |image| farther than 3 cells from the truth
  int fi = 0, fj = 0, fk = 0;
  double phase = 0;             // of the central trace at the truth (degrees; analytic signal)
};

// The phase of a trace at depth zt (cells): the argument of its analytic signal there, from a
// Hann window of +-half cells around zt. 0: a positive peak at zt; 180: a negative one; +90: a
// positive lobe above and a negative one below.
double phase_at(const std::vector<double>& f, double zt, int half) {
  std::complex<double> analytic = 0;
  const int n = 64;
  for (int m = 1; m < n / 2; ++m) {
    const double K = 2 * M_PI * m / n;
    for (int k = int(std::floor(zt)) - half; k <= int(std::ceil(zt)) + half; ++k) {
      if (k < 0 || k >= int(f.size())) continue;
      const double w = 0.5 + 0.5 * std::cos(M_PI * (k - zt) / (half + 1));
      analytic += w * f[size_t(k)] * std::exp(std::complex<double>(0, -K * (k - zt)));
    }
  }
  return std::arg(analytic) * 180 / M_PI;
}

TargetImage image_target(const Target& t, DataPhaseFilter filter = DataPhaseFilter::automatic,
                         double order = 0, ImagingCondition condition = ImagingCondition::cross) {
  const ModelShape shape{kN, kN, kN, kH, kH, kH};
  TargetImage r;
  r.truth_k = t.reflector ? kCentre - 0.5 : kCentre;
  const VelocityModel truth = t.reflector ? layered_model(shape, {(kCentre - 0.5) * kH}, {2000, 2500})
                                          : scatterer_model(shape, 2000, 2500);
  const VelocityModel migration = constant_model(shape, 2000);
  SurveyLayout layout;
  layout.shots_x = layout.shots_y = 3;
  layout.source_depth = layout.receiver_depth = 30;
  layout.receiver_grid = t.spread != Spread::line;
  // Sparse: 120 m, more than a wavelength; the shots fill in the midpoints between them.
  layout.receiver_step = t.spread == Spread::sparse ? 12 : 1;
  ModelingParams modeling;
  modeling.backend.backend = "cpu";
  modeling.wavelet.f0 = 20;
  modeling.record_time = 0.3;
  modeling.boundary.width = kWidth;
  std::ostringstream log;
  const ShotFile shots = model_shots(truth, make_survey(truth, layout), modeling, log);
  MigrationParams params; // the defaults, but for the layers' width
  params.backend.backend = "cpu";
  params.boundary.width = kWidth;
  params.data_phase_filter = filter;
  params.data_phase_order = order;
  params.imaging_condition = condition;
  r.result = migrate_shots(migration, shots, params, log);
  const std::vector<float>& image = r.result.image;
  auto at = [&](int i, int j, int k) { return double(image[(size_t(k) * kN + j) * kN + i]); };
  // Below the acquisition: the sources (3 cells deep) and their direct wave leave their residue
  // above 8 cells (docs/rtm.md, 6b).
  for (int k = 8; k < kN; ++k)
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kN; ++i) {
        const double v = at(i, j, k);
        if (std::abs(v) > std::abs(r.strongest)) r.strongest = v, r.i = i, r.j = j, r.k = k;
        const double dz = k - r.truth_k;
        const double d2 = t.reflector ? dz * dz
                                      : std::pow(i - kCentre, 2) + std::pow(j - kCentre, 2) + dz * dz;
        if (d2 > 9 + 1e-9 && std::abs(v) > r.far) r.far = std::abs(v), r.fi = i, r.fj = j, r.fk = k;
      }
  std::vector<double> trace(static_cast<size_t>(kN));
  for (int k = 0; k < kN; ++k) trace[size_t(k)] = at(kCentre, kCentre, k);
  r.phase = phase_at(trace, r.truth_k, 6);
  std::printf("%s, %s, %s: strongest %+.3g at (%d, %d, %d), truth (%d, %d, %.1f); farther than 3 "
              "cells: %.2f of it at (%d, %d, %d); phase %+.0f deg; central trace:",
              t.name, describe_data_phase_filter(r.result.data_phase_filter, r.result.data_phase_order).c_str(),
              imaging_condition_info(condition).name,
              r.strongest, r.i, r.j, r.k, kCentre, kCentre, r.truth_k, r.far / std::abs(r.strongest),
              r.fi, r.fj, r.fk, r.phase);
  for (int k = kCentre - 5; k <= kCentre + 5; ++k) std::printf(" %+.2f", trace[size_t(k)] / std::abs(r.strongest));
  std::printf("\n");
  return r;
}

class DefaultImage : public ::testing::TestWithParam<Target> {};

// The bars of issue 38: the strongest value within a cell of the truth (laterally too, for the
// point), positive for a velocity increase, nothing farther than 3 cells above half of it; and the
// phase the derivation predicts. The last two bars hold where the acquisition allows them (Target).
TEST_P(DefaultImage, MeetsTheBarsItsAcquisitionAllows) {
  const Target& t = GetParam();
  const TargetImage r = image_target(t);
  // Areal and sparse receivers under the shot grid fill the midpoints in two directions, a line
  // in one (the three shot rows are 90 m apart: the midpoints' 90 m across is under a wavelength).
  const int dims = t.spread == Spread::line ? 1 : 2;
  EXPECT_EQ(r.result.data_phase_order, automatic_data_phase_order(dims));
  EXPECT_LE(std::abs(r.k - r.truth_k), 1.0);
  if (!t.reflector) {
    EXPECT_LE(std::abs(r.i - kCentre), 1);
    EXPECT_LE(std::abs(r.j - kCentre), 1);
  }
  // The derivation's residual phase, 90 (scatterer order - filter order) degrees, to 30 degrees
  // (measured: within 25; the normalisation and the near field of so shallow a target bend it).
  const double predicted = residual_phase_degrees(r.result.data_phase_order, t.reflector ? 0.5 * dims : 2.0);
  EXPECT_NEAR(r.phase, predicted, 30.0);
  if (t.positive_peak) {
    EXPECT_GT(r.strongest, 0.0) << "a velocity increase images positive";
  }
  if (t.focused) {
    EXPECT_LT(r.far, 0.5 * std::abs(r.strongest));
  }
}

INSTANTIATE_TEST_SUITE_P(
    PointAndPlane, DefaultImage,
    ::testing::Values(Target{"point, areal receivers", Spread::areal, false, true, true},
                      Target{"point, a line of receivers", Spread::line, false, false, false},
                      Target{"point, sparse receivers", Spread::sparse, false, true, false},
                      Target{"plane, areal receivers", Spread::areal, true, true, true},
                      Target{"plane, a line of receivers", Spread::line, true, true, true},
                      Target{"plane, sparse receivers", Spread::sparse, true, true, false}),
    [](const ::testing::TestParamInfo<Target>& p) {
      const Target& target = p.param;
      const char* spread = target.spread == Spread::areal ? "Areal" : target.spread == Spread::line ? "Line" : "Sparse";
      return std::string(target.reflector ? "Plane" : "Point") + spread;
    });

// The residual phase against the order, for the table of docs/rtm.md 6a:
//   ORDERS="0 1 1.5 2" build-cpu/tests/test_diffractor_phase --gtest_also_run_disabled_tests
//     --gtest_filter='*Measure*'
TEST(DefaultImage, DISABLED_MeasurePhaseAgainstOrder) {
  std::vector<double> orders;
  std::istringstream in(std::getenv("ORDERS") ? std::getenv("ORDERS") : "0 0.5 1 1.25 1.5 2");
  for (double o; in >> o;) orders.push_back(o);
  for (const Target& t : {Target{"point, areal", Spread::areal, false, true, true},
                          Target{"plane, areal", Spread::areal, true, true, true},
                          Target{"point, line", Spread::line, false, true, true},
                          Target{"plane, line", Spread::line, true, true, true},
                          Target{"point, sparse", Spread::sparse, false, true, true},
                          Target{"plane, sparse", Spread::sparse, true, true, true}})
    for (double order : orders) image_target(t, DataPhaseFilter::order, order);
}

// The same targets imaged with the inverse-scattering imaging condition (--imaging-condition isic,
// docs/rtm.md 5c) and the automatic data filter, for issue 38's question whether it corrects what
// the data filter cannot (docs/rtm.md 6a):
//   build-cpu/tests/test_diffractor_phase --gtest_also_run_disabled_tests --gtest_filter='*InverseScattering*'
TEST(DefaultImage, DISABLED_MeasureWithTheInverseScatteringCondition) {
  for (const Target& t : {Target{"point, areal", Spread::areal, false, true, true},
                          Target{"point, line", Spread::line, false, true, true},
                          Target{"point, sparse", Spread::sparse, false, true, true},
                          Target{"plane, areal", Spread::areal, true, true, true},
                          Target{"plane, line", Spread::line, true, true, true},
                          Target{"plane, sparse", Spread::sparse, true, true, true}})
    image_target(t, DataPhaseFilter::automatic, 0, ImagingCondition::isic);
}

} // namespace
} // namespace rtm
