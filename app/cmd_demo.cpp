// rtm demo (and bare `rtm`): the whole pipeline on a small built-in model.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "solvers/contracts/errors.h"
#include "io/path_checks.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/smoothing.h"

namespace rtm::app {
namespace {

struct DemoArgs {
  std::string output_dir = "rtm-demo";
  int shots = 0;       // 0: 6 on the CPU, 12 on a GPU
  double smooth = 150; // metres: the migration model is the true one smoothed over this length
  std::string reconstruction = "boundary";
  bool time_dispersion_transform = true;
  BackendOptions backend;
};

// Flat reflectors over a salt-like body: the salt model with two flat interfaces above the salt.
VelocityModel demo_model(int n) {
  ModelShape shape;
  shape.nx = n;
  shape.ny = n / 2;
  shape.nz = n / 2 + n / 4;
  shape.dx = shape.dy = shape.dz = 12.5;
  VelocityModel m = salt_model(shape, 1800, 3200, 4500);
  const double depth = (shape.nz - 1) * shape.dz;
  for (int k = 0; k < m.nz; ++k) {
    const double z = k * m.dz;
    const float layer = z < 0.18 * depth ? 1800.0f : z < 0.32 * depth ? 2300.0f : 0.0f;
    if (layer == 0.0f) continue;
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = layer;
  }
  return m;
}

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
  std::filesystem::create_directories(a.output_dir);
  const std::string backend = resolve_backend(a.backend.backend, std::cerr);
  const Reconstruction reconstruction = parse_reconstruction(a.reconstruction);
  const int nshots = a.shots > 0 ? a.shots : backend == "cuda" ? 12 : 6;
  // A larger grid on a GPU; on the CPU the whole demo stays under two minutes on 2 cores.
  const VelocityModel model = demo_model(backend == "cuda" ? 256 : 96);
  const std::string model_path = a.output_dir + "/model.h5";
  const std::string shots_path = a.output_dir + "/shots.h5";
  const std::string image_path = a.output_dir + "/image.h5";
  write_velocity_model(model_path, model);

  // 1. Shots modelled in the true model.
  ModelingParams params;
  params.backend = a.backend;
  params.backend.backend = backend;
  params.wavelet.f0 = 12;
  params.time_dispersion_transform = a.time_dispersion_transform;
  // The demo keeps the damping sponge of 20 cells (2-3% reflections, plenty for a picture): in a
  // model this small the layers are three quarters of the grid, and the C-PML's scalar CPU passes
  // would make the demo three times slower on two cores (docs/rtm.md, section 11).
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = 20;
  params.record_time = 1.6 * (model.nz * model.dz) / 1800.0 * 1.1;
  const Acquisition acq = default_line_survey(model, nshots, 2 * model.dz, 1);
  RunStats modeling;
  const ShotFile shots = model_shots(model, acq, params, std::cerr, &modeling);
  write_shot_file(shots_path, shots);

  // 2. Migrated in the smoothed model.
  const VelocityModel migration_model = smooth_model(model, a.smooth);
  MigrationParams migration;
  migration.backend = params.backend;
  migration.boundary = params.boundary;
  migration.point_interpolation = params.point_interpolation;
  migration.reconstruction = reconstruction;
  RunStats migrating;
  const MigrationResult result = migrate_shots(migration_model, shots, migration, std::cerr, &migrating);
  write_volumes(image_path, migration_model,
                {{"image", &result.image, kImageUnits},
                 {"illumination", &result.illumination, kIlluminationUnits},
                 {"image_raw", &result.raw_image, kRawImageUnits}});
  // Figures of the image, its illumination and the true model, through the middle of the model.
  std::vector<std::string> pngs;
  if (figures_supported()) {
    const SliceCells middle = locate_slices({}, model);
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
  std::printf("rtm demo: model %dx%dx%d (%s), %zu shots x %d steps on %s\n", model.nx, model.ny,
              model.nz, model_path.c_str(), shots.shots.size(), shots.nt, backend.c_str());
  std::printf("  shot gathers : %s\n", shots_path.c_str());
  std::printf("  image        : %s (/image, /illumination, /image_raw), migrated in the model "
              "smoothed over %.0f m, %s reconstruction\n",
              image_path.c_str(), a.smooth, reconstruction_name(reconstruction));
  for (const std::string& p : pngs) std::printf("  figure       : %s\n", p.c_str());
  if (!figures_supported())
    std::printf("  figures      : none: %s\n", no_figure_support_message().c_str());
  std::printf("PERFORMANCE demo backend=%s modeling_gcells_per_s=%.3f migration_gcells_per_s=%.3f "
              "modeling_s=%.2f migration_s=%.2f total_s=%.2f\n",
              backend.c_str(), modeling.gcells_per_second(), migrating.gcells_per_second(),
              modeling.seconds, migrating.seconds, total);
}

} // namespace

std::function<void()> register_demo(CLI::App& rtm) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = rtm.add_subcommand("demo", "Run the whole pipeline on a small built-in model "
                                             "(also what bare `rtm` does)");
  cmd->add_option("-o,--output-dir", args->output_dir, "Directory for the model, shots and images")
      ->capture_default_str();
  cmd->add_option("--shots", args->shots, "Number of shots; 0: 6 on the CPU, 12 on a GPU")
      ->capture_default_str();
  cmd->add_option("--smooth", args->smooth,
                  "Migration model = the true model smoothed over this many metres")
      ->capture_default_str();
  cmd->add_option("--reconstruction", args->reconstruction,
                  "Source wavefield backwards in time: boundary (exact) or snapshots")
      ->check(CLI::IsMember({"boundary", "snapshots"}))
      ->capture_default_str();
  add_time_dispersion_option(cmd, args->time_dispersion_transform);
  add_backend_options(cmd, args->backend);
  auto action = [args, cmd]() { run_demo(*args, config_input(cmd)); };
  cmd->callback(action);
  return action;
}

} // namespace rtm::app
