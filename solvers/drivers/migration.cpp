// Migration (solvers/drivers/migration.h) at its top level: the run planned, its fields made, the
// loop over shots, the image and gathers finished, the result. Each step lives in a file of its
// own; solvers/drivers/migration_run.h lists them.
#include "solvers/drivers/migration.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "solvers/contracts/image_finish.h"
#include "solvers/drivers/image_mute.h"
#include "solvers/drivers/migration_run.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/slab_image.h"

namespace rtm {

using namespace migration_steps; // the run and its steps (solvers/drivers/migration_run.h)

std::vector<float> normalise_image(const std::vector<float>& image,
                                   const std::vector<float>& illumination, int nx,
                                   double eps_fraction) {
  std::vector<float> out = image;
  normalise_image_in_place(out, illumination, nx, eps_fraction);
  return out;
}

double illumination_sum(const std::vector<float>& illumination, int nx) {
  if (nx <= 0 || illumination.size() % size_t(nx) != 0)
    throw std::invalid_argument("illumination_sum: the volume is not whole rows of " +
                                std::to_string(nx) + " cells");
  // Threaded by rows, then the rows' sums in order: image_finish.h's order, whatever the threads.
  const auto rows = int64_t(illumination.size() / size_t(nx));
  std::vector<double> row_sums(static_cast<size_t>(rows));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    row_sums[size_t(r)] = image_row_sum(illumination.data() + size_t(r) * size_t(nx), nx);
  double sum = 0;
  for (double s : row_sums) sum += s;
  return sum;
}

void normalise_image_in_place(std::vector<float>& image, const std::vector<float>& illumination,
                              int nx, double eps_fraction) {
  const double mean = illumination_sum(illumination, nx) / double(std::max<size_t>(1, illumination.size()));
  normalise_image_with_eps(image, illumination, eps_fraction * mean);
}

void normalise_image_with_eps(std::vector<float>& image, const std::vector<float>& illumination,
                              double eps) {
  if (image.size() != illumination.size())
    throw std::invalid_argument("normalise_image: image and illumination differ in size");
  const auto n = int64_t(image.size());
  // Threaded: a 512^3 image takes a second on one core.
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < n; ++c)
    image[size_t(c)] = normalised_image_value(image[size_t(c)], illumination[size_t(c)], eps);
}

std::vector<float> laplacian_filter(const std::vector<float>& v, int nx, int ny, int nz, double dx,
                                    double dy, double dz) {
  std::vector<float> out;
  laplacian_filter_into(v, nx, ny, nz, dx, dy, dz, out);
  return out;
}

void laplacian_filter_into(const std::vector<float>& v, int nx, int ny, int nz, double dx,
                           double dy, double dz, std::vector<float>& out) {
  if (v.size() != size_t(nx) * ny * nz)
    throw std::invalid_argument("laplacian_filter: volume is not nz*ny*nx");
  if (&out == &v) throw std::invalid_argument("laplacian_filter_into: out is the volume itself");
  const double ix = 1 / (dx * dx), iy = 1 / (dy * dy), iz = 1 / (dz * dz);
  auto at = [&](int i, int j, int k) {
    i = std::clamp(i, 0, nx - 1);
    j = std::clamp(j, 0, ny - 1);
    k = std::clamp(k, 0, nz - 1);
    return v[(size_t(k) * ny + j) * nx + i];
  };
  out.resize(v.size());
#pragma omp parallel for collapse(2)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        out[(size_t(k) * ny + j) * nx + i] =
            laplacian_filter_value(at(i, j, k), at(i - 1, j, k), at(i + 1, j, k), at(i, j - 1, k),
                                   at(i, j + 1, k), at(i, j, k - 1), at(i, j, k + 1), ix, iy, iz);
}

namespace {

// The groups' partial stacks summed on world rank 0, which alone finishes the image: normalised
// by the illumination, Laplacian-filtered, top-muted.
void finish_image(const MigrationRun& run, MigrationResult& result) {
  const ParallelContext& parallel = run.parallel;
  const VelocityModel& model = run.model;
  if (run.part) { // slab by slab: no rank gathers the whole image (solvers/drivers/slab_image.h)
    SlabImage mine = finish_slab_image(*run.fields, *run.part, parallel, run.params.illumination_eps,
                                       applies_laplacian_filter(run.params));
    result.image_z_first = mine.z_first;
    result.raw_image = std::move(mine.raw_image);
    result.illumination = std::move(mine.illumination);
    result.image = std::move(mine.image);
    return;
  }
  if (!run.params.keep_sums && parallel.group_count() == 1 && run.fields->supports_image_finish()) {
    // Finished where the sums lie (the GPU): one download, of the finished image alone.
    ImageFinish finish;
    finish.eps_fraction = run.params.illumination_eps;
    finish.laplacian = applies_laplacian_filter(run.params);
    finish.dx = model.dx;
    finish.dy = model.dy;
    finish.dz = model.dz;
    run.fields->finish_image(finish);
    const double download_start = steady_seconds();
    result.image = run.fields->download_image();
    result.profile.download_s = steady_seconds() - download_start;
    result.data_norm2 = run.data_norm2;
    mute_image_top(result.image, model, run.params.image_mute_depth, run.params.image_mute_taper);
    return;
  }
  const double download_start = steady_seconds();
  result.raw_image = run.fields->download_image();
  result.illumination = run.fields->download_illumination();
  result.profile.download_s = steady_seconds() - download_start;
  result.data_norm2 = run.data_norm2;
  if (parallel.is_leader() && parallel.group_count() > 1) {
    double sum = 0;
    check_mpi(MPI_Reduce(&run.data_norm2, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, parallel.leaders_comm()),
              "MPI_Reduce (data norm)");
    result.data_norm2 = parallel.is_root() ? sum : 0.0;
    sum_to_root(result.raw_image, parallel.leaders_comm());
    sum_to_root(result.illumination, parallel.leaders_comm());
  }
  if (!parallel.is_root()) {
    result.raw_image.clear();
    result.illumination.clear();
    result.data_norm2 = 0;
    return;
  }
  if (run.params.keep_sums) {
    result.image = normalise_image(result.raw_image, result.illumination, model.nx,
                                   run.params.illumination_eps);
    if (applies_laplacian_filter(run.params))
      result.image = laplacian_filter(result.image, model.nx, model.ny, model.nz, model.dx,
                                      model.dy, model.dz);
  } else {
    // In the sums' memory: the raw image becomes the image, the illumination's takes the filter's.
    result.image = std::move(result.raw_image);
    normalise_image_in_place(result.image, result.illumination, model.nx,
                             run.params.illumination_eps);
    if (applies_laplacian_filter(run.params)) {
      laplacian_filter_into(result.image, model.nx, model.ny, model.nz, model.dx, model.dy,
                            model.dz, result.illumination);
      std::swap(result.image, result.illumination);
    }
    result.raw_image = std::vector<float>();
    result.illumination = std::vector<float>();
  }
  mute_image_top(result.image, model, run.params.image_mute_depth, run.params.image_mute_taper);
}

// The groups' offset gathers summed on world rank 0, which top-mutes them as the image and makes
// the angle gathers from them (solvers/drivers/angle_gathers.h). Nothing without gathers (the z-slab split has none).
void finish_gathers(const MigrationRun& run, MigrationResult& result) {
  if (!run.fields->has_offset_gathers()) return;
  const ParallelContext& parallel = run.parallel;
  result.gather_layout = run.fields->gather_layout();
  result.offset_gathers = run.fields->download_offset_gathers();
  if (parallel.is_leader() && parallel.group_count() > 1)
    sum_to_root(result.offset_gathers, parallel.leaders_comm());
  if (!parallel.is_root()) {
    result.offset_gathers.clear();
    return;
  }
  // The image's top mute (--image-mute-depth): the residue next to the sources and receivers
  // would otherwise reach the larger angles through the slant stack (a lag of h reads h tan(theta)
  // shallower). Gather depth z is the model's plane z (the image box is the model).
  const OffsetGatherLayout& l = result.gather_layout;
  for (int z = 0; z < l.nz; ++z) {
    const float gain = float(image_mute_gain(z * run.model.dz, run.params.image_mute_depth,
                                             run.params.image_mute_taper));
    if (gain == 1.0f) continue;
    for (int64_t panel = 0; panel < int64_t(l.axes) * l.ngy * l.ngx; ++panel)
      for (int lag = 0; lag < l.nlag; ++lag)
        result.offset_gathers[size_t((panel * l.nz + z) * l.nlag + lag)] *= gain;
  }
  if (run.params.make_angle_gathers)
    result.angle_gathers = angle_gathers(result.offset_gathers, result.gather_layout, run.model.dz,
                                         run.model.dx, run.model.dy, run.params.angle_gathers);
}

} // namespace

namespace {
// migrate_shots, on the whole model or (part set) on a group's slabs of it.
MigrationResult migrate(const VelocityModel& model, const SlabModel* part, const ShotFile& shots,
                        const MigrationParams& params, std::ostream& log, RunStats* stats,
                        const MigrationControl& control);
} // namespace

MigrationResult migrate_shots(const VelocityModel& model, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log, RunStats* stats,
                              const MigrationControl& control) {
  return migrate(model, nullptr, shots, params, log, stats, control);
}

MigrationResult migrate_shots(const SlabModel& part, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log, RunStats* stats,
                              const MigrationControl& control) {
  if (!control.parallel || control.parallel->ranks_per_shot() != int(part.slabs.size()))
    throw std::logic_error("migrate_shots: the model is split over " +
                           std::to_string(part.slabs.size()) + " ranks, not the group's");
  return migrate(part.shape, &part, shots, params, log, stats, control);
}

namespace {

MigrationResult migrate(const VelocityModel& model, const SlabModel* part, const ShotFile& shots,
                        const MigrationParams& params, std::ostream& log, RunStats* stats,
                        const MigrationControl& control) {
  const double setup_start = steady_seconds();
  const ParallelContext one_rank;
  const ParallelContext& parallel = control.parallel ? *control.parallel : one_rank;
  std::ostream& info = parallel.is_root() ? log : null_stream(); // one copy of each message
  const ModelExtremes extremes = run_velocity_extremes(model, part);
  check_migration_inputs(model, extremes.vmax, shots, params);
  // The run's physics, decided once: the part's as read, or the whole model's.
  const Physics physics = part ? part->physics : physics_of(model);
  check_imaging_condition(params.imaging_condition, physics,
                          part ? int(part->slabs.size()) : parallel.ranks_per_shot());
  check_offset_gathers(params, physics, part ? int(part->slabs.size()) : parallel.ranks_per_shot(),
                       control.resume);
  // TTI on slabs: the shape has no anisotropy; the CFL check takes the part's fastest velocity,
  // as make_simulation_grid takes fastest_velocity of a whole TTI model.
  ModelExtremes grid_extremes = extremes;
  if (part) grid_extremes.vmax = part->fastest;
  if (part && params.born_perturbation)
    throw std::invalid_argument("migration: Born data need the whole model on each rank");
  MigrationRun run(model, part, shots, params, parallel, info,
                   migration_grid(model, grid_extremes, physics, shots, params, info));
  run.extremes = extremes;
  run.born_data = control.born_data;
  MigrationResult result;
  plan_reconstruction_and_receivers(run);
  result.memory = run.memory;
  const PhaseChoice phase = choose_migration_phase_filter(run);
  result.data_phase_filter = phase.filter;
  result.data_phase_order = phase.order;
  run.data_phase_order = phase.order;
  const bool checkpointing = !control.checkpoint_output.empty();
  // Whether checkpoints may be taken before a stop (their pinned staging): from every shot of the
  // file, before a resume says how many are left.
  make_wavefields(run, checkpointing && CheckpointPolicy(control.checkpoint_every,
                                                         int(shots.shots.size()),
                                                         parallel.group_count(), 0, !part)
                                            .periodic());
  result.reconstruction = run.reconstruction;
  ShotLoopPlan plan = migration_plan(run, resume_migration(run, control), control.checkpoint_every);
  if (checkpointing) {
    run.checkpoint_policy = std::make_unique<CheckpointPolicy>(
        control.checkpoint_every, int(unfinished_shots(plan.total, plan.finished).size()),
        parallel.group_count(), checkpoint_bytes(run), !part);
    if (run.checkpoint_policy->automatic())
      plan.checkpoint_interval = [&run] { return current_checkpoint_interval(run); };
  }
  announce_migration(run, int(unfinished_shots(plan.total, plan.finished).size()), control);
  if (params.profile) run.fields->enable_timing(true);
  prepare_source(run);

  ShotLoopBody body;
  body.run_shot = [&run](int s, ShotProgress& progress) {
    const double start = steady_seconds();
    migrate_shot_of_file(run, s, progress);
    if (run.checkpoint_policy) run.checkpoint_policy->shot_finished(steady_seconds() - start);
  };
  body.keep_shot = [&run](int s) { run.group_finished.push_back(s); };
  if (params.overlap_shots)
    body.prepare_shot = [&run](int s) {
      run.prefetch.start(s, [&run, s] { return prepare_shot_data(run, s); });
    };
  if (!control.checkpoint_output.empty())
    body.checkpoint = [&run, &control] { write_group_checkpoint(run, control); };
  const ShotLoopSummary loop = run_shot_loop(plan, control, parallel, log, body);
  // The last checkpoint written (a stopped run's too) before anything else touches HDF5 or the
  // run returns; its write overlapped the last shot, so this rarely waits.
  run.checkpoint_s += run.checkpoint_writer.finish();
  // A stopped run returns no image, its checkpoint written (by the loop).
  result.stop_signal = loop.stop_signal;
  if (result.stop_signal != 0) return result;

  result.shots_migrated = loop.shots_to_do;
  if (stats) {
    stats->seconds = loop.seconds();
    stats->cell_updates = plan.cell_updates_per_shot * double(loop.shots_to_do);
  }
  if (params.profile) measure_profile(run, loop, setup_start, result.profile);
  const double finish_start = steady_seconds();
  finish_image(run, result);
  finish_gathers(run, result);
  const double release_start = steady_seconds();
  result.profile.finish_s = release_start - finish_start;
  run.release_fields();
  result.profile.release_s = steady_seconds() - release_start;
  if (!parallel.is_root()) return result;
  if (params.profile) print_migration_profile(result.profile, log);
  return result;
}

} // namespace

} // namespace rtm
