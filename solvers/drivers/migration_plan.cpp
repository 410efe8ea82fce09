// A migration's plan and what the run says it will do: the imaging interval, the memory of the
// reconstruction strategies and of the whole run, the receivers, the data phase filter, the run's
// description and provenance, the shots as the shot loop sees them.
#include "solvers/drivers/migration_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/provenance.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/smoothing.h"
#include "solvers/drivers/tti_setup.h"

namespace rtm {

using namespace migration_steps; // the run and its steps (solvers/drivers/migration_run.h)

int snapshot_interval(double dt, double f0) {
  const double f_max = kRickerFmaxOverF0 * f0;
  return std::max(1, int(std::floor(1.0 / (2.0 * f_max * dt))));
}

int automatic_imaging_interval(double dt, double f0) {
  const double f_max = kRickerFmaxOverF0 * f0;
  return std::max(1, int(std::floor(kImagingIntervalSafety / (2.0 * f_max * dt))));
}

int imaging_interval(const MigrationParams& params, double dt, double f0) {
  if (params.imaging_interval < 0)
    throw InputError("--imaging-interval: expected a positive number of steps (or auto), got " +
                     std::to_string(params.imaging_interval));
  return params.imaging_interval > 0 ? params.imaging_interval : automatic_imaging_interval(dt, f0);
}

ReconstructionMemory reconstruction_memory(const SimulationGrid& sim, int nt, int interval) {
  ReconstructionMemory m;
  const Box box = model_box(sim);
  // TTI: both fields, 2 kHalo cells thick (solvers/contracts/tti_ring.h).
  m.ring_cells = saved_ring_cells(sim.physics, box);
  m.ring_steps = std::max(1, nt - 1);
  m.box_cells = box.cells();
  m.box_row = std::max(box.nx(), 1);
  m.snapshot_interval = std::max(interval, 1);
  m.snapshot_count = (nt - 1) / m.snapshot_interval + 1; // steps 0, k, 2k, ... <= nt - 1
  return m;
}

namespace {

std::string megabytes(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
  return text;
}

// The migration velocity at a position (nearest cell), for the direct-wave mute.
double velocity_at(const VelocityModel& m, const Position& zyx) {
  return m.vp[size_t(m.nearest_cell(zyx))];
}

} // namespace

namespace migration_steps {

// What a migration allocates, for the refusal of a run that cannot fit in the free memory of the
// GPU it will use or in the host's available memory (shared by the ranks on this node), before
// anything is allocated, and for the choice of the source field's storage. A group of
// several ranks per shot splits the grid along z (kernels/mpi/decomposed_propagator.h): each rank
// is estimated for its slab (the largest), its model part read with the smoothing's reach.
// `checkpoints`: the loop writes a checkpoint every few shots (their pinned staging on the GPU).
// One rank per shot holds the whole migration model twice beside the run (the command's and the
// grid's copy, SimulationGrid::model); a group's ranks hold their planes. Every rank holds every
// trace of the shot file (`shots`, or its geometry alone: the count is the same).
RunMemoryPlan migration_memory_plan(const SimulationGrid& sim, const ShotFile& shots,
                                    const MigrationParams& params, const ParallelContext& parallel,
                                    int smoothing_reach, bool checkpoints, int imaging_interval) {
  RunMemoryPlan plan;
  plan.ranks_per_shot = parallel.ranks_per_shot();
  plan.smoothing_reach = smoothing_reach;
  plan.model_copies = parallel.ranks_per_shot() > 1 ? 0 : 2;
  for (const ShotGather& gather : shots.shots)
    plan.input_trace_values += uint64_t(shots.receivers_of(gather).size()) * uint64_t(std::max(shots.nt, 0));
  plan.layout = sim.layout;
  plan.box = model_box(sim);
  plan.cpml = sim.boundary.absorber == Absorber::cpml && sim.boundary.width > 0;
  plan.physics = sim.physics;
  plan.nt = shots.nt;
  plan.receivers = int(shots.max_receivers());
  plan.shots = int(shots.shots.size());
  plan.migration = true;
  plan.storage = SourceWavefieldStorage::boundary_saving;
  plan.snapshot_interval = imaging_interval;
  plan.snapshot_precision = params.snapshot_precision;
  plan.ring_precision = params.ring_precision;
  plan.checkpoint_staging = checkpoints;
  plan.keep_sums = params.keep_sums;
  plan.least_squares_vectors = params.least_squares_vectors;
  if (params.offset_gathers.enabled()) {
    const OffsetGatherLayout gathers = offset_gather_layout(plan.box, params.offset_gathers);
    plan.offset_gather_values = gathers.values();
    if (params.make_angle_gathers)
      plan.angle_gather_values = gathers.values() / gathers.nlag * params.angle_gathers.angles;
  }
  return plan;
}

// The command a memory refusal names.
const char* run_name(const MigrationParams& params) {
  return params.least_squares_vectors > 0 ? "rtm lsrtm" : "rtm migrate";
}

// Wave-step sweeps of the grid per shot: the source forward, the receiver backwards, and with
// boundary saving the source backwards again.
double sweeps_per_shot(Reconstruction reconstruction) {
  return reconstruction == Reconstruction::boundary ? 3 : 2;
}

// The migration velocity at a position (nearest cell). With the model split over the group, the rank
// holding that cell's plane gives it (velocities are positive, the others 0): collective.
double migration_velocity_at(const MigrationRun& run, const Position& zyx) {
  if (!run.part) return velocity_at(run.model, zyx);
  const VelocityModel& m = run.part->planes;
  const int k = std::clamp(int(std::lround((zyx[0] - run.model.oz) / m.dz)), 0, run.model.nz - 1);
  double here = 0, v = 0;
  if (k >= run.part->z_first && k < run.part->z_first + m.nz) {
    Position local = zyx;
    local[0] = m.oz + (k - run.part->z_first) * m.dz; // that plane, in the part's coordinates
    here = velocity_at(m, local);
  }
  check_mpi(MPI_Allreduce(&here, &v, 1, MPI_DOUBLE, MPI_MAX, run.parallel.group_comm()),
            "MPI_Allreduce (velocity at a point)");
  return v;
}

// The compute grid at the data's dt, the wavelet's f0 checked, the dispersion warning.
SimulationGrid migration_grid(const VelocityModel& model, const ModelExtremes& extremes,
                              Physics physics, const ShotFile& shots, const MigrationParams& params,
                              std::ostream& info) {
  BoundaryConfig boundary = params.boundary;
  if (boundary.frequency == 0 && shots.f0 > 0 && std::isfinite(shots.f0))
    boundary.frequency = shots.f0; // the C-PML's alpha
  SimulationGrid sim = make_simulation_grid(model, extremes.vmax, boundary, shots.dt);
  sim.physics = physics; // a slab run's model is the shape alone
  if (!(shots.f0 > 0))
    throw InputError("the shot file's /wavelet has no f0 attribute (peak frequency): migration "
                     "needs it for the snapshot interval and the direct-wave mute");
  const std::string warning = dispersion_warning(extremes.vmin, shots.f0, model.dx, model.dy, model.dz);
  if (!warning.empty()) info << "rtm: " << warning << "\n";
  return sim;
}

// A shot's own receivers placed on the grid (InputError naming the shot and the receiver when
// one lies outside the model); none for a shot of the shared spread.
std::vector<PointStencil> locate_shot_receivers(const MigrationRun& run, const ShotGather& gather) {
  return locate_points(run.sim, gather.receivers, "shot " + std::to_string(gather.id) + ": receiver",
                       run.params.point_interpolation);
}

// The imaging interval, the memory of both reconstruction strategies (said before the run), and
// the receivers.
void plan_reconstruction_and_receivers(MigrationRun& run) {
  const MigrationParams& params = run.params;
  run.box = model_box(run.sim);
  run.nt = run.shots.nt;
  run.f0 = run.shots.f0;
  run.imaging_interval = imaging_interval(params, run.sim.dt, run.f0);
  run.memory = reconstruction_memory(run.sim, run.nt, run.imaging_interval);
  const ReconstructionMemory& mem = run.memory;
  run.info << "rtm: source-wavefield reconstruction memory per shot: boundary saving "
           << mem.ring_cells << " ring cells x " << mem.ring_steps << " steps x 4 B = "
           << megabytes(mem.boundary_bytes()) << " ("
           << megabytes(mem.boundary_half_bytes())
           << " as a 16-bit ring, --ring-precision int16|float16); snapshots " << mem.box_cells
           << " cells x " << mem.snapshot_count << " snapshots (every " << mem.snapshot_interval
           << " steps) = " << megabytes(mem.snapshot_bytes(params.snapshot_precision)) << " in "
           << ring_precision_name(params.snapshot_precision) << " (--snapshot-precision)\n";
  run.info << "rtm: imaging every " << run.imaging_interval << " step(s) of the backward sweep, "
           << "weight " << run.imaging_interval << " (";
  if (params.imaging_interval > 0)
    run.info << "--imaging-interval";
  else
    run.info << "automatic: " << format_number(kImagingIntervalSafety) << " x the Nyquist interval "
             << "of f_max = 2.5 f0 = " << format_number(kRickerFmaxOverF0 * run.f0) << " Hz";
  run.info << "), over the model's " << run.box.cells() << " cells\n";

  if (run.shots.uses_shared_receivers())
    run.receivers = locate_points(run.sim, run.shots.receivers, "receiver", params.point_interpolation);
  // Per-shot spreads are placed with their shot; checked here, so that a receiver outside the
  // model is refused before any shot runs, naming the shot and the receiver.
  for (const ShotGather& gather : run.shots.shots)
    locate_shot_receivers(run, gather);
  // TTI: migration injects the sources and, backwards, the receivers: the shear taper around them
  // all (solvers/drivers/shear_taper.h), before make_wavefields makes the coefficients.
  if (physics_info(run.sim.physics).shear_taper) {
    std::vector<Position> injected = run.shots.receivers;
    for (const ShotGather& gather : run.shots.shots) {
      injected.push_back(gather.source);
      injected.insert(injected.end(), gather.receivers.begin(), gather.receivers.end());
    }
    set_shear_taper(run.sim, run.part, run.parallel.group_comm(), run.params.shear_taper,
                    std::move(injected), run.info);
  }
}

// The data's phase correction (docs/rtm.md, 6a): one filter for every shot. Unless the user named
// one, its order comes from the directions the acquisition samples densely, receivers and sources
// together: the shared spread, or with per-shot spreads the largest of them (a moving spread
// keeps its shape, so each shot's would give the same choice), and the shots' sources.
PhaseChoice choose_migration_phase_filter(const MigrationRun& run) {
  const MigrationParams& params = run.params;
  const ShotFile& shots = run.shots;
  const std::vector<Position>* receivers = &shots.receivers;
  if (shots.has_per_shot_receivers())
    for (const ShotGather& gather : shots.shots)
      if (receivers->empty() || shots.receivers_of(gather).size() > receivers->size())
        receivers = &shots.receivers_of(gather);
  double v_receivers = INFINITY;
  for (const Position& r : *receivers) v_receivers = std::min(v_receivers, migration_velocity_at(run, r));
  std::vector<Position> sources;
  std::vector<const std::vector<Position>*> spreads;
  for (const ShotGather& gather : shots.shots) {
    sources.push_back(gather.source);
    spreads.push_back(&shots.receivers_of(gather));
  }
  const ReceiverSpread spread = describe_receiver_spread(*receivers, v_receivers, run.f0);
  ReceiverSpread midpoint_spread;
  const int dims = acquisition_dense_dims(acquisition_midpoints(sources, spreads), v_receivers,
                                          run.f0, &midpoint_spread);
  PhaseChoice choice;
  choice.filter = params.data_phase_filter;
  switch (choice.filter) {
  case DataPhaseFilter::automatic: choice.order = automatic_data_phase_order(dims); break;
  case DataPhaseFilter::order: choice.order = params.data_phase_order; break;
  default: choice.order = data_phase_filter_order(choice.filter); break;
  }
  char residual[200];
  std::snprintf(residual, sizeof residual,
                "; residual phase: a point scatterer %+.1f deg, a reflector %+.1f deg",
                residual_phase_degrees(choice.order, 2.0),
                residual_phase_degrees(choice.order, 0.5 * dims));
  run.info << "rtm: data phase filter: " << data_phase_filter_name(choice.filter)
           << " ((-i omega / omega0)^" << choice.order
           << (choice.filter == DataPhaseFilter::automatic
                   ? ", chosen from the acquisition: " + std::to_string(dims) + " dense direction(s)"
                   : std::string(", as asked"))
           << residual << "); receivers: " << describe(spread)
           << "; source-receiver midpoints: " << describe(midpoint_spread, "midpoint") << "\n";
  return choice;
}

// The run's description on world rank 0, and what shaped the image for the output file's
// provenance (io/provenance.h).
void announce_migration(const MigrationRun& run, int remaining, const MigrationControl& control) {
  const MigrationParams& params = run.params;
  const ParallelContext& parallel = run.parallel;
  std::ostream& info = run.info;
  const int nshots = int(run.shots.shots.size());
  const GridLayout& g = run.sim.layout;
  info << "rtm: migrating " << remaining << " shot(s)";
  if (remaining != nshots) info << " (" << nshots - remaining << " resumed)";
  info << " on " << run.fields->name() << ": grid " << g.nx << "x" << g.ny << "x" << g.nz
       << " (absorbing layers of " << params.boundary.width << " cells included), " << run.nt
       << " steps of dt = " << run.shots.dt << " s, " << describe_receiver_counts(run.shots) << " ("
       << point_interpolation_name(params.point_interpolation) << " point interpolation)";
  if (parallel.size() > 1)
    info << "; " << parallel.group_count() << " shot group(s) of " << parallel.ranks_per_shot()
         << " rank(s)";
  info << "\n";
  record_run_parameter("propagator", run.fields->name());
  record_run_parameter("dt_s", format_number(run.shots.dt));
  record_run_parameter("boundary", std::string(absorber_name(params.boundary.absorber)) + ", " +
                                       std::to_string(params.boundary.width) + " cells" +
                                       (params.boundary.free_surface ? ", free surface" : ""));
  record_run_parameter("reconstruction", reconstruction_name(params.reconstruction));
  if (params.imaging_condition != ImagingCondition::cross || !applies_laplacian_filter(params))
    info << "rtm: imaging condition " << imaging_condition_info(params.imaging_condition).name
         << " (" << imaging_condition_info(params.imaging_condition).field_reads
         << " field values read per box cell and imaging step)"
         << (applies_laplacian_filter(params) ? ", then the Laplacian post-filter"
                                              : ", no Laplacian post-filter")
         << " (docs/rtm.md, section 5c)\n";
  record_run_parameter("imaging_condition",
                       std::string(imaging_condition_info(params.imaging_condition).name) +
                           (applies_laplacian_filter(params) ? ", Laplacian post-filter"
                                                             : ", no Laplacian post-filter"));
  record_run_parameter("direct_wave", params.direct_wave == DirectWaveRemoval::mute ? "mute" : "none");
  if (params.image_mute_depth > 0)
    record_run_parameter("image_mute", format_number(params.image_mute_depth) + " m, taper " +
                                           format_number(params.image_mute_taper) + " m");
  record_run_parameter("point_interpolation", point_interpolation_name(params.point_interpolation));
  const CheckpointPolicy* policy = run.checkpoint_policy.get();
  if (policy && policy->automatic() && policy->periodic())
    info << "rtm: checkpoints to " << checkpoint_path(control.checkpoint_output, 0)
         << (parallel.group_count() > 1 ? " (one file per group)" : "")
         << " as often as they cost at most " << format_number(100 * kCheckpointBudget)
         << "% of the loop (--checkpoint-every auto: the interval from a checkpoint's measured "
            "time against a shot's)\n";
  else if (policy && policy->automatic())
    info << "rtm: no checkpoints (--checkpoint-every auto: no shot group has a second shot; one "
            "is written only if the run is stopped)\n";
  else if (!control.checkpoint_output.empty() && control.checkpoint_every > 0)
    info << "rtm: checkpoints every " << control.checkpoint_every << " shot(s) per group to "
         << checkpoint_path(control.checkpoint_output, 0)
         << (parallel.group_count() > 1 ? " (one file per group)" : "") << "\n";
}

// The shots, their steps and costs, as the shot loop sees them.
ShotLoopPlan migration_plan(const MigrationRun& run, std::vector<char> finished, int checkpoint_every) {
  const int nt = run.nt;
  ShotLoopPlan plan;
  plan.total = int(run.shots.shots.size());
  plan.finished = std::move(finished);
  plan.verb = "migrated";
  // Phases of a shot for the progress estimate: nt forward source steps, then the backward
  // sweeps: nt receiver steps and (boundary saving) nt - 1 source steps. A backward step also
  // images, and restores the boundary ring; kBackwardStepCost is its cost relative to a forward
  // step, a guess used only until the first backward sweep has been timed.
  constexpr double kBackwardStepCost = 1.1;
  const long long backward_steps =
      run.reconstruction == Reconstruction::boundary ? 2LL * nt - 1 : nt;
  plan.phases = {{nt, 1.0}, {backward_steps, kBackwardStepCost}};
  const GridLayout& g = run.sim.layout;
  plan.cells_per_step = double(g.interior_cells());
  // Least-squares RTM's Born modeling before each shot steps two more fields over nt steps.
  const double born_sweeps = run.params.born_perturbation ? 2 : 0;
  plan.cell_updates_per_shot =
      double(g.interior_cells()) * nt * (sweeps_per_shot(run.reconstruction) + born_sweeps);
  plan.checkpoint_every = checkpoint_every;
  return plan;
}

} // namespace migration_steps

void check_migration_memory_before_reading(const VelocityModel& shape, const ShotFile& shots,
                                           const MigrationParams& params,
                                           const ParallelContext& parallel, Physics physics,
                                           double smooth, bool checkpoints) {
  // A file without these is refused by migrate_shots with its own message; nothing to size here.
  if (!(shots.dt > 0) || shots.nt < 1 || !(shots.f0 > 0)) return;
  const int reach = parallel.ranks_per_shot() > 1 && smooth > 0 ? smoothing_reach_cells(smooth, shape.dz)
                                                                : -1;
  const RunMemoryPlan plan =
      migration_memory_plan(simulation_grid_of_shape(shape, params.boundary, shots.dt, physics),
                            shots, params, parallel, reach, checkpoints,
                            imaging_interval(params, shots.dt, shots.f0));
  check_run_memory(with_storage(plan, source_storage_choice(plan, params, parallel)),
                   params.backend, parallel.local_size(), run_name(params));
}

} // namespace rtm
