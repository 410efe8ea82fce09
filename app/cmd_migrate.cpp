// rtm migrate: reverse time migration of shot gathers into an image (HDF5 + PNG slices).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "app/stop_signals.h"
#include "io/atomic_file.h"
#include "io/checkpoint_file.h"
#include "io/errors.h"
#include "io/png_image.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/migration.h"
#include "solvers/shot_parallel.h"
#include "solvers/smoothing.h"

namespace rtm::app {
namespace {

struct MigrateArgs {
  std::string shots_path;
  std::string model_path;           // true model, smoothed by --smooth
  std::string migration_model_path; // used as is
  double smooth = 0;
  std::string reconstruction = "boundary";
  std::string direct_wave = "mute";
  bool no_laplacian = false;
  std::string output;
  std::string png_dir;
  double clip_percentile = 99;
  std::string colors = "seismic";
  bool resume = false;
  int checkpoint_every = 1;
  MigrationParams params;
  ParallelOptions parallel;
};

void run_migrate(MigrateArgs& a) {
  a.params.reconstruction = parse_reconstruction(a.reconstruction);
  a.params.direct_wave = parse_direct_wave_removal(a.direct_wave);
  a.params.laplacian_filter = !a.no_laplacian;
  if (a.model_path.empty() == a.migration_model_path.empty())
    throw InputError("give exactly one of --model (a model to smooth by --smooth) and "
                     "--migration-model (used as is)");
  if (!a.migration_model_path.empty() && a.smooth != 0)
    throw InputError("--smooth applies to --model; --migration-model is used as it is");

  const ParallelContext parallel(a.parallel.ranks_per_shot);
  std::ostream& info = parallel.is_root() ? std::cerr : null_stream(); // one copy of each message
  if (parallel.is_root()) check_output_path(a.output); // before the run, not after it

  // Every rank reads the inputs (a file system all nodes see).
  const ShotFile shots = read_shot_file(a.shots_path);
  VelocityModel model;
  if (!a.migration_model_path.empty()) {
    model = read_velocity_model(a.migration_model_path);
  } else {
    model = smooth_model(read_velocity_model(a.model_path), a.smooth);
    info << "rtm: migration velocity: " << a.model_path;
    if (a.smooth > 0) info << " smoothed over " << a.smooth << " m";
    else info << " as is (--smooth 0)";
    info << ", " << model.vmin() << " to " << model.vmax() << " m/s\n";
  }
  place_on_device(a.params.backend, parallel, a.parallel, info);

  MigrationControl control;
  control.parallel = &parallel;
  control.checkpoint_output = a.output;
  control.checkpoint_every = a.checkpoint_every;
  control.resume = a.resume;
  control.identity = migration_identity(model, shots, a.shots_path, a.params);
  const StopOnSignals signals;
  control.stop_requested = &StopOnSignals::requested;

  RunStats stats;
  const MigrationResult result = migrate_shots(model, shots, a.params, std::cerr, &stats, control);
  if (result.stop_signal != 0) {
    const std::vector<std::string> saved = find_checkpoints(a.output);
    throw RunStopped(result.stop_signal,
                     std::string("stopped by ") + signal_name(result.stop_signal) + "; " +
                         (saved.empty()
                              ? "no shot had finished, so nothing was saved"
                              : "the finished shots are saved in " + std::to_string(saved.size()) +
                                    " checkpoint file(s) " + a.output +
                                    ".checkpoint-*.h5; run the same command with --resume "
                                    "(any number of ranks) to continue"));
  }
  if (!parallel.is_root()) return; // world rank 0 alone writes
  write_volumes(a.output, model,
                {{"image", &result.image},
                 {"illumination", &result.illumination},
                 {"image_raw", &result.raw_image}});
  // The image is safe: the partial sums are not needed any more.
  for (const std::string& checkpoint : find_checkpoints(a.output)) std::remove(checkpoint.c_str());
  std::printf("wrote %s: /image, /illumination, /image_raw %dx%dx%d; %zu shot(s) (%d migrated now), "
              "%.2f s, %.3f Gcells/s\n",
              a.output.c_str(), model.nx, model.ny, model.nz, shots.shots.size(),
              result.shots_migrated, stats.seconds, stats.gcells_per_second());
  if (!a.png_dir.empty()) {
    std::filesystem::create_directories(a.png_dir);
    for (const std::string& p :
         write_png_slices(a.png_dir + "/image", model.nx, model.ny, model.nz, result.image,
                          a.colors == "grey" ? ColorScale::grey : ColorScale::seismic,
                          a.clip_percentile, -1, -1, -1, kReadablePicturePixels))
      std::printf("wrote %s\n", p.c_str());
    for (const std::string& p :
         write_png_slices(a.png_dir + "/illumination", model.nx, model.ny, model.nz,
                          result.illumination, ColorScale::range, 100.0, -1, -1, -1,
                          kReadablePicturePixels))
      std::printf("wrote %s\n", p.c_str());
  }
}

} // namespace

void register_migrate(CLI::App& rtm) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* cmd = rtm.add_subcommand("migrate", "Reverse time migration: image into HDF5 (+ PNG slices)");
  cmd->add_option("-s,--shots", args->shots_path, "Shot gathers (HDF5, from `rtm model`)")->required();
  auto* model = cmd->add_option("-m,--model", args->model_path,
                                "Velocity model to smooth into the migration model (HDF5 /vp)");
  auto* migration = cmd->add_option("--migration-model", args->migration_model_path,
                                    "Migration velocity model, used as is (HDF5 /vp)");
  model->excludes(migration);
  cmd->add_option("--smooth", args->smooth,
                  "With --model: smoothing length in metres (FWHM of a Gaussian on the slowness); "
                  "0: the model as is")
      ->capture_default_str();
  cmd->add_option("--reconstruction", args->reconstruction,
                  "Source wavefield backwards in time: boundary (save the model region's boundary "
                  "ring each step and re-propagate; exact) or snapshots (model region every k "
                  "steps in host memory)")
      ->check(CLI::IsMember({"boundary", "snapshots"}))
      ->capture_default_str();
  cmd->add_option("--direct-wave", args->direct_wave,
                  "Direct-wave removal: mute (zero each trace until the direct arrival has passed) "
                  "or none")
      ->check(CLI::IsMember({"mute", "none"}))
      ->capture_default_str();
  cmd->add_option("--direct-wave-velocity", args->params.direct_wave_velocity,
                  "Velocity (m/s) of the direct-wave mute; default: the migration velocity at each source");
  cmd->add_option("--illumination-eps", args->params.illumination_eps,
                  "Normalisation image / (illumination + eps), eps as a fraction of the mean "
                  "illumination")
      ->capture_default_str();
  cmd->add_flag("--no-laplacian", args->no_laplacian, "Skip the Laplacian post-filter");
  cmd->add_flag("--profile", args->params.profile,
                "Time every propagator operation and print where the shot loop's time went (wave "
                "steps, imaging, boundary save/restore, injection, host) with RTM Gcells/s and a "
                "PERFORMANCE line; timed operations are serialised, so the run may be a little slower");
  cmd->add_option("-o,--output", args->output, "Output image file (HDF5)")->required();
  cmd->add_option("--png-dir", args->png_dir,
                  "Also write PNG slices (inline, crossline, depth) of the image and illumination here");
  cmd->add_option("--clip-percentile", args->clip_percentile,
                  "PNG colour scale clipped symmetrically at this percentile of |values|")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--colors", args->colors,
                  "Colour scale of the image PNGs, symmetric about zero: seismic (blue-white-red) or grey")
      ->check(CLI::IsMember({"seismic", "grey"}))
      ->capture_default_str();
  cmd->add_flag("--resume", args->resume,
                "Continue an interrupted run from its checkpoints (<output>.checkpoint-*.h5): "
                "finished shots are not migrated again, and the image equals an uninterrupted "
                "run's. Same inputs and options required; any number of MPI ranks");
  cmd->add_option("--checkpoint-every", args->checkpoint_every,
                  "Save the partial image every K finished shots (per shot group) next to the "
                  "output, for --resume; 0: only when stopped by SIGINT/SIGTERM")
      ->check(non_negative_count())
      ->capture_default_str();
  add_boundary_options(cmd, args->params.boundary);
  add_point_interpolation_option(cmd, args->params.point_interpolation);
  add_backend_options(cmd, args->params.backend);
  add_parallel_options(cmd, args->parallel);
  cmd->callback([args]() { run_migrate(*args); });
}

} // namespace rtm::app
