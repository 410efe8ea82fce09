// Temporary file names that every rank of MPI_COMM_WORLD agrees on, for the tests run under the MPI
// launcher that share files between ranks (tests/test_slab_*_mpi.cpp, test_tti_slabs_mpi.cpp).
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "kernels/mpi/mpi_context.h"

namespace rtm::test {

// "<temporary directory>/<name>_<pid>_np<ranks>", with rank 0's pid (so that runs beside each other
// do not collide) and the number of ranks. Collective: every rank calls it.
inline std::string shared_temp_stem(const std::string& name) {
  int pid = int(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(pid) + "_np" + std::to_string(world_size())))
      .string();
}

} // namespace rtm::test
