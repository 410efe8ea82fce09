// The image of a migration whose model is split over a group of ranks (solvers/drivers/slab_model.h):
// finished and written slab by slab, so that no rank ever holds the whole image
// (docs/decomposition.md, "What each rank reads and holds").
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/velocity_model.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/drivers/image_datasets.h"
#include "solvers/drivers/slab_model.h"

namespace rtm {

// One rank's planes of the image volumes: model planes z_first .. z_first + planes - 1.
struct SlabImage {
  int z_first = 0, planes = 0;
  std::vector<float> raw_image, illumination, image;
};

// The stacked sums of `fields` (DecomposedShotFields over the part's group) summed over the shot
// groups onto the ranks of group 0, plane range by plane range, then normalised and (laplacian)
// filtered there, with the arithmetic of normalise_image and laplacian_filter on the whole volume:
// the mean illumination summed rank after rank in z order, the filter given each neighbour's edge
// plane. Bit for bit the whole volume's planes. Ranks of other groups return nothing. Collective
// over every rank.
SlabImage finish_slab_image(const ShotFields& fields, const SlabModel& part,
                            const ParallelContext& parallel, double eps_fraction, bool laplacian);

// write_volumes of the `datasets` asked for (/image, /illumination, /image_raw) from the ranks of
// group 0, all writing their planes at once into the file world rank 0 made (write_volume_planes:
// raw bytes at each dataset's place, no HDF5 metadata touched). Collective over every rank.
void write_slab_image(const std::string& path, const VelocityModel& shape, const SlabImage& mine,
                      const ImageDatasets& datasets,
                      const std::vector<std::pair<std::string, std::string>>& attributes,
                      const ParallelContext& parallel);

// One file written by every rank of `group` at once: rank 0 calls make_file(write_parts), which
// makes the file under a temporary name, calls write_parts(temporary) and then renames it into
// place (write_volumes_in_parts); through write_parts every rank writes its part with
// write_mine(temporary) at the same time, for parts that touch no HDF5 metadata
// (write_volume_planes). A rank that fails throws its error and the others an InputError saying
// so, rank 0 having removed the temporary file. Collective over `group`.
void write_file_concurrently(
    MPI_Comm group,
    const std::function<void(const std::function<void(const std::string&)>& write_parts)>& make_file,
    const std::function<void(const std::string& temporary)>& write_mine);

// One file written by every rank of `group`, one at a time in rank order (serial HDF5): rank 0
// calls make_file(write_parts), which makes the file under a temporary name, calls
// write_parts(temporary) and then renames it into place (write_volumes_in_parts,
// write_checkpoint_in_parts); through write_parts each rank in turn writes its part with
// write_mine(temporary) and hands the name on, the last back to rank 0. Collective over `group`.
void write_file_in_rank_order(
    MPI_Comm group,
    const std::function<void(const std::function<void(const std::string&)>& write_parts)>& make_file,
    const std::function<void(const std::string& temporary)>& write_mine);

} // namespace rtm
