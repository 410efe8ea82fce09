// rtm migrate: reverse time migration of shot gathers into an image (HDF5 + PNG slices).
#include <cstdio>
#include <string>
#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "app/commands.h"
#include "app/options.h"
#include "app/physics_option.h"
#include "app/stop_signals.h"
#include "io/atomic_file.h"
#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/path_checks.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/slab_image.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/smoothing.h"

namespace rtm::app {
namespace {

struct MigrateArgs {
  std::string shots_path;
  std::string model_path;           // true model, smoothed by --smooth
  std::string migration_model_path; // used as is
  double smooth = 0;
  std::string reconstruction = "boundary";
  std::string physics = "iso"; // --physics iso|tti
  std::string direct_wave = "mute";
  std::string data_phase_filter = "auto";
  std::string imaging_interval = "auto";
  std::string backward_step = "fused";
  std::string ring_precision = "float32";
  bool no_laplacian = false;
  bool no_shot_overlap = false;
  std::string output;
  std::string png_dir;
  double clip_percentile = 99;
  std::string colors = "seismic";
  bool resume = false;
  int checkpoint_every = 1;
  bool allow_unusual_velocities = false;
  bool allow_other_grid = false;
  double progress_s = 3; // seconds between progress updates inside a shot; 0: none
  MigrationParams params;
  ParallelOptions parallel;
};

// Every file the run writes, named by the option that names it.
std::vector<NamedPath> migrate_outputs(const MigrateArgs& a) {
  std::vector<NamedPath> outputs = {{"-o", a.output}};
  if (!a.png_dir.empty())
    for (const char* figure : {"/image.png", "/illumination.png"})
      outputs.push_back({"--png-dir", a.png_dir + figure});
  return outputs;
}

// The shots' records must reach past the wavelet (and, with the mute, past the muted part):
// otherwise every trace migrated is zero and the image is empty.
void check_record_length(const ShotFile& shots, const std::string& path, bool mute) {
  const double end = (shots.nt - 1) * shots.dt;
  if (end > shots.t0 && (!mute || end > shots.t0 + 1.0 / shots.f0)) return;
  std::string message = path + ": the records end at " + format_number(end, 4) + " s (" +
                        std::to_string(shots.nt) + " samples of " + format_number(shots.dt, 4) +
                        " s), ";
  if (end <= shots.t0)
    message += "before the wavelet's delay t0 = " + format_number(shots.t0, 4) +
               " s: they hold no reflection";
  else
    message += "and the direct-wave mute zeroes every sample up to at least t0 + 1/f0 = " +
               format_number(shots.t0 + 1.0 / shots.f0, 4) + " s (t0 " +
               format_number(shots.t0, 4) + " s, f0 " + format_number(shots.f0, 4) +
               " Hz); --direct-wave none keeps them";
  throw InputError(message + "; the image would be all zero. Model the shots with a longer "
                             "--record-time");
}

// The figures of the written image, drawn by world rank 0 from `volumes` (the whole arrays).
void draw_figures(const MigrateArgs& a, const VelocityModel& grid, const std::vector<float>& image,
                  const std::vector<float>& illumination) {
  std::filesystem::create_directories(a.png_dir);
  FigureOptions options;
  options.clip_percentile = a.clip_percentile;
  options.signed_colours = a.colors == "grey" ? ColourMap::grey : ColourMap::seismic;
  const SliceCells middle = locate_slices({}, grid);
  const struct {
    const char* name;
    const std::vector<float>& values;
    const char* units;
  } figures_to_draw[] = {{"image", image, "relative amplitude"}, {"illumination", illumination, ""}};
  for (const auto& f : figures_to_draw) {
    const std::string png = a.png_dir + "/" + f.name + ".png";
    write_figure(png, volume_figure(grid, f.values, volume_kind_of(f.name), f.name, f.units,
                                    a.output, middle, options));
    std::printf("wrote %s\n", png.c_str());
  }
}

// What both paths (one rank per shot, or slabs) check before reading the model: the records reach
// past the wavelet, and the velocity bounds the run accepts.
VelocityCheck check_inputs(const MigrateArgs& a, const ShotFile& shots) {
  if (shots.f0 > 0)
    check_record_length(shots, a.shots_path, a.params.direct_wave == DirectWaveRemoval::mute);
  return velocity_check(a.allow_unusual_velocities);
}

// Says which migration velocity --model and --smooth gave (`holders`: who holds it, if not one rank).
void report_smoothed_velocity(const MigrateArgs& a, double vmin, double vmax,
                              const std::string& holders, std::ostream& info) {
  info << "rtm: migration velocity: " << a.model_path;
  if (a.smooth > 0) info << " smoothed over " << a.smooth << " m";
  else info << " as is (--smooth 0)";
  info << ", " << format_number(vmin) << " to " << format_number(vmax) << " m/s" << holders << "\n";
}

// The run's checkpoints, progress line and parallel context from the options; the caller adds
// the stop handling (its StopOnSignals must outlive the run) and what a shot's start says.
MigrationControl migration_control(const MigrateArgs& a, const ParallelContext& parallel,
                                   CheckpointIdentity identity) {
  MigrationControl control;
  control.parallel = &parallel;
  control.checkpoint_output = a.output;
  control.checkpoint_every = a.checkpoint_every;
  control.resume = a.resume;
  control.identity = std::move(identity);
  control.progress.interval_s = a.progress_s;
  control.progress.in_place = stderr_is_terminal();
  control.progress.width = stderr_terminal_width();
  control.stop_requested = &StopOnSignals::requested;
  return control;
}

// A run stopped by SIGINT/SIGTERM ends here, saying what was saved and how to continue.
void throw_if_stopped(const MigrationResult& result, const std::string& output) {
  if (result.stop_signal == 0) return;
  const std::vector<std::string> saved = find_checkpoints(output);
  throw RunStopped(result.stop_signal,
                   std::string("stopped by ") + signal_name(result.stop_signal) + "; " +
                       (saved.empty() ? "no shot had finished, so nothing was saved"
                                      : "the finished shots are saved in " +
                                            std::to_string(saved.size()) + " checkpoint file(s) " +
                                            output + ".checkpoint-*.h5; run the same command "
                                            "with --resume (any number of ranks) to continue"));
}

// Once the image is written, the partial sums are not needed any more.
void remove_checkpoints(const std::string& output) {
  for (const std::string& checkpoint : find_checkpoints(output)) std::remove(checkpoint.c_str());
}

// --ranks-per-shot R > 1: each rank reads, smooths and holds only the model planes of its slab,
// and the image is finished and written slab by slab (docs/decomposition.md, "What each rank reads
// and holds"): no rank holds the whole model or the whole image.
void run_migrate_on_slabs(MigrateArgs& a, const CLI::App* cmd, const ShotFile& shots,
                          const ParallelContext& parallel, std::ostream& info, bool figures) {
  const VelocityCheck check = check_inputs(a, shots);
  const bool smoothing = a.migration_model_path.empty();
  const std::string model_path = smoothing ? a.model_path : a.migration_model_path;
  const bool tti = apply_physics_options(a.physics, cmd, model_path, a.params.boundary,
                                         a.parallel.ranks_per_shot,
                                         a.params.reconstruction == Reconstruction::snapshots, info);
  // TTI: each rank reads its planes of /epsilon, /delta, /theta, /phi too (as given: only vp is
  // smoothed).
  const SlabModel part = read_slab_model(model_path, "vp", check, smoothing ? a.smooth : 0.0,
                                         a.params.boundary, parallel.group_comm(), tti);
  if (smoothing)
    report_smoothed_velocity(a, part.extremes.vmin, part.extremes.vmax,
                             " (each of the " + std::to_string(parallel.ranks_per_shot()) +
                                 " ranks of a shot group holding its slab's planes)",
                             info);
  place_on_device(a.params.backend, parallel, a.parallel, info);

  MigrationControl control = migration_control(
      a, parallel, migration_identity(part, parallel.group_comm(), shots, a.shots_path, a.params));
  const StopOnSignals signals(parallel.is_root());
  control.shot_started = [&](int, int, int) {
    StopOnSignals::set_activity("finishing the shots in progress, then a checkpoint",
                                "lose the shots since the last checkpoint");
  };
  RunStats stats;
  MigrationResult result = migrate_shots(part, shots, a.params, std::cerr, &stats, control);
  throw_if_stopped(result, a.output);
  SlabImage mine;
  mine.z_first = result.image_z_first;
  mine.planes = int(result.image.size() / (size_t(part.shape.nx) * size_t(part.shape.ny)));
  mine.image = std::move(result.image);
  mine.illumination = std::move(result.illumination);
  mine.raw_image = std::move(result.raw_image);
  write_slab_image(a.output, part.shape, mine,
                   {{"data_phase_filter", describe_data_phase_filter(result.data_phase_filter, result.data_phase_order)}}, parallel);
  if (!parallel.is_root()) return;
  remove_checkpoints(a.output);
  std::printf("wrote %s: /image, /illumination, /image_raw %dx%dx%d by slabs of %d ranks; %zu "
              "shot(s) (%d migrated now), %.2f s, %.3f Gcells/s\n",
              a.output.c_str(), part.shape.nx, part.shape.ny, part.shape.nz,
              parallel.ranks_per_shot(), shots.shots.size(), result.shots_migrated, stats.seconds,
              stats.gcells_per_second());
  if (figures) {
    // The figures read the written volumes back: the one time rank 0 holds a whole image.
    VelocityModel grid;
    const std::vector<float> image = read_volume(a.output, "image", grid);
    const std::vector<float> illumination = read_volume(a.output, "illumination", grid);
    draw_figures(a, grid, image, illumination);
  }
}

void run_migrate(MigrateArgs& a, const CLI::App* cmd) {
  a.params.reconstruction = parse_reconstruction(a.reconstruction);
  a.params.direct_wave = parse_direct_wave_removal(a.direct_wave);
  if (parse_data_phase_order(a.data_phase_filter, a.params.data_phase_order))
    a.params.data_phase_filter = DataPhaseFilter::order;
  else
    a.params.data_phase_filter = parse_data_phase_filter(a.data_phase_filter);
  a.params.laplacian_filter = !a.no_laplacian;
  a.params.overlap_shots = !a.no_shot_overlap;
  if (a.imaging_interval != "auto") {
    std::size_t used = 0;
    int k = 0;
    try {
      k = std::stoi(a.imaging_interval, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != a.imaging_interval.size() || k < 1)
      throw InputError("--imaging-interval: expected auto or a whole number of steps >= 1, got '" +
                       a.imaging_interval + "'");
    a.params.imaging_interval = k;
  }
  a.params.fused_backward = a.backward_step == "fused";
  a.params.ring_precision = parse_ring_precision(a.ring_precision);
  if (a.model_path.empty() == a.migration_model_path.empty())
    throw InputError("give exactly one of --model (a model to smooth by --smooth) and "
                     "--migration-model (used as is)");
  if (!a.migration_model_path.empty() && a.smooth != 0)
    throw InputError("--smooth applies to --model; --migration-model is used as it is");

  const ParallelContext parallel(a.parallel.ranks_per_shot);
  std::ostream& info = parallel.is_root() ? std::cerr : null_stream(); // one copy of each message
  // Said before the run, which goes on: the figures are a by-product of the HDF5 image.
  const bool figures = !a.png_dir.empty() && figures_supported();
  if (!(a.clip_percentile > 0))
    throw InputError("--clip-percentile " + format_number(a.clip_percentile) +
                     ": must be above 0 (and at most 100)");
  if (!a.png_dir.empty() && !figures)
    info << "rtm: warning: --png-dir " << a.png_dir << ": no figures: " << no_figure_support_message()
         << "\n";
  if (parallel.is_root()) { // before the run, not after it
    check_output_path(a.output);
    if (!a.png_dir.empty()) check_output_directory(a.png_dir, "--png-dir");
    check_outputs_are_not_inputs(migrate_outputs(a),
                                 {{"--shots", a.shots_path},
                                  {"--model", a.model_path},
                                  {"--migration-model", a.migration_model_path},
                                  config_input(cmd)});
  }

  // Every rank reads the inputs (a file system all nodes see): first the shot file's header and
  // acquisition and the model's shape (its header and one plane), from which the memory the run
  // needs follows: a run that cannot fit is refused before the traces are read and the model is
  // read and smoothed (minutes for a large model).
  const std::string model_path = a.migration_model_path.empty() ? a.model_path : a.migration_model_path;
  {
    const ShotFile geometry = read_shot_geometry(a.shots_path);
    check_inputs(a, geometry);
    const VelocityModel shape = read_model_shape(model_path);
    // The shots were modelled on a grid; another grid under them is nearly always a mistake (a
    // different file, x and y swapped), refused before any work unless asked for.
    if (!a.allow_other_grid) check_modeling_grid(geometry, a.shots_path, shape, model_path);
    MigrationParams sizing = a.params;
    if (a.physics == "tti") sizing.boundary.absorber = Absorber::sponge; // as apply_physics makes it
    check_migration_memory_before_reading(shape, geometry, sizing, parallel, a.physics == "tti",
                                          a.migration_model_path.empty() ? a.smooth : 0.0,
                                          a.checkpoint_every > 0);
    // On disk at the end: the image, illumination and raw image (float32 over the model), and
    // beside them each shot group's checkpoint (raw image and illumination), twice while a new
    // one replaces the old.
    const uint64_t volume = uint64_t(shape.cells()) * sizeof(float);
    if (parallel.is_root())
      check_disk_space(a.output, 3 * volume + uint64_t(parallel.group_count()) * 2 * 2 * volume,
                       "-o " + a.output + " (/image, /illumination, /image_raw) and its checkpoints");
  }
  const ShotFile shots = read_shot_file(a.shots_path);
  if (parallel.ranks_per_shot() > 1) {
    run_migrate_on_slabs(a, cmd, shots, parallel, info, figures);
    return;
  }
  const VelocityCheck check = check_inputs(a, shots);
  VelocityModel read = read_velocity_model(model_path, "vp", check);
  apply_physics(a.physics, cmd, model_path, read, a.params.boundary, a.parallel.ranks_per_shot,
                a.params.reconstruction == Reconstruction::snapshots, info);
  VelocityModel model;
  if (!a.migration_model_path.empty()) {
    model = std::move(read);
  } else {
    model = smooth_model(read, a.smooth);
    model.anisotropy = std::move(read.anisotropy); // TTI parameters as given: only vp is smoothed
    report_smoothed_velocity(a, model.vmin(), model.vmax(), "", info);
  }
  // The model as read is not needed any more: the run holds `model` and its grid's copy, the two
  // copies the memory check counts.
  read = VelocityModel();
  place_on_device(a.params.backend, parallel, a.parallel, info);

  MigrationControl control =
      migration_control(a, parallel, migration_identity(model, shots, a.shots_path, a.params));
  const StopOnSignals signals(parallel.is_root());
  const std::string loses = a.checkpoint_every == 1 ? "lose that shot"
                                                    : "lose the shots since the last checkpoint";
  control.shot_started = [&](int, int ordinal, int total) {
    StopOnSignals::set_activity(
        parallel.group_count() > 1
            ? "finishing the shots in progress, then a checkpoint"
            : "finishing shot " + std::to_string(ordinal) + " of " + std::to_string(total) +
                  ", then a checkpoint",
        loses);
  };

  RunStats stats;
  const MigrationResult result = migrate_shots(model, shots, a.params, std::cerr, &stats, control);
  throw_if_stopped(result, a.output);
  if (!parallel.is_root()) return; // world rank 0 alone writes
  write_volumes(a.output, model,
                {{"image", &result.image, kImageUnits},
                 {"illumination", &result.illumination, kIlluminationUnits},
                 {"image_raw", &result.raw_image, kRawImageUnits}},
                {{"data_phase_filter", describe_data_phase_filter(result.data_phase_filter, result.data_phase_order)}});
  remove_checkpoints(a.output); // the image is safe
  std::printf("wrote %s: /image, /illumination, /image_raw %dx%dx%d; %zu shot(s) (%d migrated now), "
              "%.2f s, %.3f Gcells/s\n",
              a.output.c_str(), model.nx, model.ny, model.nz, shots.shots.size(),
              result.shots_migrated, stats.seconds, stats.gcells_per_second());
  if (figures) draw_figures(a, model, result.image, result.illumination);
}

} // namespace

void register_migrate(CLI::App& rtm) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* cmd = rtm.add_subcommand("migrate", "Reverse time migration: image into HDF5 (+ figures)");
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
  cmd->add_option("--imaging-interval", args->imaging_interval,
                  "Boundary reconstruction: apply the imaging condition every K-th step of the "
                  "backward sweep with weight K; auto: K from the Nyquist interval of 2.5 f0 with a "
                  "safety factor of 0.5 (docs/rtm.md, section 5); 1: every step")
      ->capture_default_str();
  cmd->add_option("--backward-step", args->backward_step,
                  "Boundary reconstruction: fused (the source and receiver fields' steps and the "
                  "imaging in one pass where the backend has one: CUDA regqueue_vec4, tma_ring) or "
                  "separate")
      ->check(CLI::IsMember({"fused", "separate"}))
      ->capture_default_str();
  cmd->add_option("--ring-precision", args->ring_precision,
                  "Boundary reconstruction: the saved boundary rings in float32 (exact), int16 or "
                  "float16 (16 bits with a power-of-two scale per 256 cells: half the memory; "
                  "int16 images within 2e-4 of float32, float16 within 1.5e-3; docs/rtm.md "
                  "section 4)")
      ->check(CLI::IsMember({"float32", "int16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--direct-wave", args->direct_wave,
                  "Direct-wave removal: mute (zero each trace until the direct arrival has passed) "
                  "or none")
      ->check(CLI::IsMember({"mute", "none"}))
      ->capture_default_str();
  cmd->add_option("--data-phase-filter", args->data_phase_filter,
                  "Phase correction of the data before back-propagation, (-i omega/omega0)^a: auto "
                  "(a = 1 + d/4 for d = 0, 1, 2 directions sampled densely by receivers and "
                  "sources: halfway between a point scatterer's a = 2 and a reflector's d/2), or "
                  "fixed: none, half, full (a = 0, 1/2, 1: a reflector's for isolated receivers, "
                  "a dense line, an areal spread) or a number a from 0 to 3 (docs/rtm.md 6a)")
      ->check([](const std::string& value) -> std::string {
        double order = 0;
        try {
          if (parse_data_phase_order(value, order)) return "";
        } catch (const std::exception&) { // out of range (CLI11 names the option itself)
          return "an order must lie between 0 and 3, got " + value;
        }
        if (value == "auto" || value == "none" || value == "half" || value == "full") return "";
        return "expected auto, none, half, full or an order from 0 to 3, got '" + value + "'";
      })
      ->capture_default_str();
  cmd->add_option("--direct-wave-velocity", args->params.direct_wave_velocity,
                  "Velocity (m/s) of the direct-wave mute; default: the migration velocity at each source");
  cmd->add_option("--illumination-eps", args->params.illumination_eps,
                  "Normalisation image / (illumination + eps), eps as a fraction of the mean "
                  "illumination")
      ->capture_default_str();
  cmd->add_flag("--no-laplacian", args->no_laplacian, "Skip the Laplacian post-filter");
  cmd->add_option("--image-mute-depth", args->params.image_mute_depth,
                  "Zero the final image down to this depth (m below the model's top), where the "
                  "direct wave and the sources' own fields leave their residue; 0: no mute")
      ->check(non_negative_finite())
      ->capture_default_str();
  cmd->add_option("--image-mute-taper", args->params.image_mute_taper,
                  "Half-cosine ramp (m) from the muted image below --image-mute-depth to the full "
                  "image")
      ->check(non_negative_finite())
      ->capture_default_str();
  cmd->add_flag("--profile", args->params.profile,
                "Time every propagator operation and print where the shot loop's time went (wave "
                "steps, imaging, boundary save/restore, injection, host) with RTM Gcells/s and a "
                "PERFORMANCE line; timed operations are serialised, so the run may be a little slower");
  cmd->add_flag("--no-shot-overlap", args->no_shot_overlap,
                "Make each shot's set-up (its traces, its points) between the shots instead of on a "
                "thread of its own while the shot before steps; the image is the same (docs/rtm.md, "
                "\"Many shots\")");
  cmd->add_option("-o,--output", args->output, "Output image file (HDF5)")->required();
  cmd->add_option("--png-dir", args->png_dir,
                  "Also write figures (PNG: inline, crossline and depth slices through the middle, in "
                  "metres) of the image and the illumination here: image.png, illumination.png");
  cmd->add_option("--clip-percentile", args->clip_percentile,
                  "Image figure: colours clipped symmetrically at this percentile of |image|")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--colors", args->colors,
                  "Colour scale of the image figure, symmetric about zero: seismic (blue-white-red) or grey")
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
  add_progress_option(cmd, args->progress_s);
  add_boundary_options(cmd, args->params.boundary);
  add_point_interpolation_option(cmd, args->params.point_interpolation);
  add_backend_options(cmd, args->params.backend);
  add_physics_option(cmd, args->physics);
  add_shear_taper_options(cmd, args->params.shear_taper);
  add_parallel_options(cmd, args->parallel);
  add_velocity_check_flag(cmd, args->allow_unusual_velocities);
  cmd->add_flag("--allow-other-grid", args->allow_other_grid,
                "Migrate on a model grid other than the one the shots were modelled on (shape, "
                "spacing or origin differ): every source and receiver must still lie in it and "
                "the shots' dt must be stable in it");
  cmd->callback([args, cmd]() { run_migrate(*args, cmd); });
}

} // namespace rtm::app
