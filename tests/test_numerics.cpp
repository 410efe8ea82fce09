// CFL refusal, dt choice, dispersion warnings, source/receiver placement, synthetic models.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/bench_workloads.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/wavelet.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

TEST(Cfl, CourantLimitForEqualSpacingIs0_4529) {
  const double h = 10, v = 2000;
  EXPECT_NEAR(v * cfl_dt_limit(v, h, h, h) / h, 0.4529, 1e-4);
}

TEST(Cfl, DefaultDtIsBelowTheLimitWithSafety) {
  const double limit = cfl_dt_limit(3000, 10, 12, 8);
  const double dt = choose_dt(0.0, 3000, 10, 12, 8);
  EXPECT_LT(dt, limit);
  EXPECT_NEAR(dt / limit, kDefaultCflFraction, 1e-12);
  EXPECT_DOUBLE_EQ(choose_dt(0.5 * limit, 3000, 10, 12, 8), 0.5 * limit);
}

TEST(Cfl, ViolatingDtIsRefusedWithTheLimit) {
  const double limit = cfl_dt_limit(4500, 10, 10, 10);
  try {
    choose_dt(1.01 * limit, 4500, 10, 10, 10);
    FAIL() << "a dt above the CFL limit was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("CFL"));
    char limit_text[32];
    std::snprintf(limit_text, sizeof limit_text, "%.6g", limit);
    EXPECT_THAT(msg, HasSubstr(limit_text));
    EXPECT_THAT(msg, HasSubstr("4500"));
  }
}

TEST(Cfl, SimulationGridRefusesBadDt) {
  const VelocityModel m = constant_model({20, 20, 20, 10, 10, 10}, 3000);
  EXPECT_THROW(make_simulation_grid(m, BoundaryConfig{}, 1.0), InputError);
  EXPECT_NO_THROW(make_simulation_grid(m, BoundaryConfig{}, 1e-4));
}

TEST(Dispersion, WarnsWithPointsPerWavelength) {
  // v_min 1500, f0 30 Hz (f_max 75 Hz), h 10 m: 1500 / 75 / 10 = 2 points per wavelength.
  const std::string w = dispersion_warning(1500, 30, 10, 10, 10);
  EXPECT_THAT(w, HasSubstr("2.00 points per shortest wavelength"));
  EXPECT_TRUE(dispersion_warning(1500, 10, 10, 10, 10).empty()); // 6 points: fine
}

TEST(Wavelet, RickerPeaksAtT0WithUnitAmplitude) {
  EXPECT_DOUBLE_EQ(ricker(0.1, 15, 0.1), 1.0);
  // Zero crossings at tau = +-1 / (pi f0 sqrt 2).
  const double tau = 1.0 / (M_PI * 15 * std::sqrt(2.0));
  EXPECT_NEAR(ricker(0.1 + tau, 15, 0.1), 0.0, 1e-12);
  const std::vector<float> w = ricker_wavelet(100, 0.001, 15, 0.05);
  EXPECT_EQ(w.size(), 100u);
  EXPECT_FLOAT_EQ(w[50], 1.0f);
}

// `rtm bench`'s workloads take the drivers' time step and wavelet, not copies of them.
TEST(BenchWorkloads, UseTheDriversCflStepAndRickerWavelet) {
  const int steps = 300;
  const PointBenchWorkload p = point_bench_workload(40, 32, 24, steps);
  EXPECT_EQ(p.dt, choose_dt(0.0, 2000.0, kBenchSpacing, kBenchSpacing, kBenchSpacing));
  EXPECT_EQ(p.f0, 2000.0 / (5.0 * kBenchSpacing * kRickerFmaxOverF0)); // 5 cells per wavelength
  EXPECT_EQ(p.t0, default_ricker_delay(p.f0));
  EXPECT_EQ(p.series, ricker_wavelet(steps, p.dt, p.f0, p.t0));
  EXPECT_FLOAT_EQ(p.scale, float(1.0 / (kBenchSpacing * kBenchSpacing * kBenchSpacing)));
  EXPECT_EQ(p.setup.layout.nx, 40);
  EXPECT_EQ(p.setup.layout.nz, 24);
  EXPECT_EQ(p.source.i0, 20);
  EXPECT_EQ(p.source.j0, 16);
  EXPECT_EQ(p.source.k0, 12);
  ASSERT_EQ(p.setup.v2dt2.size(), size_t(40 * 32 * 24));
  EXPECT_EQ(p.setup.v2dt2.front(), float(2000.0 * 2000.0 * p.dt * p.dt));

  const PropagatorSetup r = random_bench_setup(20, 10, 8);
  const double dt = choose_dt(0.0, 4500.0, kBenchSpacing, kBenchSpacing, kBenchSpacing);
  ASSERT_EQ(r.v2dt2.size(), size_t(20 * 10 * 8));
  float lo = r.v2dt2.front(), hi = lo;
  for (float v : r.v2dt2) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, float(1500.0 * 1500.0 * dt * dt) * 0.999f);
  EXPECT_LE(hi, float(4500.0 * 4500.0 * dt * dt) * 1.001f);
  EXPECT_GT(hi - lo, 0.5f * float((4500.0 * 4500.0 - 1500.0 * 1500.0) * dt * dt)); // spread out
  EXPECT_EQ(r.v2dt2, random_bench_setup(20, 10, 8).v2dt2); // the same in every run

  // The default point run lasts until the front (leaving the source at t0, at 2000 m/s) has
  // crossed half the smallest side, and not much longer.
  const int n = default_point_steps(64, 48, 40);
  const double reach = (n * p.dt - p.t0) * 2000.0 / kBenchSpacing; // cells
  EXPECT_GE(reach, 20.0);
  EXPECT_LT(reach, 21.0);
}

// `rtm bench --cpml-width`: layers of the asked width on every face, damping strongest at the
// outer face, the same on both faces, nothing inside; and the ideal traffic the bench divides by.
TEST(BenchWorkloads, CpmlLayersOnEveryFace) {
  PropagatorSetup setup = random_bench_setup(20, 18, 16);
  add_bench_cpml(setup, 5);
  const CpmlAxis* axes[3] = {&setup.cpml.x, &setup.cpml.y, &setup.cpml.z};
  const int n[3] = {20, 18, 16};
  for (int d = 0; d < 3; ++d) {
    const CpmlAxis& axis = *axes[d];
    SCOPED_TRACE("axis " + std::to_string(d));
    EXPECT_EQ(axis.n, n[d]);
    EXPECT_EQ(axis.lo, 5);
    EXPECT_EQ(axis.hi, 5);
    EXPECT_EQ(axis.h, kBenchSpacing);
    ASSERT_EQ(axis.a.size(), size_t(n[d]));
    ASSERT_EQ(axis.b.size(), size_t(n[d]));
    for (int i = 0; i < n[d]; ++i) {
      const size_t u = size_t(i), mirror = size_t(n[d] - 1 - i);
      if (i < 5 || i >= n[d] - 5) {
        EXPECT_GT(axis.b[u], 0.0f);
        EXPECT_LT(axis.b[u], 1.0f);
        EXPECT_NEAR(axis.a[u], axis.b[u] - 1.0f, 1e-7f); // no frequency shift: a = b - 1
        EXPECT_EQ(axis.b[u], axis.b[mirror]);
      } else {
        EXPECT_EQ(axis.a[u], 0.0f);
        EXPECT_EQ(axis.b[u], 0.0f);
      }
    }
    for (int i = 0; i + 1 < 5; ++i) EXPECT_LT(axis.b[size_t(i)], axis.b[size_t(i + 1)]);
  }
  EXPECT_FALSE(setup.cpml.empty());
  for (int bad : {0, -1, 9}) { // 2 x 9 cells do not fit nz = 16
    PropagatorSetup s = random_bench_setup(20, 18, 16);
    EXPECT_THROW(
        {
          try {
            add_bench_cpml(s, bad);
          } catch (const InputError& e) {
            EXPECT_THAT(e.what(), HasSubstr("--cpml-width"));
            throw;
          }
        },
        InputError);
  }
  const CpmlBenchSize size = cpml_bench_size(20, 18, 16, 5);
  EXPECT_EQ(size.layer_cells, 20 * 18 * 16 - 10 * 8 * 6);
  EXPECT_EQ(size.axis_cells, 10 * 18 * 16 + 20 * 10 * 16 + 20 * 18 * 10);
  EXPECT_EQ(size.ideal_bytes(4), double(size.layer_cells) * 16 + double(size.axis_cells) * 16);
  EXPECT_EQ(size.ideal_bytes(2), double(size.layer_cells) * 8 + double(size.axis_cells) * 16);
}

TEST(Placement, TrilinearWeightsSumToOneAndOnGridPointsUseOneCell) {
  const VelocityModel m = constant_model({10, 8, 6, 10, 20, 5}, 2000);
  const SimulationGrid sim = make_simulation_grid(m, BoundaryConfig{3, false, 1e-3}, 0.0);
  for (PointInterpolation kind : {PointInterpolation::trilinear, PointInterpolation::sinc}) {
    const PointStencil on = locate_point(sim, {10.0, 40.0, 30.0}, "on grid", kind);
    ASSERT_EQ(on.cells(), 1);
    EXPECT_EQ(on.i0, 3 + 3); // x = 30 m: cell 3, after the 3-cell layer
    EXPECT_EQ(on.j0, 2 + 3);
    EXPECT_EQ(on.k0, 2 + 3);
    EXPECT_FLOAT_EQ(on.wx[0] * on.wy[0] * on.wz[0], 1.0f);
  }

  const PointStencil off =
      locate_point(sim, {12.5, 45.0, 33.0}, "off grid", PointInterpolation::trilinear);
  EXPECT_EQ(off.cells(), 8);
  float sum = 0;
  for (int c = 0; c < off.nz; ++c)
    for (int b = 0; b < off.ny; ++b)
      for (int a = 0; a < off.nx; ++a) sum += off.wz[c] * off.wy[b] * off.wx[a];
  EXPECT_NEAR(sum, 1.0f, 1e-6f);
  // The corner at the lower cell gets (1 - 0.5)(1 - 0.25)(1 - 0.3).
  EXPECT_NEAR(off.wz[0] * off.wy[0] * off.wx[0], 0.5 * 0.75 * 0.7, 1e-6);
  EXPECT_EQ(off.i0, 3 + 3);
  EXPECT_EQ(off.k0, 2 + 3);
}

TEST(Placement, OutsideTheModelIsRefusedByName) {
  const VelocityModel m = constant_model({10, 8, 6, 10, 10, 10}, 2000);
  const SimulationGrid sim = make_simulation_grid(m, BoundaryConfig{}, 0.0);
  try {
    locate_point(sim, {10.0, 10.0, 95.0}, "receiver 7");
    FAIL() << "a receiver outside the model was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("receiver 7"));
    EXPECT_THAT(e.what(), HasSubstr("outside the model"));
  }
}

TEST(Models, LayeredHasInterfacesAtTheirDepths) {
  const VelocityModel m = layered_model({4, 3, 30, 10, 10, 10}, {100, 200}, {1500, 2000, 2500});
  EXPECT_FLOAT_EQ(m.at(1, 1, 9), 1500);  // z = 90
  EXPECT_FLOAT_EQ(m.at(1, 1, 10), 2000); // z = 100: the interface belongs to the layer below
  EXPECT_FLOAT_EQ(m.at(1, 1, 19), 2000);
  EXPECT_FLOAT_EQ(m.at(2, 0, 20), 2500);
  EXPECT_THROW(layered_model({4, 3, 30, 10, 10, 10}, {100}, {1500}), InputError);
}

TEST(Models, SaltBodyHasSaltVelocityInsideAndGradientOutside) {
  const VelocityModel m = salt_model({40, 40, 40, 10, 10, 10}, 1500, 3500, 4500);
  EXPECT_FLOAT_EQ(m.at(20, 20, 25), 4500); // centre of the body
  EXPECT_FLOAT_EQ(m.at(0, 0, 0), 1500);
  EXPECT_FLOAT_EQ(m.at(0, 0, 39), 3500);
  EXPECT_FLOAT_EQ(m.vmax(), 4500);
}

TEST(Models, ScattererAndShapeChecks) {
  const VelocityModel m = scatterer_model({21, 21, 21, 10, 10, 10}, 2000, 2600);
  EXPECT_FLOAT_EQ(m.at(10, 10, 10), 2600);
  EXPECT_FLOAT_EQ(m.at(11, 10, 10), 2000);
  EXPECT_THROW(constant_model({0, 10, 10, 10, 10, 10}, 2000), InputError);
  EXPECT_THROW(constant_model({10, 10, 10, 10, -1, 10}, 2000), InputError);
  EXPECT_THROW(constant_model({10, 10, 10, 10, 10, 10}, -5), InputError);
}

TEST(Acquisition, DefaultLineSurvey) {
  const VelocityModel m = constant_model({50, 20, 20, 10, 10, 10}, 2000);
  const Acquisition a = default_line_survey(m, 4, 20);
  EXPECT_EQ(a.sources.size(), 4u);
  EXPECT_EQ(a.receivers.size(), 50u);
  EXPECT_DOUBLE_EQ(a.receivers.front()[2], 0.0);
  EXPECT_DOUBLE_EQ(a.receivers.back()[2], 490.0);
  for (const Position& s : a.sources) EXPECT_DOUBLE_EQ(s[0], 20.0);
  EXPECT_THROW(default_line_survey(m, 0, 20), InputError);
}

} // namespace
} // namespace rtm
