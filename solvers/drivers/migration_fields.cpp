// A migration's fields: how the source field is kept (boundary saving or snapshots, where), both
// wavefields, the image and the source field's store made, the wavelet the source injects.
#include "solvers/drivers/migration_run.h"

#include <memory>

#include "solvers/contracts/format.h"
#include "solvers/contracts/physics.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/decomposed_backend.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/time_dispersion.h"

namespace rtm {

namespace migration_steps {

// This rank's choice of how to keep the source field (choose_reconstruction's, before the ranks
// agree): as asked, or by the memory estimate.
SourceStorageChoice source_storage_choice(const RunMemoryPlan& plan, const MigrationParams& params,
                                          const ParallelContext& parallel) {
  const bool allow_device = params.snapshot_memory != SnapshotMemory::host;
  const bool allow_host = params.snapshot_memory != SnapshotMemory::device;
  SourceStorageChoice choice;
  if (params.reconstruction == Reconstruction::boundary) {
    choice.reason = "--reconstruction boundary";
    return choice;
  }
  const bool snapshots_possible = physics_info(plan.physics).supports_snapshots;
  choice = choose_source_storage_here(plan, params.backend, parallel.local_size(),
                                      snapshots_possible, allow_device, allow_host);
  if (params.reconstruction == Reconstruction::snapshots &&
      choice.storage != SourceWavefieldStorage::snapshots) {
    // Forced: the place asked (or the device), and the memory check says what is short.
    choice.storage = SourceWavefieldStorage::snapshots;
    choice.place = allow_device ? SnapshotPlace::device : SnapshotPlace::host;
    choice.reason = "--reconstruction snapshots";
  }
  return choice;
}

// `plan` with the source field kept as `choice` says.
RunMemoryPlan with_storage(RunMemoryPlan plan, const SourceStorageChoice& choice) {
  plan.storage = choice.storage;
  plan.snapshot_place = choice.place;
  return plan;
}

// The source field's reconstruction: as asked, or (automatic) snapshots where the memory estimate
// fits them, else boundary saving; every rank takes the same (the least any rank can hold). Said
// in the log with the reason, kept in `run` and returned (for the memory check).
SourceStorageChoice choose_reconstruction(MigrationRun& run, const RunMemoryPlan& plan) {
  const MigrationParams& params = run.params;
  SourceStorageChoice choice = source_storage_choice(plan, params, run.parallel);
  // 0 boundary, 1 snapshots in host memory, 2 on the device: the least over the ranks.
  int code = choice.storage == SourceWavefieldStorage::boundary_saving ? 0
             : choice.place == SnapshotPlace::host                    ? 1
                                                                      : 2;
  if (run.parallel.uses_mpi()) {
    int least = code;
    check_mpi(MPI_Allreduce(&code, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
              "MPI_Allreduce (source-wavefield reconstruction)");
    if (least != code) choice.reason = "the choice of the rank with the least memory";
    code = least;
  }
  choice.storage = code == 0 ? SourceWavefieldStorage::boundary_saving : SourceWavefieldStorage::snapshots;
  choice.place = code == 1 ? SnapshotPlace::host : SnapshotPlace::device;
  run.reconstruction = code == 0 ? Reconstruction::boundary : Reconstruction::snapshots;
  run.snapshot_place = choice.place;
  run.info << "rtm: source wavefield: ";
  if (run.reconstruction == Reconstruction::boundary)
    run.info << "boundary saving with a " << ring_precision_name(params.ring_precision)
             << " ring, three sweeps per shot, " << (params.fused_backward ? "fused" : "separate")
             << " backward steps"
             << (params.fused_backward && params.imaging_condition != ImagingCondition::cross
                     ? " (the imaging steps separate: no fused kernel has this condition)"
                     : "");
  else
    run.info << ring_precision_name(params.snapshot_precision) << " snapshots in "
             << (run.snapshot_place == SnapshotPlace::device ? "device" : "host")
             << " memory every " << run.imaging_interval << " steps, two sweeps per shot";
  run.info << " (" << (params.reconstruction == Reconstruction::automatic ? "auto: " : "")
           << choice.reason << ")\n";
  return choice;
}

// Both wavefields on one backend and variant, the receivers on the receiver field, the image and
// the source field's ring or snapshot store. `checkpoints`: the loop writes checkpoints.
void make_wavefields(MigrationRun& run, bool checkpoints) {
  const MigrationParams& params = run.params;
  const RunMemoryPlan plan = migration_memory_plan(run.sim, run.shots, params, run.parallel,
                                                   run.part ? run.part->smoothing_reach : -1,
                                                   checkpoints, run.imaging_interval);
  check_run_memory(with_storage(plan, choose_reconstruction(run, plan)), params.backend,
                   run.parallel.local_size(), run_name(params));
  const double fields_start = steady_seconds();
  const AutotuneTotals tuned_before = autotune_totals();
  if (run.part) {
    // Each rank builds its slab from its part of the model: no rank holds the whole grid's v2dt2.
    run.fields = make_decomposed_shot_fields(
        make_slab_decomposition(run.sim, *run.part, run.parallel.group_comm()), params.backend,
        run.info);
  } else {
    const PropagatorSetup setup = make_propagator_setup(run.sim);
    // Made together on one backend and kernel ("auto" chooses once).
    run.fields = make_shot_fields(setup, params.backend, run.parallel, run.info);
  }
  run.fields_s = steady_seconds() - fields_start;
  const AutotuneTotals tuned = autotune_totals();
  run.autotune.choices = tuned.choices - tuned_before.choices;
  run.autotune.from_cache = tuned.from_cache - tuned_before.from_cache;
  run.autotune.seconds = tuned.seconds - tuned_before.seconds;
  if (!run.receivers.empty())
    run.receiver_set = run.fields->receiver().add_points(run.receivers, run.nt);
  run.fields->allocate_image(run.box, params.imaging_condition);
  if (params.offset_gathers.enabled()) {
    run.fields->allocate_offset_gathers(params.offset_gathers);
    const OffsetGatherLayout& l = run.fields->gather_layout();
    run.info << "rtm: offset gathers: " << l.ngx << " x " << l.ngy << " positions (every "
             << l.stride_x << " x " << l.stride_y << " cells) x " << l.nz << " depths x " << l.nlag
             << " lags (every " << l.lag_step << " cells) x " << l.axes
             << (l.axes == 2 ? " axes (x, y)" : " axis (x)") << " = "
             << format_bytes(uint64_t(l.bytes())) << "\n";
  }
  // The checkpoints' pinned buffers on the GPU (the memory check counted them), here before
  // the loop rather than at its first checkpoint (docs/rtm.md, section 11b).
  if (checkpoints) run.fields->prepare_snapshots();
  if (run.reconstruction == Reconstruction::boundary)
    run.boundary = run.fields->source().make_boundary_store(run.box, run.memory.ring_steps,
                                                            params.ring_precision);
  else
    run.snapshots = run.fields->source().make_snapshot_store(
        run.box, run.memory.snapshot_count, params.snapshot_precision, run.snapshot_place);
}

// The wavelet the source injects and the source field's health limit.
void prepare_source(MigrationRun& run) {
  const SimulationGrid& sim = run.sim;
  const int nt = run.nt;
  // Traces with the time dispersion removed are time-continuous; the propagators step in time as
  // modeling did, so the wavelet and the data both get the forward transform (docs/rtm.md, "Time
  // dispersion"). Traces as the time stepping made them already carry it: used as they are.
  run.source_wavelet = run.shots.wavelet;
  if (run.shots.time_dispersion_removed) {
    run.source_wavelet = time_dispersion_transformed(run.shots.wavelet, TimeDispersion::add);
    run.add_time_dispersion = std::make_unique<TimeDispersionTransform>(nt, TimeDispersion::add);
    run.info << "rtm: the shot file's traces have the time dispersion removed: the wavelet and the "
                "data get the forward transform before they are propagated\n";
  }
  // One wavelet for every shot: one source limit; the receiver limit follows each shot's data.
  run.max_v2dt2 = run.extremes.vmax * run.extremes.vmax * sim.dt * sim.dt;
  run.source_health = make_health_check(
      sim, runaway_limit(injected_amplitude(run.source_wavelet, sim.injection_scale(), run.max_v2dt2), 0.0, nt));
  // The mute's velocity at every shot's source, here on the loop's thread (collective over the
  // group when the model is split), so that the prefetch thread only reads it.
  if (run.params.direct_wave == DirectWaveRemoval::mute)
    for (const ShotGather& gather : run.shots.shots)
      run.mute_velocity.push_back(run.params.direct_wave_velocity > 0
                                      ? run.params.direct_wave_velocity
                                      : migration_velocity_at(run, gather.source));
}

} // namespace migration_steps

} // namespace rtm
