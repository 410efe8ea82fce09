// rtm import: velocity models from SEG-Y, NumPy or raw float32, and shot gathers from SEG-Y,
// into rtm's HDF5 files (docs/io.md). Every model passes the same checks as an HDF5 model.
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "io/array_file.h"
#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"
#include "io/path_checks.h"
#include "io/segy_file.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/xdmf_sidecar.h"
#include "solvers/drivers/wavelet.h"

namespace rtm::app {
namespace {

struct ImportModelArgs {
  std::string input, output, format = "auto", units = "m/s", order = "zyx";
  std::vector<int> shape;            // raw: NX,NY,NZ
  std::vector<double> spacing;       // D or DX,DY,DZ
  std::vector<double> origin;        // OX,OY,OZ
  double dz = 0;                     // SEG-Y: depth step (m)
  bool big_endian = false;
  bool allow_unusual = false;        // --allow-unusual-velocities
};

struct ImportShotsArgs {
  std::string input, output;
  double f0 = 0, t0 = -1;
};

std::string detect_format(const ImportModelArgs& a) {
  if (a.format != "auto") return a.format;
  if (has_npy_extension(a.input)) return "npy";
  if (has_segy_extension(a.input)) return "segy";
  if (!a.shape.empty()) return "raw";
  throw InputError(a.input + ": cannot tell the format from the name; give --format segy, npy or "
                             "raw (raw also needs --shape and --spacing)");
}

double to_metres_per_second(const std::string& units) {
  if (units == "m/s") return 1.0;
  if (units == "km/s") return 1000.0;
  if (units == "ft/s") return 0.3048;
  throw InputError("--units " + units + ": expected m/s, km/s or ft/s");
}

// Spacing and origin from the options onto `model` (SEG-Y may bring its own).
void apply_grid_options(const ImportModelArgs& a, VelocityModel& model, bool spacing_required) {
  if (a.spacing.size() == 1) {
    model.dx = model.dy = model.dz = a.spacing[0];
  } else if (a.spacing.size() == 3) {
    model.dx = a.spacing[0];
    model.dy = a.spacing[1];
    model.dz = a.spacing[2];
  } else if (!a.spacing.empty()) {
    throw InputError("--spacing: give one value (all axes) or three (DX,DY,DZ)");
  } else if (spacing_required) {
    throw InputError("--spacing is required for " + a.format + " input: a plain array carries no "
                     "cell size");
  }
  if (a.origin.size() == 3) {
    model.ox = a.origin[0];
    model.oy = a.origin[1];
    model.oz = a.origin[2];
  } else if (!a.origin.empty()) {
    throw InputError("--origin: give three values OX,OY,OZ (metres)");
  }
}

VelocityModel import_model(ImportModelArgs a) {
  a.format = detect_format(a);
  const double scale = to_metres_per_second(a.units);
  VelocityModel model;
  if (a.format == "segy") {
    SegyVolumeReadOptions options;
    options.dz = a.dz;
    if (a.spacing.size() == 1) options.dx = options.dy = a.spacing[0];
    if (a.spacing.size() == 3) {
      options.dx = a.spacing[0];
      options.dy = a.spacing[1];
      if (a.dz <= 0) options.dz = a.spacing[2];
    }
    model = read_segy_volume(a.input, options);
    if (a.origin.size() == 3) apply_grid_options(ImportModelArgs{a.input, "", "segy", a.units, a.order, {}, {}, a.origin}, model, false);
  } else if (a.format == "npy" || a.format == "raw") {
    const AxisOrder order = parse_axis_order(a.order, "--order");
    ArrayShape shape;
    if (a.format == "npy") {
      model.vp = read_npy(a.input, order, shape);
    } else {
      if (a.shape.size() != 3) throw InputError("--shape NX,NY,NZ is required for raw input");
      shape = {a.shape[0], a.shape[1], a.shape[2]};
      model.vp = read_raw_float32(a.input, shape, order, a.big_endian);
    }
    model.nx = shape.nx;
    model.ny = shape.ny;
    model.nz = shape.nz;
    apply_grid_options(a, model, true);
  } else {
    throw InputError("--format " + a.format + ": expected auto, segy, npy or raw");
  }
  for (size_t c = 0; c < model.vp.size(); ++c) {
    if (!(model.vp[c] > 0))
      throw InputError(a.input + ": value " + std::to_string(model.vp[c]) + " at (z,y,x) = (" +
                       std::to_string(c / (size_t(model.nx) * model.ny)) + "," +
                       std::to_string((c / model.nx) % model.ny) + "," + std::to_string(c % model.nx) +
                       "); expected every velocity > 0");
    model.vp[c] = float(model.vp[c] * scale);
  }
  // The same plausibility check as an HDF5 model (io/velocity_model.h): a units slip refused here.
  if (!a.allow_unusual)
    check_plausible_velocities(model, a.input + " (read as " + a.units + ")",
                               "give --units km/s", "the values look 1000 times too large for --units " + a.units);
  return model;
}

} // namespace

void register_import(CLI::App& rtm) {
  CLI::App* cmd = rtm.add_subcommand(
      "import", "Bring a velocity model (SEG-Y, NumPy .npy, raw float32) or shot gathers (SEG-Y) "
                "into rtm's HDF5 files");
  cmd->require_subcommand(1);

  auto m = std::make_shared<ImportModelArgs>();
  CLI::App* model = cmd->add_subcommand("model", "A velocity model into HDF5 (/vp)");
  model->add_option("input", m->input, "SEG-Y (.sgy/.segy), NumPy (.npy) or raw float32 file")
      ->required();
  model->add_option("-o,--output", m->output, "Output HDF5 model file")->required();
  model->add_option("--format", m->format, "Input format (auto: from the file name; raw needs --shape)")
      ->check(CLI::IsMember({"auto", "segy", "npy", "raw"}))
      ->capture_default_str();
  model->add_option("--units", m->units, "Units of the values in the file")
      ->check(CLI::IsMember({"m/s", "km/s", "ft/s"}))
      ->capture_default_str();
  model->add_option("--order", m->order,
                    "npy/raw: axis order of the array, zyx ([nz][ny][nx], x fastest) or xyz "
                    "([nx][ny][nz], z fastest)")
      ->check(CLI::IsMember({"zyx", "xyz"}))
      ->capture_default_str();
  add_shape_option(model, "--shape", m->shape, "raw: cells NX,NY,NZ");
  model->add_option("--spacing", m->spacing,
                    "Cell size in metres, D or DX,DY,DZ (npy/raw: required; SEG-Y: for files "
                    "without trace coordinates)")
      ->delimiter(',')
      ->check(positive_finite());
  model->add_option("--origin", m->origin, "Position of cell (0,0,0) in metres, OX,OY,OZ")
      ->delimiter(',')
      ->check(finite_number());
  model->add_option("--dz", m->dz,
                    "SEG-Y: depth step in metres (default: the sample-interval field read as "
                    "millimetres)")
      ->check(positive_finite());
  model->add_flag("--big-endian", m->big_endian, "raw: the file is big-endian (default little)");
  model->add_flag("--allow-unusual-velocities", m->allow_unusual,
                  "Accept velocities outside 300 to 10000 m/s (an unusual medium on purpose)");
  model->callback([m]() {
    check_output_path(m->output);
    check_outputs_are_not_inputs({{"-o", m->output}, {"-o (its sidecar)", xdmf_path_for(m->output)}},
                                 {{"input", m->input}});
    const VelocityModel v = import_model(*m);
    write_velocity_model(m->output, v);
    std::printf("wrote %s: %dx%dx%d cells (x, y, z) of %gx%gx%g m, origin (%g, %g, %g) m, vp %g "
                "to %g m/s\n",
                m->output.c_str(), v.nx, v.ny, v.nz, v.dx, v.dy, v.dz, v.ox, v.oy, v.oz,
                double(v.vmin()), double(v.vmax()));
  });

  auto s = std::make_shared<ImportShotsArgs>();
  CLI::App* shots = cmd->add_subcommand("shots", "Pre-stack shot gathers from SEG-Y into HDF5");
  shots->add_option("input", s->input, "SEG-Y file, one trace per (shot, receiver)")->required();
  shots->add_option("-o,--output", s->output, "Output HDF5 shot file")->required();
  shots->add_option("--f0", s->f0,
                    "Peak frequency (Hz) of the Ricker source wavelet migration will inject "
                    "(SEG-Y carries no wavelet)")
      ->required()
      ->check(positive_finite());
  shots->add_option("--t0", s->t0, "Delay of the wavelet (s); default 1.2/f0")->check(finite_number());
  shots->callback([s]() {
    check_output_path(s->output);
    check_outputs_are_not_inputs({{"-o", s->output}}, {{"input", s->input}});
    ShotFile file = read_segy_shots(s->input);
    file.f0 = s->f0;
    file.t0 = s->t0 >= 0 ? s->t0 : default_ricker_delay(s->f0);
    file.wavelet = ricker_wavelet(file.nt, file.dt, file.f0, file.t0);
    write_shot_file(s->output, file);
    std::printf("wrote %s: %zu shots, %s, %d samples of %g s\n", s->output.c_str(),
                file.shots.size(), describe_receiver_counts(file).c_str(), file.nt, file.dt);
  });
}

} // namespace rtm::app
