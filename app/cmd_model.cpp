// rtm model: forward modeling of shot gathers into HDF5.
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "io/atomic_file.h"
#include "io/errors.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "solvers/modeling.h"
#include "solvers/shot_parallel.h"

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
  add_time_options(cmd, args->params);
  add_boundary_options(cmd, args->params.boundary);
  add_point_interpolation_option(cmd, args->params.point_interpolation);
  add_backend_options(cmd, args->params.backend);
  add_parallel_options(cmd, args->parallel);

  cmd->callback([args]() {
    const ParallelContext parallel(args->parallel.ranks_per_shot);
    std::ostream& info = parallel.is_root() ? std::cerr : null_stream();
    if (parallel.is_root()) check_output_path(args->output); // before the run, not after it
    // Every rank reads the model and builds the same acquisition (a file system all nodes see).
    const VelocityModel model = read_velocity_model(args->model_path);
    Acquisition acq;
    const ModelGeometry stored = read_model_geometry(args->model_path);
    const bool generate = args->shots > 0 || !args->shot_grid.empty() || args->receiver_grid;
    if (generate || stored.sources.empty() || stored.receivers.empty()) {
      const double deepest = (model.nz - 1) * model.dz;
      const double receiver_depth =
          args->receiver_depth >= 0 ? args->receiver_depth : args->source_depth;
      for (const auto& [name, depth] : {std::pair{"--source-depth", args->source_depth},
                                        std::pair{"--receiver-depth", receiver_depth}})
        if (depth < 0 || depth > deepest)
          throw InputError(std::string(name) + " " + std::to_string(depth) +
                           " m puts generated points outside the model, whose depth runs from 0 "
                           "to " + std::to_string(deepest) + " m below its origin");
      SurveyLayout layout;
      layout.shots_x = args->shot_grid.empty() ? std::max(1, args->shots) : args->shot_grid[0];
      layout.shots_y = args->shot_grid.empty() ? 1 : args->shot_grid[1];
      layout.source_depth = args->source_depth;
      layout.receiver_depth = receiver_depth;
      layout.receiver_step = args->receiver_step;
      layout.receiver_grid = args->receiver_grid;
      acq = make_survey(model, layout);
    } else {
      acq.sources = stored.sources;
      acq.receivers = stored.receivers;
    }
    place_on_device(args->params.backend, parallel, args->parallel, info);
    RunStats stats;
    const ShotFile shots = model_shots(model, acq, args->params, std::cerr, &stats, &parallel);
    if (!parallel.is_root()) return; // world rank 0 alone holds every shot and writes
    write_shot_file(args->output, shots);
    std::printf("wrote %s: %zu shot(s), %zu receivers, %d samples of %.4g ms; %.2f s, %.3f Gcells/s\n",
                args->output.c_str(), shots.shots.size(), shots.receivers.size(), shots.nt,
                shots.dt * 1e3, stats.seconds, stats.gcells_per_second());
  });
}

} // namespace rtm::app
