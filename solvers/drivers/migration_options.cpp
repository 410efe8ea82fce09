// The migration options' names and the inputs and combinations a migration refuses before any
// work (solvers/drivers/migration.h).
#include "solvers/drivers/migration_run.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/numerics.h"

namespace rtm {

Reconstruction parse_reconstruction(const std::string& name) {
  if (name == "auto") return Reconstruction::automatic;
  if (name == "boundary") return Reconstruction::boundary;
  if (name == "snapshots") return Reconstruction::snapshots;
  throw InputError("--reconstruction: expected auto, boundary or snapshots, got '" + name + "'");
}

SnapshotMemory parse_snapshot_memory(const std::string& name) {
  if (name == "auto") return SnapshotMemory::automatic;
  if (name == "device") return SnapshotMemory::device;
  if (name == "host") return SnapshotMemory::host;
  throw InputError("--snapshot-memory: expected auto, device or host, got '" + name + "'");
}

const char* reconstruction_name(Reconstruction r) {
  return r == Reconstruction::automatic ? "auto" : r == Reconstruction::boundary ? "boundary" : "snapshots";
}

RingPrecision parse_ring_precision(const std::string& name, const std::string& option) {
  if (name == "float32") return RingPrecision::full;
  if (name == "float16") return RingPrecision::half16;
  if (name == "int16") return RingPrecision::fixed16;
  throw InputError(option + ": expected float32, float16 or int16, got '" + name + "'");
}

const char* ring_precision_name(RingPrecision p) {
  return p == RingPrecision::full ? "float32" : p == RingPrecision::half16 ? "float16" : "int16";
}

DirectWaveRemoval parse_direct_wave_removal(const std::string& name) {
  if (name == "none") return DirectWaveRemoval::none;
  if (name == "mute") return DirectWaveRemoval::mute;
  throw InputError("--direct-wave: expected mute or none, got '" + name + "'");
}

ImagingCondition parse_imaging_condition(const std::string& name) {
  try {
    return imaging_condition_named(name).id;
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--imaging-condition: ") + e.what());
  }
}

void check_imaging_condition(ImagingCondition condition, Physics physics, int ranks_per_shot) {
  const ImagingConditionInfo& row = imaging_condition_info(condition);
  if (physics == Physics::tti && !row.supports_tti)
    throw InputError(std::string("--imaging-condition ") + row.name + " is not offered with "
                     "--physics tti: " + row.why_no_tti + "; use --imaging-condition cross");
  if (ranks_per_shot > 1 && !row.supports_slab_split)
    throw InputError(std::string("--imaging-condition ") + row.name + " is not offered with "
                     "--ranks-per-shot " + std::to_string(ranks_per_shot) + " (a grid split "
                     "into z-slabs): " + row.why_no_slab_split + "; use --ranks-per-shot 1 "
                     "(shots in parallel) or --imaging-condition cross");
}

void check_offset_gathers(const MigrationParams& params, Physics physics, int ranks_per_shot,
                          bool resume) {
  if (!params.offset_gathers.enabled()) return;
  const std::string option = "--offset-lags " + std::to_string(params.offset_gathers.lags);
  const PhysicsInfo& row = physics_info(physics);
  if (!row.supports_offset_gathers)
    throw InputError(option + " is not offered with --physics " + row.name + " (" +
                     row.why_no_offset_gathers + "); leave --offset-lags out");
  if (ranks_per_shot > 1)
    throw InputError(option + " is not offered with --ranks-per-shot " +
                     std::to_string(ranks_per_shot) + " (a grid split into z-slabs: a lag reaches "
                     "across the slabs); use --ranks-per-shot 1 (shots in parallel)");
  if (resume)
    throw InputError(option + " cannot be used with --resume: the checkpoints hold the image "
                              "and the illumination, not the gathers, so the gathers would miss "
                              "the shots migrated before the stop; resume without --offset-lags, "
                              "or run again from the first shot");
}

namespace migration_steps {

// The Laplacian post-filter: asked for, and part of the imaging condition's row.
bool applies_laplacian_filter(const MigrationParams& params) {
  return params.laplacian_filter && imaging_condition_info(params.imaging_condition).laplacian_filter;
}

// Inputs a migration refuses before any work (InputError naming the value).
void check_migration_inputs(const VelocityModel& model, double vmax, const ShotFile& shots,
                            const MigrationParams& params) {
  if (shots.shots.empty()) throw InputError("migration: the shot file holds no shots");
  for (const ShotGather& gather : shots.shots)
    if (shots.receivers_of(gather).empty())
      throw InputError("migration: shot " + std::to_string(gather.id) + " has no receivers");
  if (params.born_perturbation) { // least-squares RTM's passes (solvers/drivers/lsrtm.h)
    if (params.born_perturbation->size() != size_t(model.cells()))
      throw std::invalid_argument("migration: the Born perturbation has " +
                                  std::to_string(params.born_perturbation->size()) +
                                  " values, the model " + std::to_string(model.cells()));
    if (params.data_phase_filter != DataPhaseFilter::none)
      throw std::invalid_argument("migration: a pass of Born data takes no data phase filter");
  }
  if (!(params.illumination_eps > 0))
    throw InputError("--illumination-eps must be positive, got " +
                     std::to_string(params.illumination_eps));
  if (!(params.image_mute_depth >= 0) || !std::isfinite(params.image_mute_depth))
    throw InputError("--image-mute-depth must be a depth of at least 0 m, got " +
                     std::to_string(params.image_mute_depth));
  if (!(params.image_mute_taper >= 0) || !std::isfinite(params.image_mute_taper))
    throw InputError("--image-mute-taper must be at least 0 m, got " +
                     std::to_string(params.image_mute_taper));
  // The data fix dt: migrating with it needs it stable in the migration model.
  // Said here in the data's terms: `rtm migrate` has no --dt to blame.
  const double dt_limit = cfl_dt_limit(vmax, model.dx, model.dy, model.dz);
  if (!(shots.dt <= dt_limit))
    throw InputError("the shot file's dt = " + format_number(shots.dt) +
                     " s is above the stability limit of the migration model, " +
                     format_number(dt_limit) + " s (v_max " + format_number(vmax) +
                     " m/s, spacing (" + format_number(model.dz) + ", " + format_number(model.dy) +
                     ", " + format_number(model.dx) +
                     ") m): migrate in a slower or coarser model, or model the shots with a "
                     "smaller --dt");
}

} // namespace migration_steps

} // namespace rtm
