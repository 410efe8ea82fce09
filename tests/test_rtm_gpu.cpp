// RTM on the CUDA backend against the CPU reference: modelled traces, boundary-saving
// reconstruction, the Born dot-product test, and migrated images. Skipped where no GPU is usable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "io/checkpoint_file.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/boundary_saving.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/relative_l2.h"
#include "tests/support/two_layer_migration.h"

namespace rtm {
namespace {

using test::dot;
using test::layered_problem;
using test::make_shot_pair;
using test::random_values;

// `rtm model` on both backends: the same traces to 1e-5 (relative L2 over each gather).
TEST(RtmGpu, ModeledTracesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const VelocityModel model = salt_model({48, 32, 40, 10, 10, 10}, 1500, 3000, 4500);
  ModelingParams params;
  params.wavelet.f0 = 15;
  params.boundary.width = 12;
  params.record_time = 0.5;
  const Acquisition acq = default_line_survey(model, 2, 30.0, 1);
  std::ostringstream log;
  params.backend.backend = "cpu";
  const ShotFile cpu = model_shots(model, acq, params, log);
  params.backend.backend = "cuda";
  const ShotFile gpu = model_shots(model, acq, params, log);
  ASSERT_EQ(cpu.shots.size(), gpu.shots.size());
  for (size_t s = 0; s < cpu.shots.size(); ++s) {
    const double err = relative_l2(gpu.shots[s].data, cpu.shots[s].data);
    std::printf("shot %zu: GPU vs CPU traces, relative L2 %.3g\n", s, err);
    EXPECT_LE(err, 1e-5) << "shot " << s;
  }
}

TEST(RtmGpu, BoundarySavingReproducesTheForwardField) {
  SKIP_WITHOUT_GPU();
  const test::RtmProblem p = layered_problem();
  test::ShotPair pair = make_shot_pair(p, "cuda");
  const test::ReconstructionNorms norms = test::reconstruct_source_field(p, pair);
  const double worst_error = norms.worst_error(), largest = norms.largest_field();
  ASSERT_GT(largest, 0.0);
  std::printf("GPU boundary-saving reconstruction: max error / max norm %.3g\n", worst_error / largest);
  EXPECT_LT(worst_error / largest, 1e-4);
}

TEST(RtmGpu, BornAndMigrationPassTheDotProductTest) {
  SKIP_WITHOUT_GPU();
  // The sponge: its damped step is its own adjoint, the C-PML's is not (docs/rtm.md, section 8).
  const test::RtmProblem p = layered_problem(30, 20, 26, 8, 160, false, Absorber::sponge);
  test::ShotPair pair = make_shot_pair(p, "cuda");
  const int nrec = int(p.receivers.size());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 11);
  const std::vector<float> d = random_values(size_t(nrec) * p.nt, 12);
  const std::vector<float> bm =
      born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
  pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
  pair.fields->allocate_image(p.box);
  pair.make_boundary_store(p.box, p.nt - 1);
  migrate_one_shot(*pair.fields, pair.sets, p.box, Reconstruction::boundary, 1);
  const double lhs = dot(bm, d), rhs = dot(m, pair.fields->download_image());
  const double relative = std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
  std::printf("GPU dot-product test: <Bm,d> = %.9g, <m,B'd> = %.9g, relative %.3g\n", lhs, rhs, relative);
  ASSERT_GT(std::abs(lhs), 0.0);
  EXPECT_LT(relative, 1e-4);
}

// Born data, the snapshot path and the image pieces on the GPU give the CPU's numbers.
TEST(RtmGpu, BornTracesAndImagesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const test::RtmProblem p = layered_problem();
  const int nrec = int(p.receivers.size());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 21);
  const std::vector<float> d = random_values(size_t(nrec) * p.nt, 22);
  auto run = [&](const std::string& backend, Reconstruction r, std::vector<float>& born,
                 std::vector<float>& image, std::vector<float>& illumination) {
    test::ShotPair pair = make_shot_pair(p, backend);
    born = born_model_one_shot(*pair.fields, pair.sets, nrec, p.box, m);
    pair.receivers->upload_series(traces_to_series(d, nrec, p.nt));
    pair.fields->allocate_image(p.box);
    if (r == Reconstruction::boundary) pair.make_boundary_store(p.box, p.nt - 1);
    migrate_one_shot(*pair.fields, pair.sets, p.box, r, snapshot_interval(p.sim.dt, p.f0));
    image = pair.fields->download_image();
    illumination = pair.fields->download_illumination();
  };
  for (Reconstruction r : {Reconstruction::boundary, Reconstruction::snapshots}) {
    std::vector<float> born_cpu, image_cpu, ill_cpu, born_gpu, image_gpu, ill_gpu;
    run("cpu", r, born_cpu, image_cpu, ill_cpu);
    run("cuda", r, born_gpu, image_gpu, ill_gpu);
    const double e_born = relative_l2(born_gpu, born_cpu), e_image = relative_l2(image_gpu, image_cpu),
                 e_ill = relative_l2(ill_gpu, ill_cpu);
    std::printf("%s: GPU vs CPU relative L2: Born traces %.3g, image %.3g, illumination %.3g\n",
                reconstruction_name(r), e_born, e_image, e_ill);
    EXPECT_LE(e_born, 1e-5);
    EXPECT_LE(e_image, 1e-4);
    EXPECT_LE(e_ill, 1e-4);
  }
}

// The whole migration (mute, normalisation, Laplacian filter) on both backends.
TEST(RtmGpu, MigratedImagesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  test::TwoLayerMigration run;
  std::ostringstream log;
  const ShotFile shots = run.line_shots(log);
  run.params.backend.backend = "cpu";
  const MigrationResult cpu = migrate_shots(run.migration, shots, run.params, log);
  run.params.backend.backend = "cuda";
  const MigrationResult gpu = migrate_shots(run.migration, shots, run.params, log);
  const double e_raw = relative_l2(gpu.raw_image, cpu.raw_image);
  const double e_image = relative_l2(gpu.image, cpu.image);
  std::printf("migrated image GPU vs CPU: raw %.3g, final %.3g (relative L2)\n", e_raw, e_image);
  EXPECT_LE(e_raw, 1e-4);
  EXPECT_LE(e_image, 1e-3);
}

// ISIC and the separated condition in whole migrations, both reconstructions, on both backends.
// The wavefields differ by the steps' rounding (the CUDA steps fuse multiply-adds); ISIC's
// derivatives weight that noise by |k|^2, and the separated condition's sign tests can decide a
// cell differently where a field's direction is a tie, so the bars are wider than cross's (1e-4):
// 1e-3 and 1e-2 on the raw image (first set without a GPU at hand: to be confirmed).
TEST(RtmGpu, IsicAndSeparatedMigratedImagesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  test::TwoLayerMigration run;
  std::ostringstream log;
  const ShotFile shots = run.line_shots(log);
  for (ImagingCondition c : {ImagingCondition::isic, ImagingCondition::separated})
    for (Reconstruction reconstruction : {Reconstruction::boundary, Reconstruction::snapshots}) {
      MigrationParams params = run.params;
      params.imaging_condition = c;
      params.reconstruction = reconstruction;
      params.backend.backend = "cpu";
      const MigrationResult cpu = migrate_shots(run.migration, shots, params, log);
      params.backend.backend = "cuda";
      const MigrationResult gpu = migrate_shots(run.migration, shots, params, log);
      const double e_raw = relative_l2(gpu.raw_image, cpu.raw_image);
      const double e_image = relative_l2(gpu.image, cpu.image);
      std::printf("%s, %s: migrated image GPU vs CPU: raw %.3g, final %.3g (relative L2)\n",
                  imaging_condition_info(c).name, reconstruction_name(reconstruction), e_raw,
                  e_image);
      const double bar = c == ImagingCondition::isic ? 1e-3 : 1e-2;
      EXPECT_LE(e_raw, bar) << imaging_condition_info(c).name << ", "
                            << reconstruction_name(reconstruction);
      EXPECT_LE(e_image, 10 * bar) << imaging_condition_info(c).name << ", "
                                   << reconstruction_name(reconstruction);
    }
}

// Per-shot receivers (a spread moving with the source): each shot's receiver set made on the GPU
// for that shot and freed with it. Modeled traces and migrated images match the CPU's as above.
TEST(RtmGpu, MovingSpreadModelsAndMigratesAsTheCpu) {
  SKIP_WITHOUT_GPU();
  test::TwoLayerMigration run;
  const VelocityModel& truth = run.truth;
  SurveyLayout layout;
  layout.shots_x = 3;
  layout.source_depth = layout.receiver_depth = 30;
  Acquisition acq = make_survey(truth, layout);
  MovingSpread spread;
  spread.x_min = -150;
  spread.x_max = 100;
  spread.dx = spread.dy = 10;
  spread.depth = 30;
  attach_moving_spread(acq, truth, spread);
  ModelingParams& modeling = run.modeling;
  std::ostringstream log;
  const ShotFile cpu_shots = model_shots(truth, acq, modeling, log);
  modeling.backend.backend = "cuda";
  const ShotFile gpu_shots = model_shots(truth, acq, modeling, log);
  ASSERT_EQ(cpu_shots.shots.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    ASSERT_EQ(gpu_shots.shots[s].receivers, acq.shot_receivers[s]);
    const double err = relative_l2(gpu_shots.shots[s].data, cpu_shots.shots[s].data);
    std::printf("moving spread, shot %zu (%zu receivers): GPU vs CPU traces, relative L2 %.3g\n", s,
                acq.shot_receivers[s].size(), err);
    EXPECT_LE(err, 1e-5) << "shot " << s;
  }
  run.params.backend.backend = "cpu";
  const MigrationResult cpu = migrate_shots(run.migration, cpu_shots, run.params, log);
  run.params.backend.backend = "cuda";
  const MigrationResult gpu = migrate_shots(run.migration, cpu_shots, run.params, log);
  const double e_raw = relative_l2(gpu.raw_image, cpu.raw_image);
  const double e_image = relative_l2(gpu.image, cpu.image);
  std::printf("moving spread, migrated image GPU vs CPU: raw %.3g, final %.3g (relative L2)\n",
              e_raw, e_image);
  EXPECT_LE(e_raw, 1e-4);
  EXPECT_LE(e_image, 1e-3);
}

// The many-shot tests' data: `count` shots on a line over a two-layer model of kLineShape,
// modeled on the CPU (18 Hz, 16-cell layers, 0.4 s).
const ModelShape kLineShape{40, 24, 36, 10, 10, 10};
ShotFile line_shots(int count) {
  const VelocityModel truth = layered_model(kLineShape, {200}, {2000, 2700});
  ModelingParams modeling;
  modeling.backend.backend = "cpu";
  modeling.wavelet.f0 = 18;
  modeling.boundary.width = 16;
  modeling.record_time = 0.4;
  std::ostringstream log;
  return model_shots(truth, default_line_survey(truth, count, 30.0, 1), modeling, log);
}

// Many shots (docs/rtm.md, "Many shots"): the next shot's set-up made on the prefetch thread and
// the point sets replaced in place from pinned staging on the fields' streams, for the shared
// spread and for per-shot spreads whose sizes change (n, n/2, n/2, n: replaced where the size
// allows, made anew where not). The GPU's overlapped run images as the CPU's sequential one, within
// the tolerances above, and the profile counts the set-up made ahead.
TEST(RtmGpu, ManyShotsOverlappedImageAsTheCpuSequentialRun) {
  SKIP_WITHOUT_GPU();
  const ModelShape shape = kLineShape;
  const ShotFile shared = line_shots(4);
  std::ostringstream log;
  ShotFile moving = shared;
  const size_t n = shared.receivers.size(), nt = size_t(shared.nt);
  for (size_t shot = 0; shot < moving.shots.size(); ++shot) {
    const size_t count = (shot == 1 || shot == 2) ? n / 2 : n;
    const size_t first = shot % 2 == 0 ? 0 : n - count;
    moving.shots[shot].receivers.assign(shared.receivers.begin() + long(first),
                                        shared.receivers.begin() + long(first + count));
    moving.shots[shot].data.assign(shared.shots[shot].data.begin() + long(first * nt),
                                   shared.shots[shot].data.begin() + long((first + count) * nt));
  }
  const VelocityModel migration = constant_model(shape, 2000);
  for (const ShotFile* shots : {&shared, static_cast<const ShotFile*>(&moving)}) {
    const char* which = shots == &shared ? "shared spread" : "moving spreads";
    MigrationParams params;
    params.boundary.width = 16;
    params.backend.backend = "cpu";
    params.overlap_shots = false;
    const MigrationResult cpu = migrate_shots(migration, *shots, params, log);
    params.backend.backend = "cuda";
    params.overlap_shots = true;
    params.profile = true;
    const MigrationResult gpu = migrate_shots(migration, *shots, params, log);
    const double e_raw = relative_l2(gpu.raw_image, cpu.raw_image);
    const double e_image = relative_l2(gpu.image, cpu.image);
    const double e_ill = relative_l2(gpu.illumination, cpu.illumination);
    std::printf("%s, 4 shots overlapped on the GPU vs sequential on the CPU: raw %.3g, final %.3g, "
                "illumination %.3g (relative L2); idle %.2f%%, set-up between shots %.4f s, made "
                "ahead %.4f s\n",
                which, e_raw, e_image, e_ill, 100 * gpu.profile.idle_fraction(),
                gpu.profile.setup_wait_s, gpu.profile.prefetch_s);
    EXPECT_LE(e_raw, 1e-4) << which;
    EXPECT_LE(e_image, 1e-3) << which;
    EXPECT_LE(e_ill, 1e-4) << which;
    EXPECT_TRUE(gpu.profile.overlap_shots);
    EXPECT_GT(gpu.profile.prefetch_s, 0.0) << which;
    EXPECT_EQ(gpu.profile.prefetched_shots, 4) << which; // every shot's set-up made ahead
  }
}

// A checkpoint every shot (`rtm migrate`'s default): on the GPU the sums go to the host through
// pinned buffers on a copy stream while the next shot steps (kernels/cuda/fields/cuda_shot_fields.cuh).
// The run's image is that of a run without checkpoints bit for bit (one variant, sources and
// receivers on nodes: no atomic sums in another order), and the last checkpoint, written before
// the last shot, holds the first two shots' sums bit for bit.
TEST(RtmGpu, CheckpointsEveryShotChangeNoImageAndHoldTheirShotsSums) {
  SKIP_WITHOUT_GPU();
  const ModelShape shape = kLineShape;
  const ShotFile shots = line_shots(3);
  std::ostringstream log;
  const VelocityModel migration = constant_model(shape, 2000);
  MigrationParams params;
  params.boundary.width = 16;
  params.backend.backend = "cuda";
  params.backend.variant = "regqueue_vec4";
  const MigrationResult plain = migrate_shots(migration, shots, params, log);

  const std::string output = "/tmp/rtm_gpu_checkpoints_" + std::to_string(getpid()) + ".h5";
  MigrationControl control;
  control.checkpoint_output = output;
  control.checkpoint_every = 1;
  control.identity = migration_identity(migration, shots, "shots.h5", params);
  const MigrationResult checkpointed = migrate_shots(migration, shots, params, log, nullptr, control);
  const MigrationCheckpoint last = read_checkpoint(checkpoint_path(output, 0));
  std::remove(checkpoint_path(output, 0).c_str());
  EXPECT_TRUE(checkpointed.raw_image == plain.raw_image) << "relative L2 "
      << relative_l2(checkpointed.raw_image, plain.raw_image);
  EXPECT_TRUE(checkpointed.illumination == plain.illumination);

  ShotFile first_two = shots;
  first_two.shots.resize(2);
  const MigrationResult two = migrate_shots(migration, first_two, params, log);
  EXPECT_EQ(last.finished, (std::vector<long long>{0, 1}));
  EXPECT_TRUE(last.raw_image == two.raw_image) << "relative L2 " << relative_l2(last.raw_image, two.raw_image);
  EXPECT_TRUE(last.illumination == two.illumination);
  EXPECT_GT(relative_l2(two.raw_image, plain.raw_image), 1e-3) << "the third shot adds to the sums";
}

} // namespace
} // namespace rtm
