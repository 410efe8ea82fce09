// A migration's checkpoints during the shot loop: the group's partial sums and finished shots
// written (on the writer's thread, or by slabs), and how often (CheckpointPolicy).
#include "solvers/drivers/migration_run.h"

#include <algorithm>

#include "io/checkpoint_file.h"
#include "solvers/drivers/slab_checkpoint.h"

namespace rtm {

namespace migration_steps {

// The group's partial sums and finished shots. Every rank of the group takes a snapshot of the
// sums (a split propagator assembles the arrays collectively; the CUDA backend only queues their
// copy into pinned memory, which runs beside the next shot's first steps); the leader writes, on
// the writer's thread while the next shot steps. With the model split over the group (part set)
// each rank writes its own planes instead (solvers/drivers/slab_checkpoint.h), on this thread: the
// ranks take turns by MPI.
void write_group_checkpoint(MigrationRun& run, const MigrationControl& control) {
  const double start = steady_seconds();
  MigrationCheckpoint c;
  std::unique_ptr<ImageSnapshot> sums;
  double waited = 0; // for the file before: the policy counts it from the files' own times
  if (!run.part) {
    // The write before is done (and its snapshot taken) before the next snapshot: one at a time.
    waited = run.checkpoint_writer.finish();
    sums = run.fields->snapshot_image();
    if (!run.parallel.is_leader()) return;
  }
  c.id = new_checkpoint_id();
  c.absorbed = run.group_absorbed;
  c.group = run.parallel.group_index();
  c.identity = control.identity;
  c.finished = run.group_finished;
  c.nx = run.model.nx;
  c.ny = run.model.ny;
  c.nz = run.model.nz;
  const std::string path = checkpoint_path(control.checkpoint_output, c.group);
  if (run.part) {
    const double write_start = steady_seconds();
    const SlabSums own = own_sums(*run.fields, *run.part);
    write_slab_checkpoint(path, c, own, run.parallel.group_comm());
    ++run.slab_checkpoints.files;
    run.slab_checkpoints.seconds += steady_seconds() - write_start;
    run.slab_checkpoints.bytes +=
        uint64_t(own.raw_image.size() + own.illumination.size()) * sizeof(float);
  } else
    run.checkpoint_writer.start(path, std::move(c), std::move(sums));
  run.checkpoint_s += steady_seconds() - start;
  if (run.checkpoint_policy)
    run.checkpoint_policy->checkpoint_taken(std::max(0.0, steady_seconds() - start - waited));
}

// A checkpoint's size: the raw image and the illumination over the model (with the model split
// over the group each rank writes its planes, in turn: the loop's thread of every rank waits for
// the whole file).
uint64_t checkpoint_bytes(const MigrationRun& run) {
  return uint64_t(run.model.cells()) * 2 * sizeof(float);
}

// The checkpoint interval of the moment (ShotLoopPlan::checkpoint_interval): the files the writer
// finished since the last call told to the policy first. With the model split over the group the
// leader's interval, shared: every rank must checkpoint at the same shots. Says a new interval on
// world rank 0's log.
int current_checkpoint_interval(MigrationRun& run) {
  CheckpointPolicy& policy = *run.checkpoint_policy;
  const BackgroundCheckpointWriter::Written files = run.checkpoint_writer.written();
  if (files.files > run.files_told) { // the writer keeps sums: the new files' mean
    const double per_file = (files.seconds - run.file_seconds_told) / (files.files - run.files_told);
    for (; run.files_told < files.files; ++run.files_told) policy.file_written(std::max(0.0, per_file));
    run.file_seconds_told = files.seconds;
  }
  int k = policy.interval();
  if (run.part && run.parallel.ranks_per_shot() > 1)
    check_mpi(MPI_Bcast(&k, 1, MPI_INT, 0, run.parallel.group_comm()), "MPI_Bcast (checkpoint interval)");
  if (k != run.interval_said) {
    run.info << "rtm: checkpoints " << policy.describe() << "\n";
    run.interval_said = k;
  }
  return k;
}

} // namespace migration_steps

} // namespace rtm
