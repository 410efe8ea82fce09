// Numerical health checks (solvers/contracts/field_health.h, Propagator::check_health, solvers/drivers/health.h):
// the worst cell is found and named the same way by every implementation, and a run made unstable
// on purpose (a dt above the CFL limit, set through the Propagator API, which does not check it)
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

// A propagator that keeps the base class's check_health (the default every backend inherits).
class DefaultHealthPropagator final : public Propagator {
public:
  explicit DefaultHealthPropagator(PropagatorSetup setup) : inner_(std::move(setup)) {}
  std::string name() const override { return "default-health"; }
  const GridLayout& layout() const override { return inner_.layout(); }
  void set_state(const std::vector<float>& a, const std::vector<float>& b) override { inner_.set_state(a, b); }
  void get_state(std::vector<float>& a, std::vector<float>& b) const override { inner_.get_state(a, b); }
  void zero_state() override { inner_.zero_state(); }
  void step_planes(int k0, int k1) override { inner_.step_planes(k0, k1); }
  void finish_step() override { inner_.finish_step(); }
  PlaneSpan next_field_planes(int k0, int k1) override { return inner_.next_field_planes(k0, k1); }
  int add_point_set(const std::vector<PointStencil>& p, int nt) override { return inner_.add_point_set(p, nt); }
  void upload_series(int set, const std::vector<float>& s) override { inner_.upload_series(set, s); }
  std::vector<float> download_series(int set) const override { return inner_.download_series(set); }
  void inject(int set, int t, float scale) override { inner_.inject(set, t, scale); }
  void record(int set, int t) override { inner_.record(set, t); }
  // The RTM operations forward too; only check_health is left to the interface's default.
  void reverse_time() override { inner_.reverse_time(); }
  void allocate_boundary_store(const Box& b, int steps) override { inner_.allocate_boundary_store(b, steps); }
  void save_boundary(int step) override { inner_.save_boundary(step); }
  void restore_boundary(int step) override { inner_.restore_boundary(step); }
  void copy_current(const Box& b, std::vector<float>& d) const override { inner_.copy_current(b, d); }
  void set_current(const Box& b, const std::vector<float>& d) override { inner_.set_current(b, d); }
  void allocate_image(const Box& b) override { inner_.allocate_image(b); }
  void accumulate_image(const Propagator& s, float w) override { inner_.accumulate_image(s, w); }
  std::vector<float> download_image() const override { return inner_.download_image(); }
  std::vector<float> download_illumination() const override { return inner_.download_illumination(); }
  void set_image(const std::vector<float>& i, const std::vector<float>& l) override { inner_.set_image(i, l); }
  void set_born_perturbation(const Box& b, const std::vector<float>& m) override { inner_.set_born_perturbation(b, m); }
  void inject_born_source(const Propagator& bg) override { inner_.inject_born_source(bg); }
  void enable_timing(bool on) override { inner_.enable_timing(on); }
  PropagatorTiming timing() const override { return inner_.timing(); }

private:
  CpuPropagator inner_;
};

struct Planted {
  int i, j, k;
  float value;
};

// check_health of a field that is 0.5 everywhere in the interior except at the planted cells, and
// NaN in the whole halo and padding (which must not count), from the CPU backend and the default.
std::vector<FieldHealth> health_with(const std::vector<Planted>& planted) {
  const PropagatorSetup setup = constant_setup(9, 10, 2000, 1e-3);
  const GridLayout& g = setup.layout;
  std::vector<float> field(size_t(g.size), kNaN);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) field[size_t(g.index(i, j, k))] = (i + j + k) % 2 ? 0.5f : -0.5f;
  for (const Planted& p : planted) field[size_t(g.index(p.i, p.j, p.k))] = p.value;
  std::vector<FieldHealth> results;
  CpuPropagator cpu(setup);
  DefaultHealthPropagator fallback(setup);
  for (Propagator* prop : {static_cast<Propagator*>(&cpu), static_cast<Propagator*>(&fallback)}) {
    prop->set_state(std::vector<float>(size_t(g.size), kNaN), field); // p[n-1] must not count
    results.push_back(prop->check_health());
  }
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

struct ShotRun {
  std::unique_ptr<CpuPropagator> prop;
  int source_set = 0, receiver_set = 0, nt = 0;
  float scale = 0;
  HealthCheck health;
};

// A point source in a 2000 m/s cube of 10 m cells at `fraction` of the CFL limit, with the health
// check of modeling (limit from the injected wavelet).
ShotRun shot_run(double fraction, int nt) {
  const double h = 10, v = 2000;
  const double dt = fraction * cfl_dt_limit(v, h, h, h);
  ShotRun run;
  run.prop = std::make_unique<CpuPropagator>(constant_setup(24, h, v, dt));
  const PointStencil source = point_at_cell(12, 12, 12), receiver = point_at_cell(4, 12, 12);
  run.nt = nt;
  run.source_set = run.prop->add_point_set({source}, nt);
  run.receiver_set = run.prop->add_point_set({receiver}, nt);
  const std::vector<float> wavelet = ricker_wavelet(nt, dt, 25.0, default_ricker_delay(25.0));
  run.prop->upload_series(run.source_set, wavelet);
  run.scale = float(1.0 / (h * h * h));
  run.health.dt = dt;
  run.health.dx = run.health.dy = run.health.dz = h;
  run.health.runaway_limit =
      runaway_limit(injected_amplitude(wavelet, run.scale, v * v * dt * dt), 0.0, nt);
  return run;
}

std::string instability_message(ShotRun& run) {
  try {
    model_one_shot(*run.prop, run.scale, run.source_set, run.receiver_set, 1, run.nt, &run.health,
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

// One shot of migrate_one_shot on two CPU propagators: the source field at `source_fraction` and
// the receiver field at `receiver_fraction` of the CFL limit, each with its health check.
struct MigrationRun {
  ShotRun source, receiver;
  Box box;
  ShotSets sets;
};

MigrationRun migration_run(double source_fraction, double receiver_fraction, int nt) {
  MigrationRun run{shot_run(source_fraction, nt), shot_run(receiver_fraction, nt), {}, {}};
  const GridLayout& g = run.source.prop->layout();
  run.box = Box{2, g.nx - 2, 2, g.ny - 2, 2, g.nz - 2};
  run.receiver.prop->allocate_image(run.box);
  run.source.prop->allocate_boundary_store(run.box, nt - 1);
  // Data for the receiver field: the source's wavelet reversed in time, so that the field, run
  // backwards from the last sample, is excited from its first steps.
  std::vector<float> data = run.source.prop->download_series(run.source.source_set);
  std::reverse(data.begin(), data.end());
  run.receiver.prop->upload_series(run.receiver.receiver_set, data);
  run.sets.source_set = run.source.source_set;
  run.sets.receiver_set = run.receiver.receiver_set;
  run.sets.nt = nt;
  run.sets.source_scale = run.source.scale;
  run.sets.source_health = &run.source.health;
  run.sets.receiver_health = &run.receiver.health;
  run.sets.label = "shot 4";
  return run;
}

std::string migration_instability(MigrationRun& run) {
  try {
    migrate_one_shot(*run.source.prop, *run.receiver.prop, run.sets, run.box,
                     Reconstruction::boundary, 1);
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
  const std::vector<float> image = run.receiver.prop->download_image();
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
