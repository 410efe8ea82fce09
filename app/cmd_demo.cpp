// rtm demo (and bare `rtm`): the whole pipeline on a small built-in model.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "app/commands.h"
#include "app/options.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/atomic_file.h"
#include "io/path_checks.h"
#include "io/provenance.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/drivers/demo.h"

namespace rtm::app {
namespace {

struct DemoArgs {
  std::string output_dir = "rtm-demo";
  std::vector<int> shot_grid; // NX,NY; empty: 3,2 on the CPU, 4,3 on a GPU
  int receiver_step = 2;     // cells between receivers along x and y; default 2 (CPU), 3 (GPU)
  double smooth = 150;       // metres: the migration model is the true one smoothed over this length
  bool receiver_step_given = false, smooth_given = false; // else the setup's own (solvers/drivers/demo.h)
  std::string reconstruction = "auto";
  bool time_dispersion_transform = true;
  BackendOptions backend;
};

// The demo's only possible input is a config file: none of its outputs may be it.
void check_demo_outputs(const DemoArgs& a, const NamedPath& config) {
  std::vector<NamedPath> outputs;
  for (const char* file : {"/model.h5", "/shots.h5", "/image.h5"})
    outputs.push_back({"--output-dir", a.output_dir + file});
  for (const char* figure : {"/image.png", "/illumination.png", "/model.png"})
    outputs.push_back({"--output-dir", a.output_dir + figure});
  check_outputs_are_not_inputs(outputs, {config});
}

void run_demo(const DemoArgs& a, const NamedPath& config) {
  const auto start = std::chrono::steady_clock::now();
  check_demo_outputs(a, config);
  check_output_directory(a.output_dir, "--output-dir");
  std::error_code failed;
  std::filesystem::create_directories(a.output_dir, failed);
  if (failed) // the check passed, yet the file system said no (a race, a quota)
    throw InputError("--output-dir " + a.output_dir + ": cannot create this directory: " +
                     failed.message());
  const std::string backend = resolve_backend(a.backend.backend, std::cerr);
  DemoSetup setup = default_demo_setup(backend);
  if (!a.shot_grid.empty()) setup.shots_x = a.shot_grid[0], setup.shots_y = a.shot_grid[1];
  if (a.receiver_step_given) setup.receiver_step = a.receiver_step;
  if (a.smooth_given) setup.smooth = a.smooth;
  setup.reconstruction = parse_reconstruction(a.reconstruction);
  setup.time_dispersion_transform = a.time_dispersion_transform;
  setup.backend = a.backend;
  setup.backend.backend = backend;
  const std::string model_path = a.output_dir + "/model.h5";
  const std::string shots_path = a.output_dir + "/shots.h5";
  const std::string image_path = a.output_dir + "/image.h5";

  // Shots modelled in the true model, migrated in the smoothed one (solvers/drivers/demo.h).
  const DemoRun run = run_demo_pipeline(setup, std::cerr);
  const VelocityModel& model = run.model;
  const MigrationResult& result = run.migration;
  write_velocity_model(model_path, model);
  write_shot_file(shots_path, run.shots);
  record_run_parameter("focus", format_number(run.focus.focus, 3) +
                                    " of the image energy within " + std::to_string(kFocusRadius) +
                                    " cells of an interface of the true model");
  write_volumes(image_path, run.migration_model,
                {{"image", &result.image, kImageUnits},
                 {"illumination", &result.illumination, kIlluminationUnits},
                 {"image_raw", &result.raw_image, kRawImageUnits}});
  // Figures of the image, its illumination and the true model, where demo_slice_position says.
  std::vector<std::string> pngs;
  if (figures_supported()) {
    const SliceCells middle = locate_slices(demo_slice_position(model), model);
    auto figure = [&](const std::string& name, const std::vector<float>& values,
                      const std::string& units, const std::string& source) {
      const std::string png = a.output_dir + "/" + (name == "vp" ? "model" : name) + ".png";
      write_figure(png, volume_figure(model, values, volume_kind_of(name), name, units, source,
                                      middle));
      pngs.push_back(png);
    };
    figure("image", result.image, "relative amplitude", image_path);
    figure("illumination", result.illumination, "", image_path);
    figure("vp", model.vp, "m/s", model_path);
  }

  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rtm demo: model %dx%dx%d (%s), %zu shots (%d x %d grid) x %d steps on %s, %zu "
              "receivers (every %d cells in x and y)\n",
              model.nx, model.ny, model.nz, model_path.c_str(), run.shots.shots.size(),
              setup.shots_x, setup.shots_y, run.shots.nt, backend.c_str(),
              run.shots.receivers.size(), setup.receiver_step);
  std::printf("  shot gathers : %s\n", shots_path.c_str());
  std::printf("  image        : %s (/image, /illumination, /image_raw), migrated in the model "
              "smoothed over %.0f m, %s reconstruction\n",
              image_path.c_str(), setup.smooth, reconstruction_name(run.migration.reconstruction));
  std::printf("  focus        : %.3f of the image energy lies within %d cells of an interface of "
              "the true model (those cells are %.3f of the volume; docs/rtm.md, section 11a)\n",
              run.focus.focus, kFocusRadius, run.focus.near_share);
  for (const std::string& p : pngs) std::printf("  figure       : %s\n", p.c_str());
  if (!figures_supported())
    std::printf("  figures      : none: %s\n", no_figure_support_message().c_str());
  std::printf("PERFORMANCE demo backend=%s modeling_gcells_per_s=%.3f migration_gcells_per_s=%.3f "
              "modeling_s=%.2f migration_s=%.2f total_s=%.2f focus=%.3f\n",
              backend.c_str(), run.modeling.gcells_per_second(), run.migrating.gcells_per_second(),
              run.modeling.seconds, run.migrating.seconds, total, run.focus.focus);
}

} // namespace

std::function<void()> register_demo(CLI::App& rtm) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = rtm.add_subcommand("demo", "Run the whole pipeline on a small built-in model "
                                             "(also what bare `rtm` does)");
  cmd->add_option("-o,--output-dir", args->output_dir, "Directory for the model, shots and images")
      ->capture_default_str();
  cmd->add_option("--shot-grid", args->shot_grid,
                  "NX,NY shots on a grid evenly spread over the model; default 3,2 on the CPU, 4,3 "
                  "on a GPU")
      ->delimiter(',')
      ->expected(2)
      ->check(positive_count());
  cmd->add_option("--receiver-step", args->receiver_step,
                  "Cells between receivers along x and y (an areal spread over the whole model); "
                  "default 2 on the CPU, 3 on a GPU")
      ->check(positive_count());
  cmd->add_option("--smooth", args->smooth,
                  "Migration model = the true model smoothed over this many metres")
      ->capture_default_str();
  cmd->add_option("--reconstruction", args->reconstruction,
                  "Source wavefield backwards in time: snapshots (two sweeps), boundary (three, "
                  "less memory) or auto (snapshots where they fit)")
      ->check(CLI::IsMember({"auto", "boundary", "snapshots"}))
      ->capture_default_str();
  add_time_dispersion_option(cmd, args->time_dispersion_transform);
  add_backend_options(cmd, args->backend);
  auto action = [args, cmd]() {
    args->receiver_step_given = cmd->count("--receiver-step") > 0;
    args->smooth_given = cmd->count("--smooth") > 0;
    run_demo(*args, config_input(cmd));
  };
  cmd->callback(action);
  return action;
}

} // namespace rtm::app
