// rtm demo (and bare `rtm`): the whole pipeline on a small built-in model.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "io/errors.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "solvers/model_builder.h"
#include "solvers/modeling.h"

namespace rtm::app {
namespace {

struct DemoArgs {
  std::string output_dir = "rtm-demo";
  int shots = 3;
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

void run_demo(const DemoArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(a.output_dir);
  const std::string backend = resolve_backend(a.backend.backend, std::cerr);
  // A larger grid on a GPU; on the CPU the demo stays well under a minute on 2 cores.
  const VelocityModel model = demo_model(backend == "cuda" ? 256 : 96);
  const std::string model_path = a.output_dir + "/model.h5";
  const std::string shots_path = a.output_dir + "/shots.h5";
  write_velocity_model(model_path, model);

  ModelingParams params;
  params.backend = a.backend;
  params.backend.backend = backend;
  params.wavelet.f0 = 12;
  params.boundary.width = 20;
  params.record_time = 1.6 * (model.nz * model.dz) / 1800.0 * 1.1;
  const Acquisition acq = default_line_survey(model, a.shots, 2 * model.dz, 1);
  RunStats stats;
  const ShotFile shots = model_shots(model, acq, params, std::cerr, &stats);
  write_shot_file(shots_path, shots);

  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rtm demo: model %dx%dx%d (%s), %zu shots x %d steps on %s\n", model.nx, model.ny,
              model.nz, model_path.c_str(), shots.shots.size(), shots.nt, backend.c_str());
  std::printf("  shot gathers : %s\n", shots_path.c_str());
  std::printf("PERFORMANCE demo backend=%s modeling_gcells_per_s=%.3f modeling_s=%.2f total_s=%.2f\n",
              backend.c_str(), stats.gcells_per_second(), stats.seconds, total);
}

} // namespace

std::function<void()> register_demo(CLI::App& rtm) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = rtm.add_subcommand("demo", "Run the whole pipeline on a small built-in model "
                                             "(also what bare `rtm` does)");
  cmd->add_option("-o,--output-dir", args->output_dir, "Directory for the model, shots and images")
      ->capture_default_str();
  cmd->add_option("--shots", args->shots, "Number of shots")->capture_default_str();
  add_backend_options(cmd, args->backend);
  auto action = [args]() { run_demo(*args); };
  cmd->callback(action);
  return action;
}

} // namespace rtm::app
