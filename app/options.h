// Options several subcommands share, so they are spelled and documented the same everywhere.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/path_checks.h"
#include "io/result_table.h"
#include "io/velocity_model.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/shot_parallel.h"

namespace rtm::app {

// --backend, --variant, --compressible, --l2-persist
void add_backend_options(CLI::App* cmd, BackendOptions& options);
// --ranks-per-shot, --allow-gpu-sharing: how the MPI ranks of a run share shots and GPUs
// (docs/parallel.md); options of the decomposition within a shot group belong here too.
void add_parallel_options(CLI::App* cmd, ParallelOptions& options);
// --boundary-width, --absorber, --free-surface
void add_boundary_options(CLI::App* cmd, BoundaryConfig& boundary);
// --point-interpolation sinc|trilinear: how sources and receivers between nodes are spread
void add_point_interpolation_option(CLI::App* cmd, PointInterpolation& kind);
// --f0, --t0, --dt, --record-time, --time-dispersion-transform
void add_time_options(CLI::App* cmd, ModelingParams& params);
// --time-dispersion-transform on|off (default on): docs/physics.md, "Time dispersion"
void add_time_dispersion_option(CLI::App* cmd, bool& enabled);
// --progress S: seconds between progress updates inside a shot (solvers/drivers/progress.h)
void add_progress_option(CLI::App* cmd, double& interval_s);
// --csv / --json (text by default)
struct FormatFlags {
  bool csv = false, json = false;
  OutputFormat format() const {
    return json ? OutputFormat::json : csv ? OutputFormat::csv : OutputFormat::text;
  }
};
void add_format_flags(CLI::App* cmd, FormatFlags& flags);

// --allow-unusual-velocities: accept a model whose velocities lie outside the plausible range for
// seismic media (io/velocity_model.h), on purpose. Every subcommand that reads a model has it.
void add_velocity_check_flag(CLI::App* cmd, bool& allow_unusual);
inline VelocityCheck velocity_check(bool allow_unusual) {
  return allow_unusual ? VelocityCheck::any_positive : VelocityCheck::plausible;
}

// The config file given to rtm (--config, before or after the subcommand) as a named input of
// `cmd`'s run, so that no output may overwrite it; an empty path when none was given.
NamedPath config_input(const CLI::App* cmd);

// Value checks that, unlike CLI::PositiveNumber, also refuse "nan" and "inf".
const CLI::Validator& positive_finite();     // a finite number > 0
const CLI::Validator& non_negative_finite(); // a finite number >= 0
const CLI::Validator& finite_number();       // any finite number
const CLI::Validator& positive_count();      // a whole number >= 1 (and <= INT_MAX)
const CLI::Validator& non_negative_count();  // a whole number >= 0 (and <= INT_MAX)

// "NX,NY,NZ" style options: a list of exactly three positive integers.
CLI::Option* add_shape_option(CLI::App* cmd, const std::string& name, std::vector<int>& shape,
                              const std::string& description);

} // namespace rtm::app
