#include "app/migration_options.h"

#include <exception>
#include <string>

#include "app/options.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm::app {
namespace {

// --imaging-interval: auto (0) or K >= 1.
int parse_imaging_interval(const std::string& value) {
  if (value == "auto") return 0;
  std::size_t used = 0;
  int k = 0;
  try {
    k = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || k < 1)
    throw InputError("--imaging-interval: expected auto or a whole number of steps >= 1, got '" +
                     value + "'");
  return k;
}

void check_migration_model_choice(const std::string& model_path,
                                  const std::string& migration_model_path, double smooth) {
  if (model_path.empty() == migration_model_path.empty())
    throw InputError("give exactly one of --model (a model to smooth by --smooth) and "
                     "--migration-model (used as is)");
  if (!migration_model_path.empty() && smooth != 0)
    throw InputError("--smooth applies to --model; --migration-model is used as it is");
}

// Its validator keeps it at most 100.
void check_clip_percentile(double value) {
  if (!(value > 0))
    throw InputError("--clip-percentile " + format_number(value) +
                     ": must be above 0 (and at most 100)");
}

} // namespace

void add_migration_options(CLI::App* cmd, MigrationOptions& o, MigrationParams& params,
                           const MigrationOptionHelp& help,
                           const std::function<void(OwnOptionsPlace)>& add_own) {
  cmd->add_option("-s,--shots", o.shots_path, "Shot gathers (HDF5, from `rtm model`)")->required();
  auto* model = cmd->add_option("-m,--model", o.model_path,
                                "Velocity model to smooth into the migration model (HDF5 /vp)");
  auto* migration = cmd->add_option("--migration-model", o.migration_model_path,
                                    "Migration velocity model, used as is (HDF5 /vp)");
  model->excludes(migration);
  cmd->add_option("--smooth", o.smooth, help.smooth)->capture_default_str();
  add_own(OwnOptionsPlace::after_smooth);

  cmd->add_option("--reconstruction", o.reconstruction, help.reconstruction)
      ->check(CLI::IsMember({"auto", "boundary", "snapshots"}))
      ->capture_default_str();
  cmd->add_option("--snapshot-precision", o.snapshot_precision, help.snapshot_precision)
      ->check(CLI::IsMember({"float32", "int16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--snapshot-memory", o.snapshot_memory, help.snapshot_memory)
      ->check(CLI::IsMember({"auto", "device", "host"}))
      ->capture_default_str();
  cmd->add_option("--imaging-interval", o.imaging_interval, help.imaging_interval)
      ->capture_default_str();
  add_own(OwnOptionsPlace::after_imaging_interval);

  cmd->add_option("--backward-step", o.backward_step, help.backward_step)
      ->check(CLI::IsMember({"fused", "separate"}))
      ->capture_default_str();
  cmd->add_option("--ring-precision", o.ring_precision, help.ring_precision)
      ->check(CLI::IsMember({"float32", "int16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--direct-wave", o.direct_wave, help.direct_wave)
      ->check(CLI::IsMember({"mute", "none"}))
      ->capture_default_str();
  add_own(OwnOptionsPlace::after_direct_wave);

  cmd->add_option("--direct-wave-velocity", params.direct_wave_velocity,
                  "Velocity (m/s) of the direct-wave mute; default: the migration velocity at each source");
  add_own(OwnOptionsPlace::after_direct_wave_velocity);

  cmd->add_option("-o,--output", o.output, help.output)->required();
  add_own(OwnOptionsPlace::after_output);

  cmd->add_option("--png-dir", o.png_dir, help.png_dir);
  cmd->add_option("--clip-percentile", o.clip_percentile, help.clip_percentile)
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--colors", o.colors, help.colors)
      ->check(CLI::IsMember({"seismic", "grey"}))
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, help.resume);
  add_own(OwnOptionsPlace::after_resume);

  add_progress_option(cmd, o.progress_s);
  add_boundary_options(cmd, params.boundary);
  add_point_interpolation_option(cmd, params.point_interpolation);
  add_backend_options(cmd, params.backend);
  add_own(OwnOptionsPlace::after_backend);

  add_parallel_options(cmd, o.parallel);
  add_velocity_check_flag(cmd, o.allow_unusual_velocities);
  cmd->add_flag("--allow-other-grid", o.allow_other_grid, help.allow_other_grid);
}

void apply_migration_options(const MigrationOptions& o, MigrationParams& p) {
  check_migration_model_choice(o.model_path, o.migration_model_path, o.smooth);
  check_clip_percentile(o.clip_percentile);
  p.reconstruction = parse_reconstruction(o.reconstruction);
  p.snapshot_precision = parse_ring_precision(o.snapshot_precision, "--snapshot-precision");
  p.snapshot_memory = parse_snapshot_memory(o.snapshot_memory);
  p.imaging_interval = parse_imaging_interval(o.imaging_interval);
  p.fused_backward = o.backward_step == "fused";
  p.ring_precision = parse_ring_precision(o.ring_precision);
  p.direct_wave = parse_direct_wave_removal(o.direct_wave);
}

} // namespace rtm::app
