#include "solvers/drivers/slab_checkpoint.h"

#include <functional>
#include <stdexcept>
#include <utility>

#include "kernels/mpi/mpi_context.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/slab_image.h"

namespace rtm {
namespace {

// The group's rank 0's list of names, on every rank of the group.
std::vector<std::string> broadcast_names(std::vector<std::string> names, MPI_Comm group) {
  int count = int(names.size());
  check_mpi(MPI_Bcast(&count, 1, MPI_INT, 0, group), "MPI_Bcast (checkpoint files)");
  names.resize(size_t(count));
  for (std::string& name : names) {
    int length = int(name.size());
    check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, group), "MPI_Bcast (checkpoint file)");
    name.resize(size_t(length));
    check_mpi(MPI_Bcast(name.data(), length, MPI_CHAR, 0, group), "MPI_Bcast (checkpoint file)");
  }
  return names;
}

} // namespace

SlabSums own_sums(const ShotFields& fields, const SlabModel& part) {
  SlabSums sums;
  sums.z_first = part.own_first;
  sums.raw_image = fields.download_own_image(false);
  sums.illumination = fields.download_own_image(true);
  const size_t plane = size_t(part.shape.nx) * size_t(part.shape.ny);
  if (sums.raw_image.size() != size_t(part.own_end - part.own_first) * plane ||
      sums.illumination.size() != sums.raw_image.size())
    throw std::logic_error("own_sums: the slab's image planes are not the model planes it owns");
  return sums;
}

void set_own_sums(ShotFields& fields, const SlabSums& sums) {
  fields.set_own_image(sums.raw_image, sums.illumination);
}

void write_slab_checkpoint(const std::string& path, const MigrationCheckpoint& header,
                           const SlabSums& mine, MPI_Comm group) {
  write_file_in_rank_order(
      group,
      [&](const std::function<void(const std::string&)>& write_parts) {
        write_checkpoint_in_parts(path, header, write_parts);
      },
      [&](const std::string& temporary) {
        write_checkpoint_planes(temporary, mine.z_first, mine.raw_image, mine.illumination);
      });
}

SlabSums merge_slab_checkpoints(const std::vector<std::string>& to_sum,
                                const MigrationCheckpoint& merged, const std::string& path,
                                const SlabModel& part, MPI_Comm group) {
  const std::vector<std::string> files = broadcast_names(to_sum, group);
  SlabSums mine;
  mine.z_first = part.own_first;
  bool first = true;
  for (const std::string& file : files) {
    MigrationCheckpoint c = read_checkpoint_planes(file, part.own_first, part.own_end);
    if (c.nx != part.shape.nx || c.ny != part.shape.ny || c.nz != part.shape.nz)
      throw InputError(file + ": image of " + std::to_string(c.nx) + "x" + std::to_string(c.ny) +
                       "x" + std::to_string(c.nz) + " cells; the migration model has " +
                       std::to_string(part.shape.nx) + "x" + std::to_string(part.shape.ny) + "x" +
                       std::to_string(part.shape.nz));
    if (first) { // copied, not added to zeros: the sums stay bit for bit
      mine.raw_image = std::move(c.raw_image);
      mine.illumination = std::move(c.illumination);
      first = false;
      continue;
    }
    for (size_t cell = 0; cell < mine.raw_image.size(); ++cell) {
      mine.raw_image[cell] += c.raw_image[cell];
      mine.illumination[cell] += c.illumination[cell];
    }
  }
  write_slab_checkpoint(path, merged, mine, group);
  return mine;
}

} // namespace rtm
