// rtm model: forward modeling of shot gathers into HDF5.
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "app/physics_option.h"
#include "app/stop_signals.h"
#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/path_checks.h"
#include "io/shot_checkpoint.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/wavelet.h"

namespace rtm::app {
namespace {

struct ModelArgs {
  std::string model_path;
  std::string output;
  int shots = 0;                // >0: generate a line survey, overriding the file's geometry
  std::vector<int> shot_grid;   // NX,NY: generate a grid of shots instead
  double source_depth = 20;     // m below the model origin
  double receiver_depth = -1;   // m below the model origin; < 0: the source depth
  int receiver_step = 1;        // cells between generated receivers
  bool receiver_grid = false;   // receivers over the x-y plane instead of the centre inline
  // A spread moving with each source: inline (x) and crossline (y) offsets from the source (m).
  std::vector<double> receiver_offsets, crossline_offsets;
  std::string geometry_path;    // a shot file whose sources and receivers (per shot) to model
  bool allow_unusual_velocities = false;
  bool resume = false;
  std::string physics = "iso"; // --physics iso|tti
  double progress_s = 3;        // seconds between progress updates inside a shot; 0: none
  ModelingParams params;
  ParallelOptions parallel;
};

} // namespace

void register_model(CLI::App& rtm) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* cmd = rtm.add_subcommand("model", "Forward modeling: shot gathers into HDF5");
  cmd->add_option("-m,--model", args->model_path, "Velocity model (HDF5, dataset /vp)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Output shot file (HDF5)")->required();
  cmd->add_option("--shots", args->shots,
                  "Generate this many shots on the centre inline (default: the model file's "
                  "/sources and /receivers, else 1 shot)")
      ->check(non_negative_count());
  auto* grid = cmd->add_option("--shot-grid", args->shot_grid,
                               "Generate NX,NY shots on a grid evenly spread over the model")
                   ->delimiter(',')
                   ->expected(2)
                   ->check(CLI::PositiveNumber);
  grid->excludes("--shots");
  cmd->add_option("--source-depth", args->source_depth, "Depth of generated sources (m)")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--receiver-depth", args->receiver_depth,
                  "Depth of generated receivers (m); default: the source depth")
      ->check(finite_number());
  cmd->add_option("--receiver-step", args->receiver_step, "Cells between generated receivers")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_flag("--receiver-grid", args->receiver_grid,
                "Generated receivers cover the x-y plane (every --receiver-step cells) instead of "
                "the centre inline");
  auto* offsets =
      cmd->add_option("--receiver-offsets", args->receiver_offsets,
                      "A receiver spread that moves with each source: MIN,MAX inline (x) offsets "
                      "from the source in metres (e.g. -1000,1000 split spread, -3000,-100 end-on "
                      "behind the source), a receiver every --receiver-step cells; receivers "
                      "beyond the model's edge are left out")
          ->delimiter(',')
          ->expected(2)
          ->check(finite_number());
  offsets->excludes("--receiver-grid");
  cmd->add_option("--receiver-crossline-offsets", args->crossline_offsets,
                  "With --receiver-offsets: MIN,MAX crossline (y) offsets in metres, making the "
                  "moving spread a patch (default 0,0: one line)")
      ->delimiter(',')
      ->expected(2)
      ->check(finite_number())
      ->needs(offsets);
  cmd->add_option("--geometry", args->geometry_path,
                  "Model the acquisition of this shot file (HDF5, e.g. from `rtm import shots`): "
                  "its sources and each shot's receivers; its traces are not used")
      ->excludes("--shots")
      ->excludes(grid)
      ->excludes("--receiver-grid")
      ->excludes(offsets)
      ->excludes("--source-depth")
      ->excludes("--receiver-depth")
      ->excludes("--receiver-step");
  cmd->add_flag("--resume", args->resume,
                "Continue an interrupted run from its checkpoint (<output>.checkpoint/, one file "
                "per finished shot): finished shots are not modeled again, and the output equals "
                "an uninterrupted run's. Same inputs and options required; any number of MPI ranks");
  add_progress_option(cmd, args->progress_s);
  add_time_options(cmd, args->params);
  add_boundary_options(cmd, args->params.boundary);
  add_point_interpolation_option(cmd, args->params.point_interpolation);
  add_backend_options(cmd, args->params.backend);
  add_parallel_options(cmd, args->parallel);
  add_velocity_check_flag(cmd, args->allow_unusual_velocities);
  add_physics_option(cmd, args->physics);
  add_shear_taper_options(cmd, args->params.shear_taper);

  cmd->callback([args, cmd]() {
    const Physics physics = physics_option(args->physics); // decided once, passed on
    const ParallelContext parallel(args->parallel.ranks_per_shot);
    std::ostream& info = parallel.is_root() ? std::cerr : null_stream();
    if (parallel.is_root()) { // before the run, not after it
      check_output_path(args->output);
      check_outputs_are_not_inputs({{"-o", args->output}},
                                   {{"--model", args->model_path},
                                    {"--geometry", args->geometry_path},
                                    config_input(cmd)});
    }
    // Every rank builds the same acquisition (a file system all nodes see), from the model's
    // shape alone (the file's header and one plane): with it and the options, a run that cannot
    // fit in memory is refused before the model is read (reading 1100^3 cells takes minutes).
    const VelocityModel shape = read_model_shape(args->model_path, "vp");
    // A record that ends before the wavelet peaks holds no reflection: say so now, not after the
    // migration of these shots comes out empty.
    const double t0 = args->params.wavelet.t0 >= 0 ? args->params.wavelet.t0
                                                   : default_ricker_delay(args->params.wavelet.f0);
    if (args->params.record_time <= t0)
      info << "rtm: warning: --record-time " << format_number(args->params.record_time)
           << " s ends before the wavelet's delay t0 = " << format_number(t0)
           << " s: the records hold at most the wavelet's onset and no reflection, and `rtm "
              "migrate` will refuse them; record longer than "
           << format_number(t0 + 1.0 / args->params.wavelet.f0) << " s\n";
    Acquisition acq;
    const ModelGeometry stored = read_model_geometry(args->model_path);
    const bool moving_spread = !args->receiver_offsets.empty();
    const bool generate =
        args->shots > 0 || !args->shot_grid.empty() || args->receiver_grid || moving_spread;
    if (!args->geometry_path.empty()) {
      const ShotFile geometry = read_shot_geometry(args->geometry_path);
      for (const ShotGather& shot : geometry.shots) {
        acq.sources.push_back(shot.source);
        acq.shot_receivers.push_back(geometry.receivers_of(shot));
      }
      info << "rtm: the acquisition of " << args->geometry_path << ": " << acq.sources.size()
           << " shot(s), " << describe_receiver_counts(geometry) << "\n";
    } else if (generate || stored.sources.empty() || stored.receivers.empty()) {
      const double deepest = (shape.nz - 1) * shape.dz;
      const double receiver_depth =
          args->receiver_depth >= 0 ? args->receiver_depth : args->source_depth;
      for (const auto& [name, depth] : {std::pair{"--source-depth", args->source_depth},
                                        std::pair{"--receiver-depth", receiver_depth}})
        if (depth < 0 || depth > deepest)
          throw InputError(std::string(name) + " " + format_distinct(depth, deepest) +
                           " m puts generated points outside the model, whose depth runs from 0 "
                           "to " + format_distinct(deepest, depth) + " m below its origin");
      SurveyLayout layout;
      layout.shots_x = args->shot_grid.empty() ? std::max(1, args->shots) : args->shot_grid[0];
      layout.shots_y = args->shot_grid.empty() ? 1 : args->shot_grid[1];
      layout.source_depth = args->source_depth;
      layout.receiver_depth = receiver_depth;
      layout.receiver_step = args->receiver_step;
      layout.receiver_grid = args->receiver_grid;
      acq = make_survey(shape, layout);
      if (moving_spread) {
        MovingSpread spread;
        spread.x_min = args->receiver_offsets[0];
        spread.x_max = args->receiver_offsets[1];
        if (!args->crossline_offsets.empty()) {
          spread.y_min = args->crossline_offsets[0];
          spread.y_max = args->crossline_offsets[1];
        }
        spread.dx = args->receiver_step * shape.dx;
        spread.dy = args->receiver_step * shape.dy;
        spread.depth = receiver_depth;
        const size_t left_out = attach_moving_spread(acq, shape, spread);
        if (left_out > 0)
          info << "rtm: the moving spread is cut at the model's edges: " << left_out
               << " receiver position(s) beyond them left out\n";
      }
    } else {
      acq.sources = stored.sources;
      acq.receivers = stored.receivers;
    }
    {
      ModelingParams sizing = args->params;
      if (!physics_info(physics).supports_cpml)
        sizing.boundary.absorber = Absorber::sponge; // as apply_physics makes it
      const int nt = check_modeling_memory_before_reading(
          shape, acq, sizing, parallel, physics,
          args->allow_unusual_velocities ? 0.0 : kMinPlausibleVelocity);
      // The traces twice on disk at the end: each shot in the checkpoint, and the output.
      uint64_t traces = 0;
      for (size_t s = 0; s < acq.sources.size(); ++s)
        traces += uint64_t(acq.receivers_of(s).size()) * uint64_t(nt);
      if (parallel.is_root())
        check_disk_space(args->output, 2 * traces * sizeof(float),
                         "-o " + args->output + " and its checkpoint (" +
                             std::to_string(acq.sources.size()) + " shot(s) of at least " +
                             std::to_string(nt) + " samples, each kept as it finishes)");
    }
    // With one rank per shot each reads the whole model; with R > 1 each reads only the planes of
    // its slab (solvers/drivers/slab_model.h), and `model` holds the model's shape alone.
    const bool on_slabs = parallel.ranks_per_shot() > 1;
    VelocityModel model;
    std::unique_ptr<SlabModel> part;
    if (on_slabs) {
      model = shape;
      // TTI: each rank reads its planes of /epsilon, /delta, /theta, /phi too.
      apply_physics_options(physics, cmd, args->model_path, args->params.boundary,
                            args->parallel.ranks_per_shot, false, info);
      part = std::make_unique<SlabModel>(
          read_slab_model(args->model_path, "vp", velocity_check(args->allow_unusual_velocities),
                          0.0, args->params.boundary, parallel.group_comm(), physics));
    } else {
      model = read_velocity_model(args->model_path, "vp",
                                  velocity_check(args->allow_unusual_velocities));
      apply_physics(physics, cmd, args->model_path, model, args->params.boundary,
                    args->parallel.ranks_per_shot, false, info);
    }
    place_on_device(args->params.backend, parallel, args->parallel, info);
    ModelingControl control;
    control.checkpoint_output = args->output;
    control.resume = args->resume;
    control.progress.interval_s = args->progress_s;
    control.progress.in_place = stderr_is_terminal();
    control.progress.width = stderr_terminal_width();
    const StopOnSignals signals(parallel.is_root());
    control.stop_requested = &StopOnSignals::requested;
    control.shot_started = [&](int, int ordinal, int total) {
      StopOnSignals::set_activity(
          parallel.group_count() > 1
              ? "finishing the shots in progress (each finished shot is kept)"
              : "finishing shot " + std::to_string(ordinal) + " of " + std::to_string(total) +
                    " (each finished shot is kept)",
          "lose the shot in progress");
    };
    RunStats stats;
    ShotFile shots;
    try {
      shots = part ? model_shots(*part, acq, args->params, std::cerr, &stats, parallel, &control)
                   : model_shots(model, acq, args->params, std::cerr, &stats, &parallel, &control);
    } catch (...) {
      if (parallel.is_root()) remove_shot_checkpoint_if_empty(args->output);
      throw;
    }
    if (control.stop_signal != 0) {
      const bool kept = parallel.is_root() && remove_shot_checkpoint_if_empty(args->output);
      throw RunStopped(control.stop_signal,
                       std::string("stopped by ") + signal_name(control.stop_signal) + "; " +
                           (kept ? "the finished shots are saved in " +
                                       shot_checkpoint_dir(args->output) +
                                       "; run the same command with --resume (any number of "
                                       "ranks) to continue"
                                 : std::string("no shot had finished, so nothing was saved")));
    }
    if (!parallel.is_root()) return; // world rank 0 alone holds every shot and writes
    write_shot_file(args->output, shots);
    remove_shot_checkpoint(args->output); // the output is safe: the shots are in it
    if (control.shots_resumed > 0)
      std::printf("rtm model: %d shot(s) resumed from the checkpoint, %zu modeled now\n",
                  control.shots_resumed, shots.shots.size() - size_t(control.shots_resumed));
    std::printf("wrote %s: %zu shot(s), %s, %d samples of %.4g ms; %.2f s, %.3f Gcells/s\n",
                args->output.c_str(), shots.shots.size(), describe_receiver_counts(shots).c_str(),
                shots.nt,
                shots.dt * 1e3, stats.seconds, stats.gcells_per_second());
  });
}

} // namespace rtm::app
