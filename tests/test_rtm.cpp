// Reverse time migration on the CPU backend: source-wavefield reconstruction, the Born adjoint
// (dot-product) test, imaging a flat reflector at its depth, direct-wave removal, and the pieces
// (smoothing, mute, filters, memory figures).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/born.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/contracts/image_finish.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/smoothing.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/boundary_saving.h"
#include "tests/support/sanitized_build.h"

namespace rtm {
namespace {

using test::dot;
using test::layered_problem;
using test::make_shot_pair;
using test::random_values;

// Boundary saving: the source field run backwards, its ring restored each step, equals the field
// of the forward run at every step inside the model region (to float rounding).
// With a free surface the box reaches the top of the grid; the ring there is saved like any other.
class BoundarySaving : public ::testing::TestWithParam<bool> {};

TEST_P(BoundarySaving, ReproducesTheForwardField) {
  const bool free_surface = GetParam();
  const test::RtmProblem p = layered_problem(30, 20, 26, 8, 160, free_surface);
  test::ShotPair pair = make_shot_pair(p, "cpu");

  // Rounding errors are absolute (a few ulps of the field's typical size), so they are measured
  // against the largest norm the field reaches; steps where the field is within 10% of that
  // are also checked one by one.
  const test::ReconstructionNorms norms = test::reconstruct_source_field(p, pair);
  EXPECT_TRUE(norms.weights_one);
  EXPECT_EQ(norms.visited, p.nt);
  const double largest = norms.largest_field();
  ASSERT_GT(largest, 0.0);
  const double worst = norms.worst_error() / largest;
  double worst_strong = 0;
  for (int n = 0; n < p.nt; ++n)
    if (norms.field[size_t(n)] >= 0.1 * largest)
      worst_strong = std::max(worst_strong, norms.error[size_t(n)] / norms.field[size_t(n)]);
  std::printf("%s: boundary-saving reconstruction over %d steps: max_n |S_rec[n] - S[n]| / max_n |S[n]| "
              "= %.3g; worst per-step relative error where |S[n]| >= 0.1 max: %.3g\n",
              free_surface ? "free surface" : "absorbing top", p.nt, worst, worst_strong);
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(worst_strong, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Reconstruction, BoundarySaving, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "FreeSurface" : "AbsorbingTop";
                         });

// Without restoring the ring the backward run is wrong: the test above can fail.
TEST(Reconstruction, WithoutTheRingTheBackwardFieldIsWrong) {
  const test::RtmProblem p = layered_problem();
  test::ShotPair pair = make_shot_pair(p, "cpu");
  Wavefield& S = pair.S();
  S.zero_state();
  double forward_peak = 0;
  std::vector<float> field;
  for (int n = 0; n < p.nt; ++n) {
    S.step();
    pair.source->inject(n, pair.sets.source_scale);
    S.copy_current(p.box, field);
    for (float v : field) forward_peak = std::max(forward_peak, double(std::abs(v)));
  }
  S.reverse_time();
  for (int n = p.nt - 1; n > 0; --n) {
    S.step();
    pair.source->inject(n, pair.sets.source_scale);
  }
  S.copy_current(p.box, field); // would be S[0] = 0 if the absorbing layers were reversible
  double peak = 0;
  for (float v : field) peak = std::max(peak, double(std::abs(v)));
  EXPECT_GT(peak, 1e-2 * forward_peak);
}

// Snapshots: every k-th step, k from the Nyquist rate of f_max = 2.5 f0.
TEST(Reconstruction, SnapshotIntervalAndMemoryFigures) {
  EXPECT_EQ(snapshot_interval(1e-3, 10), 20); // 1 / (2 * 25 Hz * 1 ms)
  EXPECT_EQ(snapshot_interval(1e-3, 400), 1);
  const test::RtmProblem p = layered_problem(30, 20, 26, 8, 160);
  const ReconstructionMemory m = reconstruction_memory(p.sim, p.nt, snapshot_interval(p.sim.dt, p.f0));
  EXPECT_EQ(m.box_cells, 30 * 20 * 26);
  EXPECT_EQ(m.ring_cells, 30 * 20 * 26 - 22 * 12 * 18);
  EXPECT_EQ(m.ring_steps, p.nt - 1);
  EXPECT_EQ(m.boundary_bytes(), m.ring_cells * (p.nt - 1) * 4);
  EXPECT_EQ(m.snapshot_count, (p.nt - 1) / m.snapshot_interval + 1);
  EXPECT_EQ(m.snapshot_bytes(), m.box_cells * m.snapshot_count * 4);
  // The ring count agrees with the cells the ring predicate selects.
  int64_t counted = 0;
  for (int k = p.box.z0; k < p.box.z1; ++k)
    for (int j = p.box.y0; j < p.box.y1; ++j)
      for (int i = p.box.x0; i < p.box.x1; ++i) counted += in_boundary_ring(p.box, i, j, k);
  EXPECT_EQ(counted, m.ring_cells);
}

// The dot-product test: the raw RTM image (boundary saving) is the adjoint of Born modeling,
// <B m, d> = <m, B' d> for random m and d, in float32. With the sponge: its damped step is its own
// adjoint, the C-PML's is not (docs/rtm.md, section 8). With the free surface too: its image
// keeps the Laplacian symmetric, and the receivers at 20 m and the source at 33 m (3 and 4.3
// cells below the surface) have sinc weights folded across it, the same for injection and
// sampling.
TEST(Adjoint, BornAndMigrationPassTheDotProductTest) {
  for (bool free_surface : {false, true}) {
    for (unsigned seed : {1u, 2u}) {
      const test::RtmProblem p = layered_problem(30, 20, 26, 8, 160, free_surface, Absorber::sponge);
      test::ShotPair pair = make_shot_pair(p, "cpu");
      const std::vector<float> m = random_values(size_t(p.box.cells()), 100 + seed);
      const std::vector<float> d = random_values(p.receivers.size() * size_t(p.nt), 200 + seed);
      const int nrec = int(p.receivers.size());

      const std::vector<float> bm =
          born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
      pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
      pair.fields->allocate_image(p.box);
      pair.make_boundary_store(p.box, p.nt - 1);
      migrate_one_shot(*pair.fields, pair.sets, p.box, Reconstruction::boundary, 1);
      const std::vector<float> btd = pair.fields->download_image();

      const double lhs = dot(bm, d), rhs = dot(m, btd);
      const double relative = std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
      std::printf("dot-product test (%s, seed %u): <Bm,d> = %.9g, <m,B'd> = %.9g, relative %.3g\n",
                  free_surface ? "free surface" : "absorbing top", seed, lhs, rhs, relative);
      ASSERT_GT(std::abs(lhs), 0.0);
      EXPECT_LT(relative, 1e-4);
    }
  }
}

// The pairing S[n] R[n+1] matters: correlating S[n] with R[n] (one step off) breaks the identity
// by far more than the tolerance, so the test above can fail.
TEST(Adjoint, OffByOneStepFailsTheDotProductTest) {
  const test::RtmProblem p = layered_problem(30, 20, 26, 8, 160, false, Absorber::sponge);
  test::ShotPair pair = make_shot_pair(p, "cpu");
  const int nrec = int(p.receivers.size());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 7);
  const std::vector<float> d = random_values(size_t(nrec) * p.nt, 8);
  const std::vector<float> bm =
      born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
  Wavefield& S = pair.S();
  Wavefield& R = pair.R();
  pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
  pair.fields->allocate_image(p.box);
  pair.make_boundary_store(p.box, p.nt - 1);
  R.zero_state();
  run_source_backwards(S, pair.sets, p.box, Reconstruction::boundary, 1, [&](int n, float) {
    R.step();
    pair.receivers->inject(n, 1.0f);
    pair.fields->accumulate_image(1.0f); // S[n] R[n]: the wrong pairing
  });
  const double lhs = dot(bm, d), rhs = dot(m, pair.fields->download_image());
  EXPECT_GT(std::abs(lhs - rhs) / std::abs(lhs), 1e-2);
}

// Snapshots image at every k-th step only; on the same data the image stays close to the exact
// (boundary-saving) one.
TEST(Reconstruction, SnapshotImageIsCloseToBoundarySavingImage) {
  const test::RtmProblem p = layered_problem();
  const int nrec = int(p.receivers.size());
  // Data: a smooth random perturbation's Born data (band-limited like real data).
  test::ShotPair pair = make_shot_pair(p, "cpu");
  std::vector<float> m(size_t(p.box.cells()), 0.0f);
  for (int k = 0; k < p.box.nz(); ++k)
    for (int j = 0; j < p.box.ny(); ++j)
      for (int i = 0; i < p.box.nx(); ++i)
        if (k == 18) m[(size_t(k) * p.box.ny() + j) * p.box.nx() + i] = 1.0f;
  const std::vector<float> d =
      born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
  auto image = [&](Reconstruction r) {
    test::ShotPair q = make_shot_pair(p, "cpu");
    q.receivers->upload_series(traces_to_series(d, nrec, p.nt));
    q.fields->allocate_image(p.box);
    if (r == Reconstruction::boundary) q.make_boundary_store(p.box, p.nt - 1);
    migrate_one_shot(*q.fields, q.sets, p.box, r, snapshot_interval(p.sim.dt, p.f0));
    return q.fields->download_image();
  };
  ASSERT_GT(snapshot_interval(p.sim.dt, p.f0), 1);
  const std::vector<float> exact = image(Reconstruction::boundary);
  const std::vector<float> snap = image(Reconstruction::snapshots);
  const double correlation = dot(exact, snap) / std::sqrt(dot(exact, exact) * dot(snap, snap));
  std::printf("snapshot vs boundary image: correlation %.4f, norm ratio %.4f\n", correlation,
              std::sqrt(dot(snap, snap) / dot(exact, exact)));
  EXPECT_GT(correlation, 0.95);
  EXPECT_NEAR(std::sqrt(dot(snap, snap) / dot(exact, exact)), 1.0, 0.1);
}

// ---- The whole migration on a two-layer model --------------------------------------------------

// Two layers, the interface at 250 m; shots and receivers near the surface. Migrated in the
// upper layer's velocity (the exact background above the reflector), so the reflector must image
// at its true depth.
struct TwoLayerRun {
  VelocityModel truth, migration;
  ShotFile shots;
  int interface_cell = 0; // first cell of the lower layer
  int layer_cells = 0;    // the sponge's width, in the modeling and in the migrations
};

// `shots` shots along the centre line, `record_time` seconds of data, sponge layers `layer_cells`
// cells wide.
TwoLayerRun model_two_layer_run(int shots, double record_time, int layer_cells) {
  TwoLayerRun run;
  const ModelShape shape{44, 24, 40, 10, 10, 10};
  run.truth = layered_model(shape, {250}, {2000, 2800});
  run.migration = constant_model(shape, 2000);
  run.interface_cell = 25;
  run.layer_cells = layer_cells;
  ModelingParams params;
  params.backend.backend = "cpu";
  params.wavelet.f0 = 18;
  // These tests are about imaging, not the absorber: in a model this small the layers are 90% of
  // the grid, where the C-PML costs about the step's arithmetic again per axis whose layers hold a
  // cell (docs/variants.md, "The C-PML on the CPU"): the Migration tests took four times as long
  // with it (26 CPU-s against 6.4). The sponge serves here; the C-PML is measured in
  // test_boundaries and images with it in test_image_phase.
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = layer_cells;
  params.record_time = record_time;
  Acquisition acq = default_line_survey(run.truth, shots, 30.0, 1);
  std::ostringstream log;
  run.shots = model_shots(run.truth, acq, params, log);
  return run;
}

// Modelled once for all tests of this file.
const TwoLayerRun& two_layer_run() {
  static const TwoLayerRun run = model_two_layer_run(2, 0.42, 20);
  return run;
}

MigrationResult migrate(const TwoLayerRun& run, DirectWaveRemoval removal) {
  MigrationParams params;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge; // as the modeling above
  params.boundary.width = run.layer_cells;
  params.direct_wave = removal;
  std::ostringstream log;
  return migrate_shots(run.migration, run.shots, params, log);
}

// Depth (cell) of the largest |image| in the central column.
int reflector_depth(const std::vector<float>& image, const VelocityModel& m, int from_cell) {
  const int i = m.nx / 2, j = m.ny / 2;
  int best = -1;
  double peak = -1;
  for (int k = from_cell; k < m.nz; ++k) {
    const double v = std::abs(image[(size_t(k) * m.ny + j) * m.nx + i]);
    if (v > peak) peak = v, best = k;
  }
  return best;
}

TEST(Migration, FlatReflectorImagesAtItsDepth) {
  const TwoLayerRun& run = two_layer_run();
  const MigrationResult result = migrate(run, DirectWaveRemoval::mute);
  // Search below the acquisition (source/receivers at 3 cells).
  const int depth = reflector_depth(result.image, run.migration, 8);
  std::printf("flat reflector: imaged at cell %d, interface between cells %d and %d\n", depth,
              run.interface_cell - 1, run.interface_cell);
  // The interface lies between cells 24 (upper velocity) and 25 (lower velocity). With the data
  // phase filter (docs/rtm.md, 6a) the peak is zero-phase: one cell, not two, is the bar.
  EXPECT_LE(std::abs(depth - (run.interface_cell - 0.5)), 1.0);
  // A positive impedance step images with the sign of the wavelet peak.
  const VelocityModel& m = run.migration;
  EXPECT_GT(result.image[(size_t(depth) * m.ny + m.ny / 2) * m.nx + m.nx / 2], 0.0f);
  // Flat: the same depth off the centre line.
  const int i_off = m.nx / 2 + 8;
  int best = -1;
  double peak = -1;
  for (int k = 8; k < m.nz; ++k) {
    const double v = std::abs(result.image[(size_t(k) * m.ny + m.ny / 2) * m.nx + i_off]);
    if (v > peak) peak = v, best = k;
  }
  EXPECT_LE(std::abs(best - depth), 1);
}

// The direct wave correlates with the source field all along its path near the surface. Muting
// it must leave much less energy in the shallow part (above half the reflector depth).
TEST(Migration, DirectWaveMuteRemovesShallowEnergy) {
  const TwoLayerRun& run = two_layer_run();
  const MigrationResult muted = migrate(run, DirectWaveRemoval::mute);
  const MigrationResult unmuted = migrate(run, DirectWaveRemoval::none);
  const VelocityModel& m = run.migration;
  auto energy = [&](const std::vector<float>& image, int k0, int k1) {
    double e = 0;
    for (int k = k0; k < k1; ++k)
      for (int c = 0; c < m.nx * m.ny; ++c) e += double(image[size_t(k) * m.nx * m.ny + c]) * image[size_t(k) * m.nx * m.ny + c];
    return e;
  };
  const int shallow_end = run.interface_cell / 2;
  const double shallow_muted = energy(muted.image, 0, shallow_end);
  const double shallow_unmuted = energy(unmuted.image, 0, shallow_end);
  const double reflector_muted = energy(muted.image, run.interface_cell - 3, run.interface_cell + 3);
  std::printf("shallow image energy: %.3g muted, %.3g unmuted (ratio %.3g); reflector %.3g\n",
              shallow_muted, shallow_unmuted, shallow_muted / shallow_unmuted, reflector_muted);
  EXPECT_LT(shallow_muted, 0.25 * shallow_unmuted);
  EXPECT_GT(reflector_muted, shallow_muted);
}

// The check comes before any step, so the shots need no modeling (which costs half a minute under
// the sanitizers): a header and one gather, at a dt stable for 2800 m/s, migrated at 6000 m/s.
TEST(Migration, RefusesDataWhoseDtIsUnstableInTheMigrationModel) {
  const VelocityModel fast = constant_model(ModelShape{44, 24, 40, 10, 10, 10}, 6000);
  ShotFile shots;
  shots.nt = 50;
  shots.dt = 0.9 * cfl_dt_limit(2800, 10, 10, 10);
  ASSERT_GT(shots.dt, cfl_dt_limit(6000, 10, 10, 10));
  shots.f0 = 18;
  shots.t0 = default_ricker_delay(shots.f0);
  shots.wavelet.assign(size_t(shots.nt), 0.0f);
  shots.wavelet[10] = 1;
  shots.receivers = {{30.0, 120.0, 200.0}, {30.0, 120.0, 250.0}};
  ShotGather gather;
  gather.source = {30.0, 120.0, 220.0};
  gather.data.assign(shots.receivers.size() * size_t(shots.nt), 0.0f);
  gather.data[5] = 1;
  shots.shots.push_back(gather);
  MigrationParams params;
  params.backend.backend = "cpu";
  std::ostringstream log;
  try {
    migrate_shots(fast, shots, params, log);
    ADD_FAILURE() << "the unstable dt was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("is above the stability limit of the migration model"));
  }
}

// --profile: every wave step of the loop is counted (forward nt, backward source nt - 1 with
// boundary saving, receiver nt), the parts add up to no more than the loop's wall time, the
// report is printed, and timing changes no result.
TEST(Migration, ProfileCountsEveryStepAndChangesNoResult) {
  // One shot: the counts are per shot, and the test runs four migrations. Under ASan (the sanitized
  // stage of .ci/run, where this test stands in for the flat-reflector and mute measurements above)
  // the same code paths on a smaller problem, a third of the work: sponge layers of 10 cells, not
  // 20, and 0.35 s of data, not 0.42 s (the reflection off 250 m still peaks inside it, at 0.3 s).
  const TwoLayerRun run =
      test::kUnderAsan ? model_two_layer_run(1, 0.35, 10) : model_two_layer_run(1, 0.42, 20);
  const ShotFile& one_shot = run.shots;
  const VelocityModel& model = run.migration;
  const int shots = 1, nt = one_shot.nt;
  for (Reconstruction r : {Reconstruction::boundary, Reconstruction::snapshots}) {
    MigrationParams params;
    params.backend.backend = "cpu";
    params.boundary.absorber = Absorber::sponge; // as the modeling above
    params.boundary.width = run.layer_cells;
    params.reconstruction = r;
    std::ostringstream plain_log, profiled_log;
    const MigrationResult plain = migrate_shots(model, one_shot, params, plain_log);
    params.profile = true;
    const MigrationResult profiled = migrate_shots(model, one_shot, params, profiled_log);

    // An image that is all zero would make the comparisons below empty.
    float largest = 0;
    for (float v : plain.raw_image) largest = std::max(largest, std::abs(v));
    ASSERT_GT(largest, 0.0f) << reconstruction_name(r);
    EXPECT_FALSE(plain.profile.measured);
    EXPECT_EQ(plain_log.str().find("PERFORMANCE rtm-migrate"), std::string::npos);
    EXPECT_EQ(profiled.raw_image, plain.raw_image) << reconstruction_name(r);
    EXPECT_EQ(profiled.illumination, plain.illumination) << reconstruction_name(r);

    const MigrationProfile& p = profiled.profile;
    ASSERT_TRUE(p.measured);
    const int64_t steps_per_shot = r == Reconstruction::boundary ? 3 * nt - 1 : 2 * nt;
    EXPECT_EQ(p.timing.steps, steps_per_shot * shots) << reconstruction_name(r);
    EXPECT_EQ(p.sweeps, r == Reconstruction::boundary ? 3 : 2);
    EXPECT_GT(p.timing.step_ms, 0.0);
    EXPECT_GT(p.timing.imaging_ms, 0.0);
    EXPECT_GT(p.timing.points_ms, 0.0);
    if (r == Reconstruction::boundary) {
      EXPECT_GT(p.timing.boundary_ms, 0.0);
      EXPECT_EQ(p.timing.box_copy_ms, 0.0);
    } else {
      EXPECT_EQ(p.timing.boundary_ms, 0.0);
      EXPECT_GT(p.timing.box_copy_ms, 0.0);
    }
    EXPECT_EQ(p.timing.born_ms, 0.0);
    EXPECT_LE(p.timing.total_ms() * 1e-3, p.loop_s);
    EXPECT_GE(p.host_s(), 0.0);
    const double cells = double(p.grid.interior_cells()) * nt * shots;
    EXPECT_NEAR(p.rtm_gcells_per_s(), cells * 2 / p.loop_s * 1e-9, 1e-12);
    EXPECT_NEAR(p.sweep_gcells_per_s(), cells * p.sweeps / p.loop_s * 1e-9, 1e-12);
    const std::string report = profiled_log.str();
    for (const char* expected : {"rtm: profile of the shot loop", "wave-step kernels", "imaging",
                                 "boundary save/restore", "host, transfers, idle",
                                 "PERFORMANCE rtm-migrate backend=cpu", "step_fraction=",
                                 "rtm_gcells_per_s="})
      EXPECT_NE(report.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                          << report;
  }
}

TEST(Profiling, CpuWavefieldTimesWhileEnabledAndKeepsTheTotals) {
  const test::RtmProblem p = layered_problem();
  CpuShotFields fields(make_propagator_setup(p.sim));
  Wavefield& cpu = fields.receiver(); // imaging counts on the receiver field's clock
  cpu.step();
  EXPECT_EQ(cpu.timing().steps, 0) << "timing is off by default";
  cpu.enable_timing(true);
  const std::unique_ptr<BoundaryStore> store = cpu.make_boundary_store(p.box, 2);
  fields.allocate_image(p.box);
  for (int n = 0; n < 3; ++n) cpu.step();
  store->save(1);
  store->restore(1);
  fields.accumulate_image(1.0f);
  std::vector<float> dense;
  cpu.copy_current(p.box, dense);
  const PropagatorTiming t = cpu.timing();
  EXPECT_EQ(t.steps, 3);
  EXPECT_GT(t.step_ms, 0.0);
  EXPECT_GT(t.boundary_ms, 0.0);
  EXPECT_GT(t.imaging_ms, 0.0);
  EXPECT_GT(t.box_copy_ms, 0.0);
  EXPECT_EQ(t.points_ms, 0.0);
  EXPECT_EQ(t.born_ms, 0.0);
  EXPECT_DOUBLE_EQ(t.total_ms(), t.step_ms + t.boundary_ms + t.imaging_ms + t.box_copy_ms);
  cpu.enable_timing(false);
  cpu.step();
  EXPECT_EQ(cpu.timing().steps, 3) << "off: the totals stay";
  cpu.enable_timing(true);
  EXPECT_EQ(cpu.timing().steps, 0) << "on again: counted from zero";
  EXPECT_EQ(cpu.timing().total_ms(), 0.0);
}

// ---- Pieces -------------------------------------------------------------------------------------

TEST(Mute, ZeroesUntilTheDirectWaveHasPassed) {
  const int nt = 400;
  const double dt = 1e-3, t0 = 0.1, f0 = 10, v = 2000;
  const std::vector<Position> receivers = {{0, 0, 400}, {0, 300, 400}};
  std::vector<float> traces(receivers.size() * nt, 1.0f);
  mute_direct_wave(traces, {0, 0, 0}, receivers, nt, dt, t0, f0, v);
  for (size_t r = 0; r < receivers.size(); ++r) {
    const double dist = std::sqrt(receivers[r][1] * receivers[r][1] + receivers[r][2] * receivers[r][2]);
    const double passed = t0 + dist / v + 1 / f0;
    for (int t = 0; t < nt; ++t) {
      const float g = traces[r * nt + size_t(t)];
      if (t * dt <= passed) EXPECT_EQ(g, 0.0f) << "t = " << t * dt;
      else if (t * dt >= passed + 0.5 / f0) EXPECT_EQ(g, 1.0f) << "t = " << t * dt;
      else EXPECT_TRUE(g > 0.0f && g < 1.0f) << "t = " << t * dt;
    }
  }
}

TEST(ImageFilters, LaplacianOfAQuadraticIsConstant) {
  const int nx = 9, ny = 7, nz = 8;
  const double dx = 10, dy = 12, dz = 5;
  std::vector<float> v(size_t(nx) * ny * nz);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        v[(size_t(k) * ny + j) * nx + i] = float(3 * (i * dx) * (i * dx) + 2 * (k * dz) * (k * dz) + j * dy);
  const std::vector<float> f = laplacian_filter(v, nx, ny, nz, dx, dy, dz);
  // -lap = -(6 + 4) away from the edges (where edge values are repeated).
  for (int k = 1; k < nz - 1; ++k)
    for (int j = 1; j < ny - 1; ++j)
      for (int i = 1; i < nx - 1; ++i) EXPECT_NEAR(f[(size_t(k) * ny + j) * nx + i], -10.0, 1e-3);
}

TEST(ImageFilters, NormalisationDividesByIlluminationPlusEps) {
  const std::vector<float> image = {2, 4, 0, -3};
  const std::vector<float> illumination = {1, 4, 0, 3};
  const std::vector<float> out = normalise_image(image, illumination, 2, 0.5); // eps = 0.5 * 2 = 1
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[1], 0.8f);
  EXPECT_FLOAT_EQ(out[2], 0.0f);
  EXPECT_FLOAT_EQ(out[3], -0.75f);
}

// Subnormal floats are read and written as zero whatever the thread's floating-point mode
// (solvers/contracts/image_finish.h), so a GPU's finish gives the host's bits.
TEST(ImageFilters, SubnormalValuesCountAsZero) {
  const float tiny = 1e-39f;
  ASSERT_NE(tiny, 0.0f);
  const std::vector<float> image = {tiny, 2, 4e-39f, 1};
  const std::vector<float> illumination = {1, tiny, 1, 1e38f};
  const std::vector<float> out = normalise_image(image, illumination, 2, 0.0);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f); // 2 / 0: the denominator is not positive
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 0.0f); // 1e-38: a subnormal float
  EXPECT_EQ(flush_subnormal(-tiny), 0.0f);
  EXPECT_TRUE(std::signbit(flush_subnormal(-tiny)));
  EXPECT_EQ(flush_subnormal(1.2e-38f), 1.2e-38f);
  const std::vector<float> volume(27, tiny);
  for (float v : laplacian_filter(volume, 3, 3, 3, 1, 1, 1)) EXPECT_EQ(v, 0.0f);
}

TEST(Acquisition, ShotAndReceiverGrids) {
  const VelocityModel m = constant_model({21, 11, 10, 10, 20, 10}, 2000);
  SurveyLayout layout;
  layout.shots_x = 3;
  layout.shots_y = 2;
  layout.source_depth = 15;
  layout.receiver_depth = 25;
  layout.receiver_step = 5;
  layout.receiver_grid = true;
  const Acquisition a = make_survey(m, layout);
  ASSERT_EQ(a.sources.size(), 6u);
  ASSERT_EQ(a.receivers.size(), 5u * 3u); // x: 0, 50, .., 200 m; y: 0, 100, 200 m
  for (const Position& s : a.sources) EXPECT_DOUBLE_EQ(s[0], 15.0);
  for (const Position& r : a.receivers) EXPECT_DOUBLE_EQ(r[0], 25.0);
  // Shots at the centres of a 3 x 2 partition of the 200 m x 200 m surface.
  EXPECT_DOUBLE_EQ(a.sources[0][2], 200.0 / 6);
  EXPECT_DOUBLE_EQ(a.sources[2][2], 5 * 200.0 / 6);
  EXPECT_DOUBLE_EQ(a.sources[0][1], 50.0);
  EXPECT_DOUBLE_EQ(a.sources[5][1], 150.0);
  EXPECT_DOUBLE_EQ(a.receivers.back()[1], 200.0);
  EXPECT_DOUBLE_EQ(a.receivers.back()[2], 200.0);
  // A line: the centre inline, as default_line_survey lays it out.
  layout.shots_y = 1;
  layout.receiver_grid = false;
  layout.receiver_depth = 15;
  const Acquisition line = make_survey(m, layout);
  const Acquisition reference = default_line_survey(m, 3, 15, 5);
  EXPECT_EQ(line.sources, reference.sources);
  EXPECT_EQ(line.receivers, reference.receivers);
  layout.shots_x = 0;
  EXPECT_THROW(make_survey(m, layout), InputError);
}

TEST(Smoothing, ConstantModelIsUnchanged) {
  const VelocityModel m = constant_model({12, 9, 10, 10, 10, 10}, 2345);
  const VelocityModel s = smooth_model(m, 120);
  for (float v : s.vp) EXPECT_NEAR(v, 2345.0f, 1e-2f);
}

TEST(Smoothing, StepBecomesARampOfTheGivenWidth) {
  // A velocity step at 400 m in z; smoothing length 200 m = FWHM of the Gaussian (sigma 84.9 m).
  const VelocityModel m = layered_model({6, 5, 81, 10, 10, 10}, {400}, {2000, 3000});
  const double length = 200, sigma = length / 2.3548;
  const VelocityModel s = smooth_model(m, length);
  std::vector<double> slowness(size_t(m.nz));
  for (int k = 0; k < m.nz; ++k) slowness[size_t(k)] = 1.0 / s.at(3, 2, k);
  // Monotone, the same in every column, and the edges far from the step untouched.
  for (int k = 1; k < m.nz; ++k) EXPECT_LE(slowness[size_t(k)], slowness[size_t(k - 1)] + 1e-12);
  EXPECT_FLOAT_EQ(s.at(0, 0, 50), s.at(5, 4, 50));
  EXPECT_NEAR(s.at(3, 2, 0), 2000.0f, 1e-2f);
  EXPECT_NEAR(s.at(3, 2, m.nz - 1), 3000.0f, 1e-2f);
  // The smoothed slowness of a step is the Gaussian's cumulative distribution: at one sigma
  // above the step (which lies between cells 39 and 40, at 395 m) it has moved 15.9% of the way.
  const double s_top = 1 / 2000.0, s_bottom = 1 / 3000.0;
  auto fraction = [&](double z) {
    const double k = z / 10;
    const int k0 = int(std::floor(k));
    const double w = k - k0;
    const double value = (1 - w) * slowness[size_t(k0)] + w * slowness[size_t(k0 + 1)];
    return (s_top - value) / (s_top - s_bottom);
  };
  EXPECT_NEAR(fraction(395), 0.5, 0.02);
  EXPECT_NEAR(fraction(395 - sigma), 0.159, 0.03);
  EXPECT_NEAR(fraction(395 + sigma), 0.841, 0.03);
}

TEST(Smoothing, ZeroLengthIsIdentityAndNegativeIsRefused) {
  const VelocityModel m = layered_model({4, 4, 10, 10, 10, 10}, {50}, {1500, 2500});
  EXPECT_EQ(smooth_model(m, 0).vp, m.vp);
  EXPECT_THROW(smooth_model(m, -5), InputError);
}

} // namespace
} // namespace rtm
