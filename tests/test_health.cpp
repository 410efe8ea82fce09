// Numerical health checks (solvers/contracts/field_health.h, HealthProbe::check_health, solvers/drivers/health.h):
// the worst cell is found and named the same way by every implementation, and a run made unstable
// on purpose (a dt above the CFL limit, set through the wavefield API, which does not check it)
// is stopped with the step, the cell and the value, while the same run within the limit is not;
// likewise a migration, in its source field (forward) and its receiver field (backwards).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "solvers/drivers/acquisition.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/health.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/wavelet.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

PropagatorSetup constant_setup(int n, double h, double v, double dt) {
  PropagatorSetup s;
  s.layout = make_layout(n, n + 1, n + 2); // unequal axes: a swapped index shows
  s.weights = make_laplacian_weights(h, h, h);
  s.v2dt2.assign(size_t(s.layout.interior_cells()), float(v * v * dt * dt));
  return s;
}

struct Planted {
  int i, j, k;
  float value;
};

// check_health of a field that is 0.5 everywhere in the interior except at the planted cells, and
// NaN in the whole halo and padding (which must not count), from the CPU backend and from the host
// reference (host_field_health: the whole state copied to the host).
std::vector<FieldHealth> health_with(const std::vector<Planted>& planted) {
  const PropagatorSetup setup = constant_setup(9, 10, 2000, 1e-3);
  const GridLayout& g = setup.layout;
  std::vector<float> field(size_t(g.size), kNaN);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) field[size_t(g.index(i, j, k))] = (i + j + k) % 2 ? 0.5f : -0.5f;
  for (const Planted& p : planted) field[size_t(g.index(p.i, p.j, p.k))] = p.value;
  std::vector<FieldHealth> results;
  CpuWavefield cpu(setup);
  cpu.set_state(std::vector<float>(size_t(g.size), kNaN), field); // p[n-1] must not count
  results.push_back(cpu.check_health());
  results.push_back(host_field_health(cpu));
  return results;
}

void expect_cell(const FieldHealth& h, int i, int j, int k) {
  EXPECT_EQ(h.i, i);
  EXPECT_EQ(h.j, j);
  EXPECT_EQ(h.k, k);
}

TEST(FieldHealth, FiniteFieldReportsItsLargestValueWithSign) {
  for (const FieldHealth& h : health_with({{2, 3, 4, 7.0f}, {5, 6, 7, -9.5f}})) {
    EXPECT_TRUE(h.finite);
    EXPECT_EQ(h.worst_value, -9.5f);
    expect_cell(h, 5, 6, 7);
  }
}

TEST(FieldHealth, NanBeatsInfinityBeatsAnyFiniteValue) {
  for (const FieldHealth& h : health_with({{1, 1, 1, 3e38f}, {8, 0, 2, -kInf}})) {
    EXPECT_FALSE(h.finite);
    EXPECT_EQ(h.worst_value, -kInf);
    expect_cell(h, 8, 0, 2);
  }
  for (const FieldHealth& h : health_with({{1, 1, 1, kInf}, {0, 9, 10, kNaN}, {4, 4, 4, 1e30f}})) {
    EXPECT_FALSE(h.finite);
    EXPECT_TRUE(std::isnan(h.worst_value));
    expect_cell(h, 0, 9, 10);
  }
}

TEST(FieldHealth, TiesGoToTheLowestIndexAndTheHaloIsIgnored) {
  // Equal magnitudes: the one with the lowest z (then y, then x) wins, whatever the thread count.
  for (const FieldHealth& h : health_with({{7, 2, 6, 4.0f}, {3, 8, 5, -4.0f}, {8, 1, 5, 4.0f}})) {
    EXPECT_TRUE(h.finite);
    EXPECT_EQ(std::fabs(h.worst_value), 4.0f);
    expect_cell(h, 8, 1, 5);
  }
  // Nothing planted: everything is +-0.5, the first cell wins; the NaN halo is not seen.
  for (const FieldHealth& h : health_with({})) {
    EXPECT_TRUE(h.finite);
    expect_cell(h, 0, 0, 0);
  }
}

// ---- Stopping a run ---------------------------------------------------------------------------------

// A point source in a 2000 m/s cube of 10 m cells at `fraction` of the CFL limit, with the health
// check of modeling (limit from the injected wavelet).
struct ShotParams {
  PropagatorSetup setup;
  std::vector<float> wavelet;
  float scale = 0;
  HealthCheck health;
};

ShotParams shot_params(double fraction, int nt) {
  const double h = 10, v = 2000;
  const double dt = fraction * cfl_dt_limit(v, h, h, h);
  ShotParams p;
  p.setup = constant_setup(24, h, v, dt);
  p.wavelet = ricker_wavelet(nt, dt, 25.0, default_ricker_delay(25.0));
  p.scale = float(1.0 / (h * h * h));
  p.health.dt = dt;
  p.health.dx = p.health.dy = p.health.dz = h;
  p.health.runaway_limit =
      runaway_limit(injected_amplitude(p.wavelet, p.scale, v * v * dt * dt), 0.0, nt);
  return p;
}

const PointStencil kSource = point_at_cell(12, 12, 12), kReceiver = point_at_cell(4, 12, 12);

struct ShotRun {
  std::unique_ptr<CpuWavefield> prop;
  std::unique_ptr<PointSet> source_set, receiver_set;
  int nt = 0;
  float scale = 0;
  HealthCheck health;
};

ShotRun shot_run(double fraction, int nt) {
  ShotParams p = shot_params(fraction, nt);
  ShotRun run;
  run.prop = std::make_unique<CpuWavefield>(p.setup);
  run.nt = nt;
  run.source_set = run.prop->add_points({kSource}, nt);
  run.receiver_set = run.prop->add_points({kReceiver}, nt);
  run.source_set->upload_series(p.wavelet);
  run.scale = p.scale;
  run.health = p.health;
  return run;
}

std::string instability_message(ShotRun& run) {
  try {
    model_one_shot(*run.prop, run.scale, *run.source_set, *run.receiver_set, 1, run.nt, &run.health,
                   "shot 7");
  } catch (const NumericalInstability& e) {
    return e.what();
  }
  return "";
}

TEST(HealthCheck, UnstableRunIsStoppedWithStepCellAndValue) {
  ShotRun run = shot_run(1.5, 400); // dt 1.5 x the CFL limit: the fastest mode grows ~7x per step
  const std::string message = instability_message(run);
  ASSERT_FALSE(message.empty()) << "the unstable run was not stopped";
  EXPECT_THAT(message, HasSubstr("shot 7: numerical instability: after step 50 of 400"));
  EXPECT_THAT(message, HasSubstr("cell (i,j,k) = ("));
  EXPECT_THAT(message, HasSubstr(") m, inside the model"));
  EXPECT_THAT(message, HasSubstr("CFL"));
}

TEST(HealthCheck, SlowRunawayIsStoppedBeforeOverflow) {
  // 1% above the limit: slow growth (about 1.3x per step), caught by the runaway bound while the
  // field is still finite, at a check after step 50.
  ShotRun run = shot_run(1.01, 2000);
  const std::string message = instability_message(run);
  ASSERT_FALSE(message.empty()) << "the unstable run was not stopped";
  EXPECT_THAT(message, HasSubstr("has run away (|p| = "));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("after step 2000 ")));
}

TEST(HealthCheck, StableRunsAreNotStopped) {
  for (double fraction : {0.88, 1.0}) { // the default dt, and dt exactly at the limit
    SCOPED_TRACE(fraction);
    ShotRun run = shot_run(fraction, 600);
    EXPECT_EQ(instability_message(run), "");
    const FieldHealth h = run.prop->check_health();
    EXPECT_TRUE(h.finite);
    EXPECT_LT(std::fabs(h.worst_value), run.health.runaway_limit / 1e3) << "too close to the limit";
  }
}

// ---- Stopping a migration -----------------------------------------------------------------------

// One shot of migrate_one_shot on CPU shot fields: the source field at `source_fraction` and the
// receiver field at `receiver_fraction` of the CFL limit, each with its health check.
struct MigrationRun {
  ShotParams source, receiver;
  std::unique_ptr<CpuShotFields> fields;
  std::unique_ptr<PointSet> source_set, receiver_set;
  std::unique_ptr<BoundaryStore> store;
  Box box;
  ShotSets sets;
};

MigrationRun migration_run(double source_fraction, double receiver_fraction, int nt) {
  MigrationRun run;
  run.source = shot_params(source_fraction, nt);
  run.receiver = shot_params(receiver_fraction, nt);
  run.fields = std::make_unique<CpuShotFields>(run.source.setup, run.receiver.setup);
  const GridLayout& g = run.fields->source().layout();
  run.box = Box{2, g.nx - 2, 2, g.ny - 2, 2, g.nz - 2};
  run.fields->allocate_image(run.box);
  run.store = run.fields->source().make_boundary_store(run.box, nt - 1);
  run.source_set = run.fields->source().add_points({kSource}, nt);
  run.source_set->upload_series(run.source.wavelet);
  run.receiver_set = run.fields->receiver().add_points({kReceiver}, nt);
  // Data for the receiver field: the source's wavelet reversed in time, so that the field, run
  // backwards from the last sample, is excited from its first steps.
  std::vector<float> data = run.source_set->download_series();
  std::reverse(data.begin(), data.end());
  run.receiver_set->upload_series(data);
  run.sets.source = run.source_set.get();
  run.sets.receiver = run.receiver_set.get();
  run.sets.boundary = run.store.get();
  run.sets.nt = nt;
  run.sets.source_scale = run.source.scale;
  run.sets.source_health = &run.source.health;
  run.sets.receiver_health = &run.receiver.health;
  run.sets.label = "shot 4";
  return run;
}

std::string migration_instability(MigrationRun& run) {
  try {
    migrate_one_shot(*run.fields, run.sets, run.box, Reconstruction::boundary, 1);
  } catch (const NumericalInstability& e) {
    return e.what();
  }
  return "";
}

TEST(HealthCheck, UnstableSourceFieldStopsTheMigration) {
  MigrationRun run = migration_run(1.5, 0.88, 400);
  const std::string message = migration_instability(run);
  ASSERT_FALSE(message.empty()) << "the unstable migration was not stopped";
  EXPECT_THAT(message, HasSubstr("shot 4, source wavefield (forward in time): numerical "
                                 "instability: after step 50 of 400"));
  EXPECT_THAT(message, HasSubstr("cell (i,j,k) = ("));
}

TEST(HealthCheck, UnstableReceiverFieldStopsTheMigration) {
  MigrationRun run = migration_run(0.88, 1.5, 400);
  const std::string message = migration_instability(run);
  ASSERT_FALSE(message.empty()) << "the unstable migration was not stopped";
  // 50 steps backwards from the last sample (399): the field holds R[350].
  EXPECT_THAT(message, HasSubstr("shot 4, receiver wavefield (backwards in time, now at time "
                                 "sample 350): numerical instability: after step 50 of 400"));
}

TEST(HealthCheck, StableMigrationIsNotStopped) {
  MigrationRun run = migration_run(0.88, 0.88, 400);
  EXPECT_EQ(migration_instability(run), "");
  const std::vector<float> image = run.fields->download_image();
  double energy = 0;
  for (float v : image) energy += double(v) * v;
  EXPECT_GT(energy, 0) << "the migration ran and imaged something";
}

// The whole driver: a NaN planted in a shot's data or in the wavelet (the readers refuse such
// files; a corrupted transfer or an upstream bug could still produce them) stops migrate_shots
// with the shot, the field and the step, instead of stacking NaN into the image.
struct SmallSurvey {
  VelocityModel model;
  ShotFile shots;
  MigrationParams params;
};

SmallSurvey small_survey() {
  SmallSurvey survey;
  survey.model = constant_model(ModelShape{20, 16, 18, 10, 10, 10}, 2000);
  ModelingParams modeling;
  modeling.backend.backend = "cpu";
  modeling.wavelet.f0 = 20;
  modeling.boundary.width = 6;
  modeling.record_time = 0.12;
  std::ostringstream log;
  survey.shots = model_shots(survey.model, default_line_survey(survey.model, 2, 30.0, 2), modeling, log);
  survey.params.backend.backend = "cpu";
  survey.params.boundary.width = 6;
  return survey;
}

std::string migrate_shots_instability(const SmallSurvey& survey) {
  std::ostringstream log;
  try {
    migrate_shots(survey.model, survey.shots, survey.params, log);
  } catch (const NumericalInstability& e) {
    return e.what();
  }
  return "";
}

TEST(HealthCheck, NanInTheDataOrTheWaveletStopsMigrateShots) {
  const SmallSurvey clean = small_survey();
  ASSERT_EQ(clean.shots.shots.size(), 2u);
  const int nt = clean.shots.nt;
  ASSERT_GT(nt, 60);
  EXPECT_EQ(migrate_shots_instability(clean), "");

  // A NaN 20 samples before the end of receiver 3's trace in the second shot: the receiver field,
  // injected backwards from the last sample, holds it after 20 steps; the check after step 50 sees it.
  SmallSurvey bad_data = clean;
  bad_data.shots.shots[1].data[3 * size_t(nt) + size_t(nt - 20)] = kNaN;
  const std::string data_message = migrate_shots_instability(bad_data);
  EXPECT_THAT(data_message, HasSubstr("shot 1, receiver wavefield (backwards in time, now at time "
                                      "sample " + std::to_string(nt - 50) + ")"));
  EXPECT_THAT(data_message, HasSubstr("after step 50 of " + std::to_string(nt)));
  EXPECT_THAT(data_message, HasSubstr("holds NaN"));

  SmallSurvey bad_wavelet = clean;
  bad_wavelet.shots.wavelet[10] = kInf;
  const std::string wavelet_message = migrate_shots_instability(bad_wavelet);
  EXPECT_THAT(wavelet_message, HasSubstr("shot 0, source wavefield (forward in time): numerical "
                                         "instability: after step 50 of "));
}

TEST(HealthCheck, DueEveryIntervalAndAtTheEnd) {
  HealthCheck check;
  check.every = 50;
  EXPECT_FALSE(check.due(49, 120));
  EXPECT_TRUE(check.due(50, 120));
  EXPECT_TRUE(check.due(100, 120));
  EXPECT_FALSE(check.due(119, 120));
  EXPECT_TRUE(check.due(120, 120));
}

TEST(HealthCheck, MessageNamesTheAbsorbingLayerAndMetres) {
  HealthCheck check;
  check.dt = 1e-3;
  check.dx = check.dy = check.dz = 10;
  check.x0 = check.y0 = check.z0 = -200; // 20 layer cells before the model's origin at 0
  check.model_i0 = check.model_j0 = check.model_k0 = 20;
  check.model_i1 = check.model_j1 = check.model_k1 = 120;
  FieldHealth h;
  h.finite = false;
  h.worst_value = kInf;
  h.i = 3, h.j = 25, h.k = 40;
  const std::string message = health_problem(h, check, 150, 400, "");
  EXPECT_THAT(message, HasSubstr("after step 150 of 400 (t = 0.15 s) the wavefield holds +inf"));
  EXPECT_THAT(message, HasSubstr("(i,j,k) = (3,25,40), (z,y,x) = (200, 50, -170) m"));
  EXPECT_THAT(message, HasSubstr("absorbing layer"));
  h.finite = true;
  h.worst_value = 1.0f;
  check.runaway_limit = 2.0;
  EXPECT_EQ(health_problem(h, check, 150, 400, ""), "");
  h.worst_value = -3.0f;
  EXPECT_THAT(health_problem(h, check, 150, 400, ""), HasSubstr("has run away (|p| = 3; a stable run stays below 2)"));
}

TEST(HealthCheck, RunawayLimitGrowsWithStepsAndAmplitude) {
  EXPECT_DOUBLE_EQ(runaway_limit(2.0, 0.5, 99), kRunawayGain * 100 * 2.5);
  EXPECT_DOUBLE_EQ(injected_amplitude({1.0f, -2.0f, 0.5f}, 0.5, 4.0), 3.5 * 0.5 * 4.0);
}

} // namespace
} // namespace rtm
