// Options several subcommands share, so they are spelled and documented the same everywhere.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/result_table.h"
#include "solvers/backend.h"
#include "solvers/modeling.h"
#include "solvers/shot_parallel.h"

namespace rtm::app {

// --backend, --variant, --compressible, --l2-persist
void add_backend_options(CLI::App* cmd, BackendOptions& options);
// --ranks-per-shot, --allow-gpu-sharing: how the MPI ranks of a run share shots and GPUs
// (docs/parallel.md); options of the decomposition within a shot group belong here too.
void add_parallel_options(CLI::App* cmd, ParallelOptions& options);
// --boundary-width, --absorber, --free-surface
void add_boundary_options(CLI::App* cmd, BoundaryConfig& boundary);
// --f0, --t0, --dt, --record-time
void add_time_options(CLI::App* cmd, ModelingParams& params);
// --csv / --json (text by default)
struct FormatFlags {
  bool csv = false, json = false;
  OutputFormat format() const {
    return json ? OutputFormat::json : csv ? OutputFormat::csv : OutputFormat::text;
  }
};
void add_format_flags(CLI::App* cmd, FormatFlags& flags);

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
