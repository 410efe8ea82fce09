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

namespace rtm::app {
namespace {

struct ModelArgs {
  std::string model_path;
  std::string output;
  int shots = 0;                // >0: generate a line survey, overriding the file's geometry
  double source_depth = 20;     // m below the model origin
  int receiver_step = 1;        // cells between receivers on the generated line
  ModelingParams params;
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
  cmd->add_option("--source-depth", args->source_depth,
                  "Depth of generated sources and receivers (m)")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--receiver-step", args->receiver_step, "Cells between generated receivers")
      ->check(positive_count())
      ->capture_default_str();
  add_time_options(cmd, args->params);
  add_boundary_options(cmd, args->params.boundary);
  add_backend_options(cmd, args->params.backend);

  cmd->callback([args]() {
    check_output_path(args->output); // before the run, not after it
    const VelocityModel model = read_velocity_model(args->model_path);
    Acquisition acq;
    const ModelGeometry stored = read_model_geometry(args->model_path);
    if (args->shots > 0 || stored.sources.empty() || stored.receivers.empty()) {
      const double deepest = (model.nz - 1) * model.dz;
      if (args->source_depth < 0 || args->source_depth > deepest)
        throw InputError("--source-depth " + std::to_string(args->source_depth) +
                         " m puts the generated sources and receivers outside the model, whose "
                         "depth runs from 0 to " + std::to_string(deepest) + " m below its origin");
      acq = default_line_survey(model, std::max(1, args->shots), args->source_depth,
                                args->receiver_step);
    } else {
      acq.sources = stored.sources;
      acq.receivers = stored.receivers;
    }
    RunStats stats;
    const ShotFile shots = model_shots(model, acq, args->params, std::cerr, &stats);
    write_shot_file(args->output, shots);
    std::printf("wrote %s: %zu shot(s), %zu receivers, %d samples of %.4g ms; %.2f s, %.3f Gcells/s\n",
                args->output.c_str(), shots.shots.size(), shots.receivers.size(), shots.nt,
                shots.dt * 1e3, stats.seconds, stats.gcells_per_second());
  });
}

} // namespace rtm::app
