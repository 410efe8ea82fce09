#include "solvers/drivers/slab_image.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "io/volume_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/image_finish.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/shot_parallel.h"

namespace rtm {
namespace {

int rank_in(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

// The illumination's sum over every rank's part as one pass over the whole would take it
// (solvers/contracts/image_finish.h's order: whole rows, then the rows' sums in order): each rank
// goes on from the sum of the ranks before it with its own rows' sums.
double ordered_sum(const std::vector<float>& mine, int nx, MPI_Comm group) {
  const int rank = rank_in(group), size = size_of(group);
  double sum = 0;
  if (rank > 0)
    check_mpi(MPI_Recv(&sum, 1, MPI_DOUBLE, rank - 1, 1, group, MPI_STATUS_IGNORE), "MPI_Recv (sum)");
  for (size_t row = 0; row + size_t(nx) <= mine.size(); row += size_t(nx))
    sum += image_row_sum(mine.data() + row, nx);
  if (rank + 1 < size) check_mpi(MPI_Send(&sum, 1, MPI_DOUBLE, rank + 1, 1, group), "MPI_Send (sum)");
  check_mpi(MPI_Bcast(&sum, 1, MPI_DOUBLE, size - 1, group), "MPI_Bcast (sum)");
  return sum;
}

// The Laplacian filter of this rank's planes: the planes with the neighbouring ranks' edge planes
// around them (the own edge plane repeated at the model's top and bottom, as laplacian_filter
// repeats edge values), filtered as one volume, the added planes dropped.
std::vector<float> filter_planes(const std::vector<float>& mine, int planes, const VelocityModel& shape,
                                 MPI_Comm group) {
  const int rank = rank_in(group), size = size_of(group);
  const size_t plane = size_t(shape.nx) * size_t(shape.ny);
  std::vector<int> counts(size_t(size), 0);
  check_mpi(MPI_Allgather(&planes, 1, MPI_INT, counts.data(), 1, MPI_INT, group),
            "MPI_Allgather (image planes)");
  int below = -1, above = -1; // the nearest ranks holding planes (an end slab may hold only layers)
  for (int r = rank - 1; r >= 0 && below < 0; --r)
    if (counts[size_t(r)] > 0) below = r;
  for (int r = rank + 1; r < size && above < 0; ++r)
    if (counts[size_t(r)] > 0) above = r;
  if (planes == 0) return {};
  std::vector<float> padded((size_t(planes) + 2) * plane);
  std::copy(mine.begin(), mine.end(), padded.begin() + ptrdiff_t(plane));
  float* first_ghost = padded.data();
  float* last_ghost = padded.data() + (size_t(planes) + 1) * plane;
  MPI_Request requests[4];
  int n = 0;
  const int count = int(plane);
  if (below >= 0) {
    check_mpi(MPI_Irecv(first_ghost, count, MPI_FLOAT, below, 2, group, &requests[n++]), "MPI_Irecv");
    check_mpi(MPI_Isend(mine.data(), count, MPI_FLOAT, below, 3, group, &requests[n++]), "MPI_Isend");
  } else {
    std::copy_n(mine.data(), plane, first_ghost);
  }
  if (above >= 0) {
    check_mpi(MPI_Irecv(last_ghost, count, MPI_FLOAT, above, 3, group, &requests[n++]), "MPI_Irecv");
    check_mpi(MPI_Isend(mine.data() + (size_t(planes) - 1) * plane, count, MPI_FLOAT, above, 2, group,
                        &requests[n++]),
              "MPI_Isend");
  } else {
    std::copy_n(mine.data() + (size_t(planes) - 1) * plane, plane, last_ghost);
  }
  check_mpi(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE), "MPI_Waitall (image planes)");
  const std::vector<float> filtered =
      laplacian_filter(padded, shape.nx, shape.ny, planes + 2, shape.dx, shape.dy, shape.dz);
  return std::vector<float>(filtered.begin() + ptrdiff_t(plane),
                            filtered.begin() + ptrdiff_t((size_t(planes) + 1) * plane));
}

} // namespace

SlabImage finish_slab_image(const ShotFields& fields, const SlabModel& part,
                            const ParallelContext& parallel, double eps_fraction, bool laplacian) {
  const size_t plane = size_t(part.shape.nx) * size_t(part.shape.ny);
  SlabImage out;
  out.z_first = part.own_first;
  out.planes = part.own_end - part.own_first;
  out.raw_image = fields.download_own_image(false);
  out.illumination = fields.download_own_image(true);
  if (out.raw_image.size() != size_t(out.planes) * plane ||
      out.illumination.size() != out.raw_image.size())
    throw std::logic_error("finish_slab_image: the slab's image planes are not the model planes it owns");
  if (parallel.group_count() > 1) {
    // The same slab of every group, onto group 0's.
    MPI_Comm same_slab;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, parallel.group_rank(), parallel.group_index(), &same_slab),
              "MPI_Comm_split (slabs)");
    sum_to_root(out.raw_image, same_slab);
    sum_to_root(out.illumination, same_slab);
    MPI_Comm_free(&same_slab);
  }
  if (parallel.group_index() != 0) return SlabImage{};
  const MPI_Comm group = parallel.group_comm();
  // normalise_image's arithmetic: the mean over every cell, then image / (illumination + eps).
  const double mean = ordered_sum(out.illumination, part.shape.nx, group) /
                      double(std::max<int64_t>(1, part.shape.cells()));
  const double eps = eps_fraction * mean;
  out.image = out.raw_image;
  normalise_image_with_eps(out.image, out.illumination, eps);
  if (laplacian) out.image = filter_planes(out.image, out.planes, part.shape, group);
  return out;
}

void write_file_in_rank_order(
    MPI_Comm group,
    const std::function<void(const std::function<void(const std::string&)>& write_parts)>& make_file,
    const std::function<void(const std::string& temporary)>& write_mine) {
  const int rank = rank_in(group), size = size_of(group);
  // The temporary file's name goes from rank to rank: each writes, then hands it on; the last
  // tells rank 0, which then renames the file into place.
  auto receive_name = [&](int from) {
    int length = 0;
    check_mpi(MPI_Recv(&length, 1, MPI_INT, from, 4, group, MPI_STATUS_IGNORE), "MPI_Recv (file)");
    std::string name(size_t(length), '\0');
    check_mpi(MPI_Recv(name.data(), length, MPI_CHAR, from, 5, group, MPI_STATUS_IGNORE),
              "MPI_Recv (file)");
    return name;
  };
  auto send_name = [&](const std::string& name, int to) {
    const int length = int(name.size());
    check_mpi(MPI_Send(&length, 1, MPI_INT, to, 4, group), "MPI_Send (file)");
    check_mpi(MPI_Send(name.data(), length, MPI_CHAR, to, 5, group), "MPI_Send (file)");
  };
  if (rank == 0) {
    make_file([&](const std::string& temporary) {
      write_mine(temporary);
      if (size > 1) {
        send_name(temporary, 1);
        receive_name(size - 1); // written by all
      }
    });
  } else {
    const std::string temporary = receive_name(rank - 1);
    write_mine(temporary);
    send_name(temporary, rank + 1 < size ? rank + 1 : 0);
  }
}

void write_file_concurrently(
    MPI_Comm group,
    const std::function<void(const std::function<void(const std::string&)>& write_parts)>& make_file,
    const std::function<void(const std::string& temporary)>& write_mine) {
  const int rank = rank_in(group);
  // The temporary file's name from rank 0, empty when it could not make the file.
  auto share_name = [&](std::string name) {
    int length = int(name.size());
    check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, group), "MPI_Bcast (file)");
    name.resize(size_t(length));
    if (length > 0) check_mpi(MPI_Bcast(name.data(), length, MPI_CHAR, 0, group), "MPI_Bcast (file)");
    return name;
  };
  // Each rank writes its part, then all learn whether every rank did; a rank that failed throws
  // its own error, the others say that one failed (rank 0's throw removes the temporary file).
  auto write_and_agree = [&](const std::string& temporary) {
    std::exception_ptr mine;
    try {
      write_mine(temporary);
    } catch (...) {
      mine = std::current_exception();
    }
    int failed = mine ? 1 : 0, any = 0;
    check_mpi(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, group), "MPI_Allreduce (file)");
    if (mine) std::rethrow_exception(mine);
    if (any) throw InputError(temporary + ": another rank of the group could not write its planes");
  };
  if (rank == 0) {
    bool shared = false;
    try {
      make_file([&](const std::string& temporary) {
        share_name(temporary);
        shared = true;
        write_and_agree(temporary);
      });
    } catch (...) {
      if (!shared) share_name(""); // the others are waiting for the name
      throw;
    }
  } else {
    const std::string temporary = share_name("");
    if (temporary.empty()) throw InputError("rank 0 of the group could not make the output file");
    write_and_agree(temporary);
  }
}

void write_slab_image(const std::string& path, const VelocityModel& shape, const SlabImage& mine,
                      const ImageDatasets& datasets,
                      const std::vector<std::pair<std::string, std::string>>& attributes,
                      const ParallelContext& parallel) {
  if (parallel.group_index() != 0) return;
  struct Part {
    const char* name;
    const char* units;
    const std::vector<float>& planes;
  };
  std::vector<Part> parts;
  if (datasets.image) parts.push_back({"image", kImageUnits, mine.image});
  if (datasets.illumination) parts.push_back({"illumination", kIlluminationUnits, mine.illumination});
  if (datasets.image_raw) parts.push_back({"image_raw", kRawImageUnits, mine.raw_image});
  std::vector<NamedVolume> volumes;
  for (const Part& part : parts) volumes.push_back({part.name, nullptr, part.units});
  write_file_concurrently(
      parallel.group_comm(),
      [&](const std::function<void(const std::string&)>& write_parts) {
        write_volumes_in_parts(path, shape, volumes, attributes, write_parts);
      },
      [&](const std::string& temporary) {
        for (const Part& part : parts) write_volume_planes(temporary, part.name, mine.z_first, part.planes);
      });
}

} // namespace rtm
