// Checkpoints of a migration whose model is split over a group of ranks (solvers/drivers/slab_model.h):
// each rank writes, and on resume reads back, only its own planes of the partial sums, so that no
// rank holds the whole image (docs/decomposition.md, "What each rank reads and holds"). The file
// is io/checkpoint_file.h's, whole-grid, so a checkpoint resumes with any rank count.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "io/checkpoint_file.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/drivers/slab_model.h"

namespace rtm {

// This rank's planes of the partial sums: model planes z_first .. z_first + planes - 1.
struct SlabSums {
  int z_first = 0;
  std::vector<float> raw_image, illumination;
};

// The rank's own planes of `fields`' sums (DecomposedShotFields over the part's group). Not collective.
SlabSums own_sums(const ShotFields& fields, const SlabModel& part);
// Sets them back (a resumed migration): the reverse of own_sums. Not collective.
void set_own_sums(ShotFields& fields, const SlabSums& sums);

// Writes the checkpoint `header` (its sums ignored; used on the group's rank 0) with each rank's
// planes `mine` into `path`: by hyperslab, one rank at a time in rank order, into the file the
// group's rank 0 makes and renames into place when all have written. Collective over `group`.
void write_slab_checkpoint(const std::string& path, const MigrationCheckpoint& header,
                           const SlabSums& mine, MPI_Comm group);

// Resuming on slabs. The group's rank 0 passes `to_sum`, the checkpoint files whose sums are added
// (checkpoints_to_sum's, in its order), and `merged`, the header of their merge (merge_checkpoints);
// each rank reads its own planes of every file's sums and adds them cell by cell in that order, as
// merge_checkpoints adds the whole (bit for bit its planes), then the group writes the merged
// checkpoint to `path` (write_slab_checkpoint). Returns the rank's planes. Collective over `group`.
SlabSums merge_slab_checkpoints(const std::vector<std::string>& to_sum,
                                const MigrationCheckpoint& merged, const std::string& path,
                                const SlabModel& part, MPI_Comm group);

} // namespace rtm
