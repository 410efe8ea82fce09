// Resuming a migration: the run's identity (what makes a checkpoint this run's), the checkpoints
// of an earlier run read back and merged, the finished shots and their sums carried on.
#include "solvers/drivers/migration_run.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/shear_taper.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/slab_checkpoint.h"
#include "solvers/drivers/slab_model.h"

namespace rtm {

namespace {

// What a resumed run carries over from earlier checkpoints: the finished shots on every rank,
// the sums on the ranks of group 0 (which goes on accumulating onto them): the whole arrays, or
// with the model split over the group (part set) each rank's own planes.
struct ResumeState {
  std::vector<long long> finished;
  std::vector<std::string> absorbed; // ids of the checkpoints merged
  std::vector<float> raw_image, illumination;
};

// World rank 0 reads every checkpoint of the output, checks each belongs to this run, merges them
// into the file of group 0 (written before the others are deleted: a stop in between leaves files
// that the merged one lists as absorbed) and shares the result. Without resume, checkpoints left
// by an earlier run are refused. With the model split over the group (part set), world rank 0
// reads the files' headers only and the ranks of group 0 merge and write their own planes of the
// sums (solvers/drivers/slab_checkpoint.h). Collective.
ResumeState carry_over_checkpoints(const MigrationControl& control, const VelocityModel& model,
                                   const SlabModel* part, int nshots,
                                   const ParallelContext& parallel, std::ostream& info) {
  ResumeState state;
  const std::string& output = control.checkpoint_output;
  MigrationCheckpoint merged;      // by slabs: the merge's header, on world rank 0
  std::vector<std::string> to_sum; // by slabs: the files whose sums it adds, on world rank 0
  const std::string merged_path = checkpoint_path(output, 0);
  std::vector<std::string> paths;
  if (parallel.is_root()) {
    paths = find_checkpoints(output);
    if (!control.resume && !paths.empty())
      throw InputError(paths.front() + ": a checkpoint of an interrupted migration to " + output +
                       " exists; `rtm migrate --resume` with the same options continues it, or "
                       "delete " + output + ".checkpoint-*.h5 to start afresh");
    if (control.resume && paths.empty())
      info << "rtm: --resume: no checkpoint of " << output << " found; starting from the first shot\n";
    if (control.resume && !paths.empty()) {
      std::vector<MigrationCheckpoint> saved;
      for (const std::string& path : paths) {
        saved.push_back(part ? read_checkpoint_planes(path, 0, 0) : read_checkpoint(path));
        check_same_run(saved.back().identity, control.identity, path);
        const MigrationCheckpoint& c = saved.back();
        if (c.nx != model.nx || c.ny != model.ny || c.nz != model.nz)
          throw InputError(path + ": image of " + std::to_string(c.nx) + "x" + std::to_string(c.ny) +
                           "x" + std::to_string(c.nz) + " cells; the migration model has " +
                           std::to_string(model.nx) + "x" + std::to_string(model.ny) + "x" +
                           std::to_string(model.nz));
      }
      merged = merge_checkpoints(saved, paths); // by slabs: the header, the sums follow below
      merged.group = 0;
      merged.identity = control.identity;
      if (part) {
        for (size_t k : checkpoints_to_sum(saved)) to_sum.push_back(paths[k]);
      } else {
        write_checkpoint(merged_path, merged);
        for (const std::string& path : paths)
          if (path != merged_path) std::remove(path.c_str());
      }
      info << "rtm: resuming from " << paths.size() << " checkpoint file(s): " << merged.finished.size()
           << " of " << nshots << " shot(s) already migrated\n";
      state.finished = merged.finished;
      state.absorbed = merged.absorbed;
      state.raw_image = std::move(merged.raw_image);
      state.illumination = std::move(merged.illumination);
    }
  }
  if (!parallel.uses_mpi()) return state;
  long long count = static_cast<long long>(state.finished.size());
  check_mpi(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (resumed shots)");
  state.finished.resize(size_t(count));
  if (count > 0)
    check_mpi(MPI_Bcast(state.finished.data(), int(count), MPI_LONG_LONG, 0, MPI_COMM_WORLD),
              "MPI_Bcast (resumed shots)");
  if (count > 0 && part && parallel.group_index() == 0) {
    SlabSums mine = merge_slab_checkpoints(to_sum, merged, merged_path, *part, parallel.group_comm());
    state.raw_image = std::move(mine.raw_image);
    state.illumination = std::move(mine.illumination);
    if (parallel.is_root()) // the merged file is in place: the files it absorbed can go
      for (const std::string& path : paths)
        if (path != merged_path) std::remove(path.c_str());
  } else if (count > 0 && parallel.group_index() == 0 && parallel.group_comm() != MPI_COMM_NULL) {
    state.raw_image.resize(size_t(model.cells()));
    state.illumination.resize(size_t(model.cells()));
    broadcast_from_root(state.raw_image, parallel.group_comm());
    broadcast_from_root(state.illumination, parallel.group_comm());
  }
  return state;
}

// The imaging interval the run will use (snapshots are kept at its steps), 0 where the shot file
// cannot fix it (the run refuses such a file later).
int identity_imaging_interval(const MigrationParams& params, const ShotFile& shots) {
  if (params.imaging_interval > 0) return params.imaging_interval;
  if (!(shots.f0 > 0 && shots.dt > 0 && std::isfinite(shots.f0))) return 0;
  return automatic_imaging_interval(shots.dt, shots.f0);
}

} // namespace

CheckpointIdentity migration_identity(const VelocityModel& model, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params) {
  CheckpointIdentity id;
  id.shot_file = shots_path;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(shots_path, ec);
  id.shot_file_bytes = ec ? 0 : static_cast<long long>(bytes); // 0: not a file (tests)
  id.shot_count = static_cast<long long>(shots.shots.size());
  // What the migration reads of the shot file, in a fixed order.
  uint64_t h = kFingerprintSeed;
  auto add = [&h](const void* data, size_t n) { h = fingerprint(data, n, h); };
  add(&shots.nt, sizeof shots.nt);
  add(&shots.dt, sizeof shots.dt);
  add(&shots.f0, sizeof shots.f0);
  add(&shots.t0, sizeof shots.t0);
  add(shots.wavelet.data(), shots.wavelet.size() * sizeof(float));
  add(shots.receivers.data(), shots.receivers.size() * sizeof(Position));
  for (const ShotGather& gather : shots.shots) {
    add(&gather.source, sizeof gather.source);
    add(gather.data.data(), gather.data.size() * sizeof(float));
    // A shot's own receivers (nothing for the shared spread: old fingerprints stay valid).
    add(gather.receivers.data(), gather.receivers.size() * sizeof(Position));
  }
  id.shots_fingerprint = h;
  // The planes the model holds: none for a slab run's shape (its caller adds them rank by rank).
  id.model_fingerprint = model_fingerprint(model);

  // The phase filter as it decides the data: a number for `order`; `auto` names its rule, so that
  // a checkpoint made under the receivers-only rule (auto = none, half or full) is not resumed.
  std::string phase = data_phase_filter_name(params.data_phase_filter);
  if (params.data_phase_filter == DataPhaseFilter::order) {
    char order[64];
    std::snprintf(order, sizeof order, " %.17g", params.data_phase_order);
    phase += order;
  } else if (params.data_phase_filter == DataPhaseFilter::automatic) {
    phase += " (points and reflectors, receivers and sources)";
  }
  char text[640];
  std::snprintf(text, sizeof text,
                "reconstruction = %s\ndirect_wave = %s\ndirect_wave_velocity = %.17g\n"
                "data_phase_filter = %s\n"
                "boundary_width = %d\nfree_surface = %s\nboundary_reflection = %.17g\n"
                "point_interpolation = %s\nabsorber = %s\nimaging_interval = %d\n"
                "ring_precision = %s\nsnapshot_precision = %s\n",
                reconstruction_name(params.reconstruction),
                params.direct_wave == DirectWaveRemoval::mute ? "mute" : "none",
                params.direct_wave_velocity, phase.c_str(),
                params.boundary.width,
                params.boundary.free_surface ? "true" : "false", params.boundary.reflection,
                point_interpolation_name(params.point_interpolation),
                absorber_name(params.boundary.absorber), identity_imaging_interval(params, shots),
                ring_precision_name(params.ring_precision),
                ring_precision_name(params.snapshot_precision));
  // TTI: a line of its own, so that an isotropic run's identity is what it always was; the
  // imaging condition too, named only where it is not the plain cross-correlation.
  id.parameters = text + anisotropy_identity(model);
  if (params.imaging_condition != ImagingCondition::cross)
    id.parameters += std::string("imaging_condition = ") +
                     imaging_condition_info(params.imaging_condition).name + "\n";
  if (physics_info(physics_of(model)).shear_taper) id.parameters += shear_taper_identity(params.shear_taper, model);
  return id;
}

CheckpointIdentity migration_identity(const SlabModel& part, MPI_Comm group, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params) {
  // The shots' part from the whole-model function on the shape; the model's fingerprint runs over
  // the ranks' planes in turn (FNV-1a goes byte by byte, so it equals one pass over the whole).
  CheckpointIdentity id = migration_identity(part.shape, shots, shots_path, params);
  id.model_fingerprint = model_fingerprint(part, group);
  id.parameters += anisotropy_identity(part, group); // part.shape has no anisotropy: none above
  if (physics_info(part.physics).shear_taper) id.parameters += shear_taper_identity(params.shear_taper, part.shape);
  return id;
}

namespace migration_steps {

// Resuming: the shots finished before (returned as flags per shot), and group 0 carries their
// sums on.
std::vector<char> resume_migration(MigrationRun& run, const MigrationControl& control) {
  const int nshots = int(run.shots.shots.size());
  const bool checkpointing = !control.checkpoint_output.empty();
  ResumeState resumed = checkpointing ? carry_over_checkpoints(control, run.model, run.part, nshots,
                                                              run.parallel, run.info)
                                      : ResumeState{};
  if (run.parallel.group_index() == 0 && !resumed.finished.empty()) {
    if (run.part)
      set_own_sums(*run.fields, {run.part->own_first, std::move(resumed.raw_image),
                                 std::move(resumed.illumination)});
    else
      run.fields->set_image(resumed.raw_image, resumed.illumination);
  }
  std::vector<char> done(size_t(nshots), 0);
  for (long long shot : resumed.finished) done[size_t(shot)] = 1;
  if (run.parallel.group_index() == 0) {
    run.group_finished = resumed.finished;
    run.group_absorbed = resumed.absorbed;
  }
  return done;
}

} // namespace migration_steps

} // namespace rtm
