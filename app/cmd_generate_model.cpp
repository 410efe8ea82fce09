// rtm generate-model: synthetic velocity models written to HDF5.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "io/atomic_file.h"
#include "io/host_memory.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/physics.h"
#include "io/path_checks.h"
#include "io/velocity_model.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/tti_models.h"

namespace rtm::app {
namespace {

struct GenerateModelArgs {
  std::string type = "layered";
  std::vector<int> shape{128, 128, 128};
  std::vector<double> spacing{10.0};
  double velocity = 2000;            // constant / scatterer background / gradient top
  std::vector<double> interfaces;    // layered: depths (m)
  std::vector<double> velocities;    // layered: one per layer
  double v_top = 1500, v_bottom = 3500, v_salt = 4500, gradient = 0.5, v_max = 4500;
  double scatterer_velocity = 2500;
  double scatterer_radius = 0;
  int shots = 0;                     // >0: store a line survey in the file
  double survey_depth = 20;
  bool allow_unusual_velocities = false;
  std::string output;
  // TTI (docs/models.md): per-layer Thomsen parameters for layered and tilted; a common axis for
  // layered; the dip of tilted (whose axis is normal to the layers).
  std::vector<double> epsilon, delta;
  double tilt = 0, azimuth = 0, dip = 30;
};

// The model is built whole in host memory and written in one piece: one float32 array per cell,
// five with the anisotropy (vp, epsilon, delta, theta, phi). Refused before any of it is allocated
// when it cannot fit in memory (a run may use 95% of what is available, as rtm model's) or on the
// output's file system, rather than ending in std::bad_alloc or the out-of-memory killer.
void check_generated_model_fits(const GenerateModelArgs& a) {
  if (a.shape.size() != 3) return; // add_shape_option refuses it
  ModelShape shape;
  shape.nx = a.shape[0], shape.ny = a.shape[1], shape.nz = a.shape[2];
  shape.dx = shape.dy = shape.dz = 1; // the spacing is build()'s to check; the size is not
  check_model_shape(shape); // absurd or empty shapes first, with their own message
  const bool anisotropic = a.type == "tilted" || !a.epsilon.empty() || !a.delta.empty();
  const uint64_t cells = uint64_t(shape.nx) * uint64_t(shape.ny) * uint64_t(shape.nz);
  const uint64_t bytes = cells * sizeof(float) * (anisotropic ? 5 : 1);
  const std::string what = std::to_string(cells) + " cells x 4 B" +
                           (anisotropic ? " x 5 arrays (vp, epsilon, delta, theta, phi)" : "");
  const std::string asked = "--shape " + std::to_string(shape.nx) + "," + std::to_string(shape.ny) +
                            "," + std::to_string(shape.nz);
  const uint64_t available = host_available_bytes();
  if (available > 0 && double(bytes) > 0.95 * double(available)) {
    const double fitting = 0.95 * double(available) / double(bytes) * double(cells);
    throw InputError(asked + ": the model needs " + format_bytes(bytes) + " of host memory (" +
                     what + ") but " + format_bytes(available) + " are available (" +
                     host_available_source() + "; a run may use 95% of it). To fit: a smaller "
                     "--shape (about " + std::to_string(uint64_t(fitting)) + " cells at most "
                     "here, e.g. " + std::to_string(uint64_t(std::cbrt(fitting))) + "^3), or a "
                     "coarser --spacing over the same extent");
  }
  check_disk_space(a.output, bytes, "-o " + a.output + " (" + asked + ": " + what + ")");
}

VelocityModel build(const GenerateModelArgs& a) {
  if (a.spacing.size() != 1 && a.spacing.size() != 3)
    throw InputError("--spacing: give one value (all axes) or three (DX,DY,DZ)");
  ModelShape shape;
  shape.nx = a.shape[0];
  shape.ny = a.shape[1];
  shape.nz = a.shape[2];
  shape.dx = a.spacing[0];
  shape.dy = a.spacing.size() == 3 ? a.spacing[1] : a.spacing[0];
  shape.dz = a.spacing.size() == 3 ? a.spacing[2] : a.spacing[0];
  if (a.type == "constant") return constant_model(shape, a.velocity);
  if (a.type == "gradient") return gradient_model(shape, a.v_top, a.gradient, a.v_max);
  if (a.type == "salt") return salt_model(shape, a.v_top, a.v_bottom, a.v_salt);
  if (a.type == "scatterer")
    return scatterer_model(shape, a.velocity, a.scatterer_velocity, -1, -1, -1, a.scatterer_radius);
  if (a.type != "layered" && a.type != "tilted" && (!a.epsilon.empty() || !a.delta.empty()))
    throw InputError("--epsilon, --delta: anisotropy is drawn for --type layered or tilted only");
  // layered and tilted: default three layers at 1/3 and 2/3 of the depth
  std::vector<double> depths = a.interfaces, vels = a.velocities;
  if (depths.empty() && vels.empty()) {
    const double depth = (shape.nz - 1) * shape.dz;
    depths = {depth / 3, 2 * depth / 3};
    vels = {1500, 2200, 3000};
  }
  if (a.epsilon.empty() != a.delta.empty())
    throw InputError("--epsilon and --delta: give both (one value, or one per layer)");
  if (a.type == "tilted")
    return tilted_layer_model(shape, a.dip, depths, vels, a.epsilon.empty() ? std::vector<double>{0.2} : a.epsilon,
                              a.delta.empty() ? std::vector<double>{0.1} : a.delta);
  VelocityModel m = layered_model(shape, depths, vels);
  if (!a.epsilon.empty()) set_layered_anisotropy(m, depths, a.epsilon, a.delta, a.tilt, a.azimuth);
  return m;
}

// "x 630 to 650 m (cells 63-65)": a region's extent along one axis.
std::string span(const char* axis, int c0, int c1, double d) {
  char text[128];
  std::snprintf(text, sizeof text, "%s %.6g to %.6g m (cells %d-%d)", axis, c0 * d, c1 * d, c0, c1);
  return text;
}

// What was drawn and where, for the log line (the builders refuse a model that would lack what
// its type promises: a salt body with no cell, a layer no cell falls in).
std::string describe_drawn(const GenerateModelArgs& a, const VelocityModel& m) {
  std::ostringstream out;
  if (a.type == "scatterer" || a.type == "salt") {
    const double v = a.type == "scatterer" ? a.scatterer_velocity : a.v_salt;
    const CellRegion r = cells_with_velocity(m, v); // never empty: the builders refuse that
    out << (a.type == "scatterer" ? "scatterer" : "salt body") << " of " << v << " m/s, "
        << r.cells << " cell(s): " << span("x", r.i0, r.i1, m.dx) << ", "
        << span("y", r.j0, r.j1, m.dy) << ", " << span("z", r.k0, r.k1, m.dz);
  } else if (a.type == "layered" || a.type == "tilted") {
    out << "layers:";
    int k = 0;
    while (k < m.nz) {
      int end = k;
      while (end + 1 < m.nz && m.at(0, 0, end + 1) == m.at(0, 0, k)) ++end;
      out << " " << m.at(0, 0, k) << " m/s " << span("z", k, end, m.dz) << (end + 1 < m.nz ? ";" : "");
      k = end + 1;
    }
  } else if (a.type == "gradient") {
    out << "v(z) from " << m.at(0, 0, 0) << " m/s at z = 0 to " << m.at(0, 0, m.nz - 1)
        << " m/s at z = " << (m.nz - 1) * m.dz << " m";
  } else {
    out << "vp " << m.vmin() << " m/s everywhere";
  }
  if (physics_of(m) == Physics::tti) {
    const auto [emin, emax] = std::minmax_element(m.anisotropy.epsilon.begin(), m.anisotropy.epsilon.end());
    const auto [dmin, dmax] = std::minmax_element(m.anisotropy.delta.begin(), m.anisotropy.delta.end());
    out << "; TTI: epsilon " << *emin << " to " << *emax << ", delta " << *dmin << " to " << *dmax
        << ", axis tilt " << m.anisotropy.theta[0] << " deg, azimuth " << m.anisotropy.phi[0] << " deg";
    if (a.type == "tilted") out << " (normal to layers dipping " << a.dip << " deg along x)";
  }
  return out.str();
}

} // namespace

void register_generate_model(CLI::App& rtm) {
  auto args = std::make_shared<GenerateModelArgs>();
  CLI::App* cmd = rtm.add_subcommand(
      "generate-model", "Write a synthetic velocity model (constant, layered, salt, scatterer, "
                        "gradient; tilted: anisotropic dipping layers) to HDF5");
  cmd->add_option("--type", args->type, "Model kind")
      ->check(CLI::IsMember({"constant", "layered", "salt", "scatterer", "gradient", "tilted"}))
      ->capture_default_str();
  add_shape_option(cmd, "--shape", args->shape, "Cells NX,NY,NZ")->capture_default_str();
  cmd->add_option("--spacing", args->spacing, "Cell size in metres: D or DX,DY,DZ")
      ->delimiter(',')
      ->check(positive_finite())
      ->capture_default_str();
  cmd->add_option("--velocity", args->velocity, "constant/scatterer: background velocity (m/s)")
      ->capture_default_str();
  cmd->add_option("--interfaces", args->interfaces, "layered: interface depths (m), comma separated")
      ->delimiter(',');
  cmd->add_option("--velocities", args->velocities, "layered: layer velocities (m/s), one more than interfaces")
      ->delimiter(',');
  cmd->add_option("--v-top", args->v_top, "salt/gradient: velocity at the surface")->capture_default_str();
  cmd->add_option("--v-bottom", args->v_bottom, "salt: background velocity at the base")->capture_default_str();
  cmd->add_option("--v-salt", args->v_salt, "salt: velocity of the salt body")->capture_default_str();
  cmd->add_option("--gradient", args->gradient, "gradient: dv/dz (1/s)")->capture_default_str();
  cmd->add_option("--v-max", args->v_max, "gradient: clip velocity")->capture_default_str();
  cmd->add_option("--scatterer-velocity", args->scatterer_velocity, "scatterer: its velocity")
      ->capture_default_str();
  cmd->add_option("--scatterer-radius", args->scatterer_radius, "scatterer: radius (m); 0: one cell")
      ->check(non_negative_finite());
  cmd->add_option("--survey-shots", args->shots,
                  "Also store a line survey: this many shots and a receiver on every cell of the "
                  "centre inline (datasets /sources, /receivers)")
      ->check(non_negative_count());
  cmd->add_option("--survey-depth", args->survey_depth, "Depth of the stored survey (m)")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--epsilon", args->epsilon,
                  "layered/tilted: Thomsen epsilon, one value or one per layer (TTI datasets "
                  "/epsilon, /delta, /theta, /phi; tilted default 0.2)")
      ->delimiter(',');
  cmd->add_option("--delta", args->delta, "layered/tilted: Thomsen delta (<= epsilon), as --epsilon (tilted default 0.1)")
      ->delimiter(',');
  cmd->add_option("--tilt", args->tilt, "layered with --epsilon: the symmetry axis' tilt from vertical (degrees)")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--azimuth", args->azimuth, "layered with --epsilon: the axis' azimuth from x towards y (degrees)")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--dip", args->dip, "tilted: dip of the layers along x (degrees); the axis is normal to them")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Output HDF5 file")->required();
  add_velocity_check_flag(cmd, args->allow_unusual_velocities);

  cmd->callback([args, cmd]() {
    check_output_path(args->output);
    check_outputs_are_not_inputs({{"-o", args->output}}, {config_input(cmd)});
    check_generated_model_fits(*args);
    const VelocityModel model = build(*args);
    if (!args->allow_unusual_velocities)
      check_plausible_velocities(model, "the " + args->type + " model asked for",
                                 "give velocities in m/s (e.g. 2000, not 2)",
                                 "give velocities in m/s (e.g. 2000, not 2000000)");
    ModelGeometry geometry;
    if (args->shots > 0) {
      const Acquisition acq = default_line_survey(model, args->shots, args->survey_depth);
      geometry.sources = acq.sources;
      geometry.receivers = acq.receivers;
    }
    const std::string drawn = describe_drawn(*args, model);
    write_velocity_model(args->output, model, geometry);
    std::cout << "wrote " << args->output << ": " << args->type << " model " << model.nx << "x"
              << model.ny << "x" << model.nz << " cells of " << model.dx << "x" << model.dy << "x"
              << model.dz << " m, vp " << model.vmin() << " to " << model.vmax() << " m/s; " << drawn;
    if (!geometry.sources.empty())
      std::cout << ", " << geometry.sources.size() << " sources, " << geometry.receivers.size()
                << " receivers";
    std::cout << "\n";
  });
}

} // namespace rtm::app
