// rtm lsrtm: least-squares reverse time migration (docs/rtm.md, section 12): conjugate gradients
// on the Born operator and its adjoint, migration, over every shot of a shot file; the model
// perturbation, the data residual per iteration and figures of both.
//
// A subcommand of its own rather than `rtm migrate --iterations N`: its product is another one (a
// model perturbation that fits the data, not an illumination-normalised, Laplacian-filtered image),
// it resumes between iterations rather than between shots, and several of migrate's options
// (--data-phase-filter, --no-laplacian, --datasets, --checkpoint-every, --image-mute-*) would mean
// nothing to it. The options it shares with migrate are spelled and default the same.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/migration_options.h"
#include "app/options.h"
#include "app/stop_signals.h"
#include "io/atomic_file.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/lsrtm_state.h"
#include "io/path_checks.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/lsrtm.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/smoothing.h"

namespace rtm::app {
namespace {

// The options lsrtm shares with migrate (app/migration_options.h), and its own.
struct LsrtmArgs : MigrationOptions {
  int iterations = 10;
  std::string preconditioner = "illumination";
  LsrtmParams params;
};

constexpr const char* kModelUnits =
    "arbitrary (the Born perturbation m of the zero-lag operator, least-squares fit to the data)";
constexpr const char* kResidualUnits = "same as the traces (root of the sum of squares)";

std::vector<NamedPath> lsrtm_outputs(const LsrtmArgs& a) {
  std::vector<NamedPath> outputs = {{"-o", a.output}, {"-o", lsrtm_state_path(a.output)}};
  if (!a.png_dir.empty()) {
    outputs.push_back({"--png-dir", a.png_dir + "/image.png"});
    outputs.push_back({"--png-dir", a.png_dir + "/residual.png"});
  }
  return outputs;
}

// The options into the solver's parameters; InputError naming the option for a bad value.
void parse_options(LsrtmArgs& a) {
  MigrationParams& p = a.params.migration;
  apply_migration_options(a, p);
  p.data_phase_filter = DataPhaseFilter::none;
  p.overlap_shots = true;
  a.params.iterations = a.iterations;
  if (a.iterations < 1)
    throw InputError("--iterations must be at least 1, got " + std::to_string(a.iterations));
  a.params.preconditioner = parse_lsrtm_preconditioner(a.preconditioner);
  if (!(p.illumination_eps > 0))
    throw InputError("--illumination-eps must be positive, got " + format_number(p.illumination_eps));
}

// The records must reach past the wavelet (and the mute): otherwise there is nothing to fit.
void check_record_length(const ShotFile& shots, const std::string& path, bool mute) {
  const double end = (shots.nt - 1) * shots.dt;
  if (!(shots.f0 > 0) || (end > shots.t0 && (!mute || end > shots.t0 + 1.0 / shots.f0))) return;
  throw InputError(path + ": the records end at " + format_number(end, 4) + " s, before " +
                   (end <= shots.t0 ? "the wavelet's delay t0 = " + format_number(shots.t0, 4) + " s"
                                    : "the direct-wave mute's end t0 + 1/f0 = " +
                                          format_number(shots.t0 + 1.0 / shots.f0, 4) +
                                          " s (--direct-wave none keeps them)") +
                   ": there are no data to fit. Model the shots with a longer --record-time");
}

// The figures: the perturbation's slices, and the residual against the iteration.
void draw_figures(const LsrtmArgs& a, const VelocityModel& grid, const LsrtmResult& r) {
  std::filesystem::create_directories(a.png_dir);
  FigureOptions options;
  options.clip_percentile = a.clip_percentile;
  options.signed_colours = a.colors == "grey" ? ColourMap::grey : ColourMap::seismic;
  const std::string image_png = a.png_dir + "/image.png";
  write_figure(image_png, volume_figure(grid, r.model, volume_kind_of("image"), "image",
                                        "least-squares RTM", a.output, locate_slices({}, grid),
                                        options));
  std::printf("wrote %s\n", image_png.c_str());
  PlotSeries series;
  series.label = "|d - L m| / |d|";
  for (size_t k = 0; k < r.residual_norm.size(); ++k) {
    series.x.push_back(double(k));
    series.y.push_back(r.residual_norm[0] > 0 ? r.residual_norm[k] / r.residual_norm[0] : 0.0);
  }
  const std::string residual_png = a.png_dir + "/residual.png";
  write_line_plot(residual_png, "Least-squares RTM: data residual (" + a.output + ")", "iteration",
                  "relative data residual", {series});
  std::printf("wrote %s\n", residual_png.c_str());
}

void run_lsrtm(LsrtmArgs& a, const CLI::App* cmd) {
  parse_options(a);
  const ParallelContext parallel(a.parallel.ranks_per_shot);
  std::ostream& info = parallel.is_root() ? std::cerr : null_stream();
  if (parallel.ranks_per_shot() > 1)
    throw InputError("--ranks-per-shot " + std::to_string(parallel.ranks_per_shot()) +
                     ": rtm lsrtm holds the model whole on each rank; run one rank per shot "
                     "(several ranks then share the shots)");
  const bool figures = !a.png_dir.empty() && figures_supported();
  if (!a.png_dir.empty() && !figures)
    info << "rtm: warning: --png-dir " << a.png_dir << ": no figures: " << no_figure_support_message()
         << "\n";
  const std::string state_path = lsrtm_state_path(a.output);
  if (parallel.is_root()) { // before the run, not after it
    check_output_path(a.output);
    if (!a.png_dir.empty()) check_output_directory(a.png_dir, "--png-dir");
    check_outputs_are_not_inputs(lsrtm_outputs(a), {{"--shots", a.shots_path},
                                                    {"--model", a.model_path},
                                                    {"--migration-model", a.migration_model_path},
                                                    config_input(cmd)});
    const bool exists = std::filesystem::exists(state_path);
    if (a.resume && !exists)
      throw InputError("--resume: no state " + state_path + " to continue from");
    if (!a.resume && exists)
      throw InputError(state_path + " holds the state of an earlier least-squares RTM; continue "
                       "it with --resume (up to --iterations in all), or delete it");
  }
  const std::string model_path =
      a.migration_model_path.empty() ? a.model_path : a.migration_model_path;
  {
    // The memory and disk a run needs, from the headers, before the traces and the model are read.
    const ShotFile geometry = read_shot_geometry(a.shots_path);
    check_record_length(geometry, a.shots_path, a.params.migration.direct_wave == DirectWaveRemoval::mute);
    const VelocityModel shape = read_model_shape(model_path);
    if (!a.allow_other_grid) check_modeling_grid(geometry, a.shots_path, shape, model_path);
    MigrationParams sizing = a.params.migration;
    sizing.least_squares_vectors = kLsrtmHostVectors;
    check_migration_memory_before_reading(shape, geometry, sizing, parallel, Physics::acoustic,
                                          a.migration_model_path.empty() ? a.smooth : 0.0, false);
    // On disk: the perturbation, and the state (four volumes), twice while a new one replaces it.
    const uint64_t volume = uint64_t(shape.cells()) * sizeof(float);
    if (parallel.is_root())
      check_disk_space(a.output, volume + 2 * 4 * volume, "-o " + a.output + " and its state " +
                                                              state_path);
  }
  const ShotFile shots = read_shot_file(a.shots_path);
  VelocityModel model = read_velocity_model(model_path, "vp", velocity_check(a.allow_unusual_velocities));
  if (a.migration_model_path.empty()) {
    model = smooth_model(model, a.smooth);
    info << "rtm: migration velocity: " << a.model_path << " smoothed over " << a.smooth << " m, "
         << format_number(model.vmin()) << " to " << format_number(model.vmax()) << " m/s\n";
  }
  place_on_device(a.params.migration.backend, parallel, a.parallel, info);
  info << "rtm: least-squares RTM: " << a.params.iterations << " iteration(s) of conjugate "
       << "gradients on the normal equations, preconditioner "
       << lsrtm_preconditioner_name(a.params.preconditioner) << "; state in " << state_path << "\n";

  LsrtmControl control;
  control.migration.parallel = &parallel;
  control.migration.progress.interval_s = a.progress_s;
  control.migration.progress.in_place = stderr_is_terminal();
  control.migration.progress.width = stderr_terminal_width();
  control.migration.stop_requested = &StopOnSignals::requested;
  control.state_path = state_path;
  control.resume = a.resume;
  control.identity = lsrtm_identity(model, shots, a.shots_path, a.params);
  const StopOnSignals signals(parallel.is_root());
  control.migration.shot_started = [](int, int, int) {
    StopOnSignals::set_activity("finishing the shots of this iteration's pass",
                                "lose the iteration in progress (the state keeps the ones before)");
  };
  const LsrtmResult result = lsrtm_shots(model, shots, a.params, std::cerr, control);
  if (result.stop_signal != 0)
    throw RunStopped(result.stop_signal,
                     std::string("stopped by ") + signal_name(result.stop_signal) + "; " +
                         (std::filesystem::exists(state_path)
                              ? "the iterations finished are saved in " + state_path +
                                    "; run the same command with --resume to continue"
                              : "the RTM pass had not finished, so nothing was saved"));
  if (!parallel.is_root()) return;
  std::vector<std::string> history;
  for (double r : result.residual_norm) history.push_back(format_number(r, 9));
  const std::vector<NamedVolume> volumes = {{"image", &result.model, kModelUnits}};
  const std::vector<std::pair<std::string, std::string>> attributes = {
      {"method", "least-squares RTM: preconditioned conjugate gradients on the normal equations "
                 "(docs/rtm.md, section 12)"},
      {"preconditioner", lsrtm_preconditioner_name(a.params.preconditioner)},
      {"iterations", std::to_string(result.residual_norm.size() - 1)}};
  write_volumes_in_parts(a.output, model, volumes, attributes, [&](const std::string& temporary) {
    write_volume_planes(temporary, "image", 0, result.model);
    write_series_dataset(temporary, "residual_norm", result.residual_norm, kResidualUnits,
                         {{"description", "data residual |d - L m| (mute-weighted) after 0, 1, ... "
                                          "iterations; index 0: |d|"}});
  });
  std::printf("wrote %s: image (least-squares RTM) %dx%dx%d and residual_norm; %zu iteration(s) "
              "(%d now), data residual %s of the start\n",
              a.output.c_str(), model.nx, model.ny, model.nz, result.residual_norm.size() - 1,
              result.iterations_done,
              result.residual_norm.front() > 0
                  ? format_number(result.residual_norm.back() / result.residual_norm.front(), 4).c_str()
                  : "-");
  if (figures) draw_figures(a, model, result);
}

} // namespace

void register_lsrtm(CLI::App& rtm) {
  auto args = std::make_shared<LsrtmArgs>();
  CLI::App* cmd = rtm.add_subcommand(
      "lsrtm", "Least-squares RTM: conjugate gradients on Born modeling and migration (HDF5 + figures)");
  MigrationOptionHelp help;
  help.smooth = "With --model: smoothing length in metres (FWHM of a Gaussian on the slowness)";
  help.reconstruction =
      "Source wavefield backwards in time, as for rtm migrate: auto, snapshots or boundary";
  help.snapshot_precision = "Snapshots: float32, int16 or float16, as for rtm migrate";
  help.snapshot_memory = "Snapshots: device, host or auto, as for rtm migrate";
  help.imaging_interval =
      "Image every K-th backward step with weight K, as for rtm migrate; 1 (with "
      "--absorber sponge and float32 reconstruction) makes migration the exact adjoint "
      "of Born modeling";
  help.backward_step = "fused or separate, as for rtm migrate";
  help.ring_precision =
      "Boundary reconstruction's rings: float32, int16 or float16, as for rtm migrate";
  help.direct_wave = "mute: the misfit weighs each sample by the direct-wave mute's weight (the data "
                     "and the Born data alike); none";
  help.output = "Output file (HDF5): /image (the perturbation m) and /residual_norm; the state "
                "for --resume beside it, <output>.lsrtm-state.h5";
  help.png_dir = "Also write figures here: image.png (slices of m) and residual.png (the data "
                 "residual against the iteration)";
  help.clip_percentile = "Image figure: colours clipped symmetrically at this percentile of |m|";
  help.colors = "Colour scale of the image figure: seismic or grey";
  help.resume = "Continue from the state <output>.lsrtm-state.h5 (written after the RTM pass and "
                "every iteration) up to --iterations in all; the result equals an uninterrupted "
                "run's. Same inputs and options required";
  help.allow_other_grid = "Invert on a model grid other than the one the shots were modelled on";
  LsrtmArgs& a = *args;
  add_migration_options(cmd, a, a.params.migration, help, [cmd, &a](OwnOptionsPlace place) {
    if (place != OwnOptionsPlace::after_smooth) return;
    cmd->add_option("--iterations", a.iterations,
                    "Conjugate-gradient iterations in all (a resumed run's included); each is one "
                    "pass of Born modeling and migration over every shot")
        ->capture_default_str();
    cmd->add_option("--preconditioner", a.preconditioner,
                    "Diagonal preconditioner: illumination (1 / (sum S^2 + eps), eps from "
                    "--illumination-eps) or none (plain CG on the normal equations)")
        ->check(CLI::IsMember({"illumination", "none"}))
        ->capture_default_str();
    cmd->add_option("--illumination-eps", a.params.migration.illumination_eps,
                    "The preconditioner's eps as a fraction of the mean illumination")
        ->check(positive_finite())
        ->capture_default_str();
  });
  cmd->callback([args, cmd]() { run_lsrtm(*args, cmd); });
}

} // namespace rtm::app
