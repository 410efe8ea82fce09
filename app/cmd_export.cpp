// rtm export: rtm's HDF5 files out to SEG-Y (models, images, shot gathers) or NumPy .npy
// (models, images), for interpretation packages and Python tools (docs/io.md).
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "io/array_file.h"
#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"
#include "io/path_checks.h"
#include "io/segy_file.h"
#include "io/shot_file.h"
#include "io/survey_frame.h"
#include "solvers/contracts/format.h"
#include <algorithm>
#include <cmath>
#include "io/velocity_model.h"
#include "io/volume_file.h"

namespace rtm::app {
namespace {

struct ExportArgs {
  std::string input, output, dataset = "auto";
  std::string survey; // a model file whose survey numbers and places the exported volume
};

enum class Target { segy, npy };

Target target_of(const std::string& output) {
  if (has_segy_extension(output)) return Target::segy;
  if (has_npy_extension(output)) return Target::npy;
  throw InputError("-o " + output + ": name the output .sgy/.segy (SEG-Y) or .npy (NumPy)");
}

void run_export(const ExportArgs& a) {
  const Target target = target_of(a.output);
  check_output_path(a.output);
  check_outputs_are_not_inputs({{"-o", a.output}}, {{"input", a.input}});
  std::string dataset = a.dataset;
  if (dataset == "auto") {
    if (hdf5_has_member(a.input, "shots"))
      dataset = "shots";
    else if (hdf5_has_member(a.input, "vp"))
      dataset = "vp";
    else if (hdf5_has_member(a.input, "image"))
      dataset = "image";
    else
      throw InputError(a.input + ": holds no /shots, /vp or /image; name the dataset with --dataset");
  }
  if (dataset == "shots") {
    if (target != Target::segy)
      throw InputError("-o " + a.output + ": shot gathers export to SEG-Y (.sgy) only");
    const ShotFile shots = read_shot_file(a.input);
    write_segy_shots(a.output, shots);
    std::printf("wrote %s: %zu shots, %s, %d samples of %g s\n", a.output.c_str(),
                shots.shots.size(), describe_receiver_counts(shots).c_str(), shots.nt, shots.dt);
    return;
  }
  if (dataset.rfind("offset_gathers_", 0) == 0 || dataset.rfind("angle_gathers_", 0) == 0) {
    // Common-image gathers (rtm migrate --offset-lags): their own axes, no survey frame.
    if (!a.survey.empty())
      throw InputError("--survey " + a.survey + ": gathers are exported in the model's "
                       "coordinates; leave --survey out");
    ArrayInfo info;
    const std::vector<float> values = read_array(a.input, dataset, info);
    if (info.dims.size() != 4)
      throw InputError(a.input + ": /" + dataset + " has rank " + std::to_string(info.dims.size()) +
                       "; expected 4 ([gather y][gather x][z][lag or angle])");
    if (target == Target::segy)
      write_segy_gathers(a.output, info, values, dataset);
    else
      write_npy_array(a.output, values, info.dims);
    std::printf("wrote %s: /%s, %lld x %lld positions (x, y), %lld depths, %lld %s values\n",
                a.output.c_str(), dataset.c_str(), info.dims[1], info.dims[0], info.dims[2],
                info.dims[3], info.axes[3].c_str());
    return;
  }
  VelocityModel grid;
  std::vector<float> values;
  std::string description;
  // The survey the volume lies in: its own attributes (a model imported from SEG-Y), else those
  // of --survey's model on the same grid (an image migrated on that model).
  SurveyFrame frame = read_survey_frame(a.input, dataset);
  if (dataset == "vp") {
    // Exporting runs no physics: an unusual medium goes out as it is.
    grid = read_velocity_model(a.input, "vp", VelocityCheck::any_positive);
    values = std::move(grid.vp);
    grid.vp.clear();
    description = "velocity (m/s)";
  } else {
    values = read_volume(a.input, dataset, grid);
    description = dataset;
  }
  if (!a.survey.empty()) {
    if (frame.known)
      throw InputError("--survey " + a.survey + ": " + a.input + " /" + dataset +
                       " records its own survey; leave --survey out");
    const VelocityModel model = read_model_shape(a.survey);
    frame = read_survey_frame(a.survey, "vp");
    if (!frame.known)
      throw InputError("--survey " + a.survey + ": /vp records no survey (no attribute "
                       "survey_rotation); give the model imported from SEG-Y");
    auto same = [](double u, double v) { return std::abs(u - v) <= 1e-6 * std::max(1.0, std::abs(u)); };
    if (model.nx != grid.nx || model.ny != grid.ny || !same(model.dx, grid.dx) ||
        !same(model.dy, grid.dy) || !same(model.ox, grid.ox) || !same(model.oy, grid.oy))
      throw InputError("--survey " + a.survey + ": its /vp is " + std::to_string(model.nx) + " x " +
                       std::to_string(model.ny) + " cells of " + format_number(model.dx) + " x " +
                       format_number(model.dy) + " m at (" + format_number(model.ox, 10) + ", " +
                       format_number(model.oy, 10) + ") m, " + a.input + " /" + dataset + " " +
                       std::to_string(grid.nx) + " x " + std::to_string(grid.ny) + " of " +
                       format_number(grid.dx) + " x " + format_number(grid.dy) + " at (" +
                       format_number(grid.ox, 10) + ", " + format_number(grid.oy, 10) +
                       "); the survey numbers the model's grid only");
  }
  if (target == Target::segy)
    write_segy_volume(a.output, grid, values, description, frame);
  else
    write_npy(a.output, values, ArrayShape{grid.nx, grid.ny, grid.nz});
  std::printf("wrote %s: /%s, %dx%dx%d cells (x, y, z) of %gx%gx%g m\n", a.output.c_str(),
              dataset.c_str(), grid.nx, grid.ny, grid.nz, grid.dx, grid.dy, grid.dz);
}

} // namespace

void register_export(CLI::App& rtm) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = rtm.add_subcommand(
      "export", "Write a model, image or shot file to SEG-Y (.sgy) or NumPy (.npy)");
  cmd->add_option("input", a->input, "rtm HDF5 file (model, image or shots)")->required();
  cmd->add_option("-o,--output", a->output, "Output file: .sgy/.segy or .npy")->required();
  cmd->add_option("--dataset", a->dataset,
                  "What to export: vp, image, illumination, image_raw, shots, the gathers of "
                  "`rtm migrate --offset-lags` (offset_gathers_x, angle_gathers_x, ... : one trace "
                  "per position and lag or angle), or auto (shots, else vp, else image)")
      ->capture_default_str();
  cmd->add_option("--survey", a->survey,
                  "SEG-Y: number and place a volume's traces as this model's survey (a model "
                  "imported from SEG-Y, on the same grid: e.g. the model an image was migrated on)");
  cmd->callback([a]() { run_export(*a); });
}

} // namespace rtm::app
