// The steps of a migration (migrate_shots, solvers/drivers/migration.cpp) and the run they share.
// Private to the migration files of the drivers; each holds one job of the run:
//   migration.cpp              the top level: plan, fields, the loop over shots, finish, output
//   migration_options.cpp      the options' names, the inputs and combinations refused
//   migration_plan.cpp         the run's plan and what it says it will do: memory, imaging
//                              interval, receivers, phase filter, the shots as the loop sees them
//   migration_fields.cpp       the source field's storage chosen, the fields made, the wavelet
//   migration_resume.cpp       the run's identity, checkpoints read back, finished shots merged
//   migration_checkpoints.cpp  the group's partial sums written during the loop, how often
//   migration_shot.cpp         the shot loop's body: one shot of the file set up and migrated
//   migration_sweeps.cpp       one shot's forward and backward sweeps, the image accumulated
//   migration_profile.cpp      --profile: MigrationProfile filled and printed
// Nothing else includes this header.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/drivers/checkpoint_policy.h"
#include "solvers/drivers/checkpoint_writer.h"
#include "solvers/drivers/health.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/shot_prefetch.h"
#include "solvers/drivers/time_dispersion.h"

namespace rtm::migration_steps {

// A shot's set-up that touches no wavefield (prepare_shot_data): its traces made ready to inject
// and its points placed on the grid. Made on the prefetch thread while the shot before steps
// (MigrationParams::overlap_shots), or at the shot's start.
struct PreparedShot {
  std::vector<float> series;               // the receivers' data, [t][receiver], ready to inject
  std::vector<PointStencil> own_receivers; // the shot's own spread (empty: the shared one)
  PointStencil source;
  double receiver_runaway_limit = 0;       // of the receiver field's health check
  double data_norm2 = 0;                   // MigrationResult::data_norm2's share of the shot
  double seconds = 0;                      // host time it took
};

// The steps of migrate_shots, in the order it takes them. What they set up once for every shot
// lives in a MigrationRun.
struct MigrationRun {
  MigrationRun(const VelocityModel& model_in, const SlabModel* part_in, const ShotFile& shots_in,
               const MigrationParams& params_in, const ParallelContext& parallel_in,
               std::ostream& info_in, SimulationGrid sim_in)
      : model(model_in), part(part_in), shots(shots_in), params(params_in), parallel(parallel_in),
        info(info_in), sim(std::move(sim_in)) {}

  // The migration model: whole, or (part set) its shape only, this rank holding its slab's part.
  const VelocityModel& model;
  const SlabModel* part;
  const ShotFile& shots;
  const MigrationParams& params;
  const ParallelContext& parallel;
  std::ostream& info; // world rank 0's log; the others' discards
  SimulationGrid sim;
  ModelExtremes extremes; // of the whole migration model
  Box box;
  int nt = 0;
  double f0 = 0;
  ReconstructionMemory memory;
  int imaging_interval = 1; // image every k-th backward step (snapshots: keep those steps' S)
  // The reconstruction the run takes (MigrationParams' automatic one resolved by make_wavefields)
  // and, for snapshots, where they live.
  Reconstruction reconstruction = Reconstruction::boundary;
  SnapshotPlace snapshot_place = SnapshotPlace::device;
  std::vector<PointStencil> receivers; // the shared spread (shots with their own place theirs)
  double data_phase_order = 0;
  std::unique_ptr<ShotFields> fields;        // the source and receiver fields, the image
  std::unique_ptr<PointSet> receiver_set;    // on the receiver field: the shared spread, if used
  std::unique_ptr<BoundaryStore> boundary;   // of the source field (boundary reconstruction)
  std::unique_ptr<SnapshotStore> snapshots;  // of the source field (snapshot reconstruction)
  std::vector<float> source_wavelet;
  std::unique_ptr<TimeDispersionTransform> add_time_dispersion;
  double max_v2dt2 = 0;
  HealthCheck source_health;
  // The direct-wave mute's velocity per shot of the file (made before the loop: with the model
  // split over the group it takes a reduction, which the prefetch thread must not make).
  std::vector<double> mute_velocity;
  // The shots' point sets; kept from shot to shot where the backend can replace their points
  // (MigrationParams::overlap_shots), otherwise made per shot. Declared after `fields`: a point
  // set goes before its wavefield.
  std::unique_ptr<PointSet> source_set;       // the shot's source
  std::unique_ptr<PointSet> own_receiver_set; // a shot's own receivers
  ShotPrefetch<PreparedShot> prefetch;        // the next shot's PreparedShot, made ahead
  double setup_wait_s = 0, prefetch_s = 0;    // MigrationProfile's, summed over the shots
  double data_norm2 = 0;                      // MigrationResult's, over the shots of this group
  std::function<void(int, const std::vector<float>&)> born_data; // MigrationControl's
  int prefetched_shots = 0;                   // MigrationProfile's
  // Checkpoint files of one rank per shot written beside the next shot's steps; checkpoint_s is
  // the loop thread's time in checkpoints (a wait for the write before; the sums' snapshot: their
  // download, or on the GPU only queuing their copy into pinned buffers made before the loop).
  // Declared after `fields`: a write in flight holds a snapshot of them, so it goes first.
  BackgroundCheckpointWriter checkpoint_writer;
  double checkpoint_s = 0;
  // How often the group checkpoints (made once the shots to do are known; none without
  // checkpoints), and the files of the writer it has been told of.
  std::unique_ptr<CheckpointPolicy> checkpoint_policy;
  int files_told = 0;
  double file_seconds_told = 0;
  int interval_said = -1; // the interval last said on the log
  // With the model split over the group: this rank's checkpoint files (written on the loop's
  // thread), for MigrationProfile.
  BackgroundCheckpointWriter::Written slab_checkpoints;
  double fields_s = 0; // making the fields (MigrationProfile::fields_s)
  AutotuneTotals autotune; // --variant auto's choices while the fields were made
  // What this group's checkpoints hold: for group 0 the carried shots too.
  std::vector<long long> group_finished;
  std::vector<std::string> group_absorbed;

  // The fields and their stores freed once the image is out of them (device memory and pinned
  // host buffers: tenths of a second for a large grid, which the profile shows as its own
  // phase). Point sets before their wavefields, stores before the fields, as the destructor would.
  void release_fields() {
    own_receiver_set.reset();
    source_set.reset();
    snapshots.reset();
    boundary.reset();
    receiver_set.reset();
    fields.reset();
  }
};

// The data phase filter the run takes (choose_migration_phase_filter).
struct PhaseChoice {
  DataPhaseFilter filter = DataPhaseFilter::none;
  double order = 0;
};

// migration_options.cpp
// The Laplacian post-filter: asked for, and part of the imaging condition's row.
bool applies_laplacian_filter(const MigrationParams& params);
// Inputs a migration refuses before any work (InputError naming the value).
void check_migration_inputs(const VelocityModel& model, double vmax, const ShotFile& shots,
                            const MigrationParams& params);

// migration_plan.cpp
// What a migration allocates (RunMemoryPlan), for the memory checks and the storage choice; of
// sim.physics.
RunMemoryPlan migration_memory_plan(const SimulationGrid& sim, const ShotFile& shots,
                                    const MigrationParams& params, const ParallelContext& parallel,
                                    int smoothing_reach, bool checkpoints, int imaging_interval);
// The command a memory refusal names.
const char* run_name(const MigrationParams& params);
// Wave-step sweeps of the grid per shot.
double sweeps_per_shot(Reconstruction reconstruction);
// The migration velocity at a position (nearest cell); collective with the model split.
double migration_velocity_at(const MigrationRun& run, const Position& zyx);
// The compute grid of a run of `physics` at the data's dt, the wavelet's f0 checked, the
// dispersion warning.
SimulationGrid migration_grid(const VelocityModel& model, const ModelExtremes& extremes,
                              Physics physics, const ShotFile& shots, const MigrationParams& params,
                              std::ostream& info);
// A shot's own receivers placed on the grid; none for a shot of the shared spread.
std::vector<PointStencil> locate_shot_receivers(const MigrationRun& run, const ShotGather& gather);
// The imaging interval, the reconstruction memory (said before the run), the receivers.
void plan_reconstruction_and_receivers(MigrationRun& run);
// The data's phase correction, one filter for every shot, said on the log.
PhaseChoice choose_migration_phase_filter(const MigrationRun& run);
// The run's description on world rank 0, and the output file's provenance.
void announce_migration(const MigrationRun& run, int remaining, const MigrationControl& control);
// The shots, their steps and costs, as the shot loop sees them.
ShotLoopPlan migration_plan(const MigrationRun& run, std::vector<char> finished, int checkpoint_every);

// migration_fields.cpp
// This rank's choice of how to keep the source field, before the ranks agree (snapshots where
// plan.physics has them).
SourceStorageChoice source_storage_choice(const RunMemoryPlan& plan, const MigrationParams& params,
                                          const ParallelContext& parallel);
// `plan` with the source field kept as `choice` says.
RunMemoryPlan with_storage(RunMemoryPlan plan, const SourceStorageChoice& choice);
// The source field's reconstruction, the same on every rank; said on the log, kept in `run`.
SourceStorageChoice choose_reconstruction(MigrationRun& run, const RunMemoryPlan& plan);
// Both wavefields, the receivers, the image and the source field's store.
void make_wavefields(MigrationRun& run, bool checkpoints);
// The wavelet the source injects and the source field's health limit.
void prepare_source(MigrationRun& run);

// migration_resume.cpp
// Resuming: the shots finished before (flags per shot); group 0 carries their sums on.
std::vector<char> resume_migration(MigrationRun& run, const MigrationControl& control);

// migration_checkpoints.cpp
// The group's partial sums and finished shots written to its checkpoint.
void write_group_checkpoint(MigrationRun& run, const MigrationControl& control);
// A checkpoint's size: the raw image and the illumination over the model.
uint64_t checkpoint_bytes(const MigrationRun& run);
// The checkpoint interval of the moment (ShotLoopPlan::checkpoint_interval).
int current_checkpoint_interval(MigrationRun& run);

// migration_shot.cpp
// The host half of a shot's set-up; may run on the prefetch thread.
PreparedShot prepare_shot_data(const MigrationRun& run, int s);
// One shot of the file set up and migrated onto the run's image.
void migrate_shot_of_file(MigrationRun& run, int s, ShotProgress& progress);

// migration_profile.cpp
// Where the time went (MigrationParams::profile), up to the end of the loop.
void measure_profile(const MigrationRun& run, const ShotLoopSummary& loop, double setup_start,
                     MigrationProfile& profile);

} // namespace rtm::migration_steps
