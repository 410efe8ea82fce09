// The options rtm migrate and rtm lsrtm share (the shots, the migration model, the source field's
// reconstruction, the direct wave, the output and its figures, resuming, the run's set-up): one
// place that spells them, checks their values and gives their defaults, so the two commands cannot
// drift apart. Each command still words their help itself (lsrtm's refers to migrate's) and adds
// its own options among them, where its --help lists them.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "solvers/drivers/migration.h"
#include "solvers/drivers/shot_parallel.h"

namespace rtm::app {

// The shared options' values as given; a command's own arguments derive from this.
struct MigrationOptions {
  std::string shots_path;
  std::string model_path;           // --model: the true model, smoothed by --smooth
  std::string migration_model_path; // --migration-model: used as is
  double smooth = 0;
  std::string reconstruction = "auto";
  std::string snapshot_precision = "int16";
  std::string snapshot_memory = "auto";
  std::string imaging_interval = "auto";
  std::string backward_step = "fused";
  std::string ring_precision = "float32";
  std::string direct_wave = "mute";
  std::string output;
  std::string png_dir;
  double clip_percentile = 99;
  std::string colors = "seismic";
  bool resume = false;
  bool allow_unusual_velocities = false;
  bool allow_other_grid = false;
  double progress_s = 3; // seconds between progress updates inside a shot; 0: none
  ParallelOptions parallel;
};

// The help of the shared options whose wording is the command's own (the others, --shots,
// --model, --migration-model and --direct-wave-velocity, read the same in both).
struct MigrationOptionHelp {
  std::string smooth, reconstruction, snapshot_precision, snapshot_memory, imaging_interval,
      backward_step, ring_precision, direct_wave, output, png_dir, clip_percentile, colors, resume,
      allow_other_grid;
};

// The places among the shared options where a command adds its own, so that --help lists each
// command's options in the order of their meaning (the inputs, the imaging, the output, the run).
enum class OwnOptionsPlace {
  after_smooth,                // after -s, -m, --migration-model, --smooth
  after_imaging_interval,      // after --reconstruction ... --imaging-interval
  after_direct_wave,           // after --backward-step, --ring-precision, --direct-wave
  after_direct_wave_velocity,  // after --direct-wave-velocity
  after_output,                // after -o
  after_resume,                // after --png-dir, --clip-percentile, --colors, --resume
  after_backend,               // after --progress, the boundary, interpolation and backend options
};

// Adds the shared options to `cmd`, bound to `options` and to `params` (--direct-wave-velocity,
// the boundary, the point interpolation, the backend), calling `add_own(place)` at each place in
// OwnOptionsPlace's order; --allow-other-grid comes last.
void add_migration_options(CLI::App* cmd, MigrationOptions& options, MigrationParams& params,
                           const MigrationOptionHelp& help,
                           const std::function<void(OwnOptionsPlace)>& add_own);

// The shared options into `params` (the reconstruction, its precisions and memory, the imaging
// interval, the backward step, the direct wave), after the checks that need more than one value
// (exactly one of --model and --migration-model; --smooth only with --model; --clip-percentile
// above 0); InputError naming the option for a bad value.
void apply_migration_options(const MigrationOptions& options, MigrationParams& params);

} // namespace rtm::app
