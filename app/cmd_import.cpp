// rtm import: velocity models from SEG-Y, NumPy or raw float32, and shot gathers from SEG-Y,
// into rtm's HDF5 files (docs/io.md). Every model passes the same checks as an HDF5 model.
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "app/options.h"
#include "io/array_file.h"
#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/path_checks.h"
#include "io/segy_file.h"
#include "io/shot_file.h"
#include "io/survey_frame.h"
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
  SegyHeaderBytes bytes;             // SEG-Y: where the headers keep lines and coordinates
  bool big_endian = false;
  bool allow_unusual = false;        // --allow-unusual-velocities
};

struct ImportShotsArgs {
  std::string input, output;
  std::string frame;                 // a model file whose survey frame the positions go into
  double f0 = 0, t0 = -1, dt = 0;
  SegyHeaderBytes bytes;
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

VelocityModel import_model(ImportModelArgs a, SurveyFrame* frame) {
  a.format = detect_format(a);
  const double scale = to_metres_per_second(a.units);
  VelocityModel model;
  if (a.format == "segy") {
    SegyVolumeReadOptions options;
    options.dz = a.dz;
    options.bytes = a.bytes;
    if (a.spacing.size() == 1) options.dx = options.dy = a.spacing[0];
    if (a.spacing.size() == 3) {
      options.dx = a.spacing[0];
      options.dy = a.spacing[1];
      if (a.dz <= 0) options.dz = a.spacing[2];
    }
    SegyVolume volume = read_segy_survey_volume(a.input, options);
    // A file that places its traces has put the model in its survey; moving it would put it off
    // the shots of that survey (the same file's coordinates place them).
    if (!a.origin.empty() && volume.frame.georeferenced)
      throw InputError("--origin: " + a.input + " places its traces by their CDP coordinates (origin (" +
                       format_number(volume.grid.ox, 10) + ", " + format_number(volume.grid.oy, 10) +
                       ") m, depth of the first sample " + format_number(volume.grid.oz, 10) +
                       " m from trace byte 109); moving the model would put it off the shots of "
                       "its survey. Leave --origin out (it is for files without coordinates)");
    if (!a.origin.empty()) {
      if (a.origin.size() != 3) throw InputError("--origin: give three values OX,OY,OZ (metres)");
      volume.grid.ox = a.origin[0];
      volume.grid.oy = a.origin[1];
      volume.grid.oz = a.origin[2];
    }
    model = std::move(volume.grid);
    *frame = std::move(volume.frame);
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
      throw InputError(a.input + ": value " + format_number(model.vp[c]) + " at (z,y,x) = (" +
                       std::to_string(c / (size_t(model.nx) * model.ny)) + "," +
                       std::to_string((c / model.nx) % model.ny) + "," + std::to_string(c % model.nx) +
                       "); expected every velocity > 0" +
                       (a.format == "segy"
                            ? std::string(" (does the file hold velocities, or seismic amplitudes?)")
                            : std::string()));
    model.vp[c] = float(model.vp[c] * scale);
  }
  // The same plausibility check as an HDF5 model (io/velocity_model.h): a units slip refused here.
  if (!a.allow_unusual)
    check_plausible_velocities(model, a.input + " (read as " + a.units + ")",
                               "give --units km/s", "the values look 1000 times too large for --units " + a.units);
  return model;
}

// A trace-header byte position: the first byte of a 4-byte field (checked when parsed).
void add_segy_byte_option(CLI::App* app, const std::string& name, int& byte, const std::string& help) {
  app->add_option(name, byte, help)
      ->capture_default_str()
      ->check(CLI::Validator(
          [name](std::string& value) {
            try {
              check_header_byte(std::stoi(value), name);
            } catch (const InputError& e) {
              return std::string(e.what());
            } catch (const std::exception&) {
              return name + " " + value + ": expected a byte position (a whole number)";
            }
            return std::string();
          },
          "BYTE"));
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
  add_segy_byte_option(model, "--iline-byte", m->bytes.inline_number,
                       "SEG-Y: trace header byte of the inline number (segyio's iline=)");
  add_segy_byte_option(model, "--xline-byte", m->bytes.crossline_number,
                       "SEG-Y: trace header byte of the crossline number (segyio's xline=)");
  add_segy_byte_option(model, "--cdp-x-byte", m->bytes.cdp_x, "SEG-Y: trace header byte of CDP_X");
  add_segy_byte_option(model, "--cdp-y-byte", m->bytes.cdp_y, "SEG-Y: trace header byte of CDP_Y");
  model->add_flag("--big-endian", m->big_endian, "raw: the file is big-endian (default little)");
  model->add_flag("--allow-unusual-velocities", m->allow_unusual,
                  "Accept velocities outside 300 to 10000 m/s (an unusual medium on purpose)");
  model->callback([m]() {
    check_output_path(m->output);
    check_outputs_are_not_inputs({{"-o", m->output}, {"-o (its sidecar)", xdmf_path_for(m->output)}},
                                 {{"input", m->input}});
    SurveyFrame frame;
    const VelocityModel v = import_model(*m, &frame);
    write_velocity_model(m->output, v, {}, frame);
    std::printf("wrote %s: %dx%dx%d cells (x, y, z) of %gx%gx%g m, origin (%g, %g, %g) m, vp %g "
                "to %g m/s\n",
                m->output.c_str(), v.nx, v.ny, v.nz, v.dx, v.dy, v.dz, v.ox, v.oy, v.oz,
                double(v.vmin()), double(v.vmax()));
    if (frame.known)
      std::printf("survey: inlines %lld to %lld along %c, crosslines %lld to %lld along %c%s\n",
                  frame.inline_first, frame.inline_at(v.nx - 1, v.ny - 1), frame.inline_axis,
                  frame.crossline_first, frame.crossline_at(v.nx - 1, v.ny - 1),
                  frame.inline_axis == 'x' ? 'y' : 'x',
                  frame.rotation_deg != 0 ? (", turned " + format_number(frame.rotation_deg, 10) +
                                             " degrees from CDP_X (import its shots with --frame " +
                                             m->output + ")").c_str()
                                          : "");
    if (!frame.note.empty()) std::printf("note: %s\n", frame.note.c_str());
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
  shots->add_option("--dt", s->dt,
                    "Time step (s) for a file whose sample-interval fields hold none")
      ->check(positive_finite());
  shots->add_option("--frame", s->frame,
                    "A model imported from SEG-Y: place the shots in its survey frame (needed when "
                    "that survey is turned from CDP_X/CDP_Y; `rtm import model` says so)");
  add_segy_byte_option(shots, "--record-byte", s->bytes.field_record,
                       "Trace header byte of the number that groups traces into shots (field record)");
  add_segy_byte_option(shots, "--source-x-byte", s->bytes.source_x, "Trace header byte of source x");
  add_segy_byte_option(shots, "--source-y-byte", s->bytes.source_y, "Trace header byte of source y");
  add_segy_byte_option(shots, "--group-x-byte", s->bytes.group_x, "Trace header byte of receiver x");
  add_segy_byte_option(shots, "--group-y-byte", s->bytes.group_y, "Trace header byte of receiver y");
  shots->callback([s]() {
    check_output_path(s->output);
    check_outputs_are_not_inputs({{"-o", s->output}}, {{"input", s->input}});
    SegyShotReadOptions options;
    options.bytes = s->bytes;
    options.dt = s->dt;
    if (!s->frame.empty()) {
      options.frame = read_survey_frame(s->frame, "vp");
      if (!options.frame.known)
        throw InputError("--frame " + s->frame + ": /vp records no survey (no attribute "
                         "survey_rotation); give a model imported from SEG-Y");
    }
    ShotFile file = read_segy_shots(s->input, options);
    file.f0 = s->f0;
    file.t0 = s->t0 >= 0 ? s->t0 : default_ricker_delay(s->f0);
    file.wavelet = ricker_wavelet(file.nt, file.dt, file.f0, file.t0);
    write_shot_file(s->output, file);
    std::printf("wrote %s: %zu shots, %s, %d samples of %g s\n", s->output.c_str(),
                file.shots.size(), describe_receiver_counts(file).c_str(), file.nt, file.dt);
    if (file.survey_rotation != 0)
      std::printf("positions in the survey frame of %s (turned %g degrees from CDP_X)\n",
                  s->frame.c_str(), file.survey_rotation);
  });
}

} // namespace rtm::app
