#include "kernels/mpi/mpi_context.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "solvers/contracts/errors.h"

namespace rtm {

bool launched_by_mpi_launcher() {
  // Open MPI (mpirun), PMIx (Open MPI 4+, Slurm with PMIx), PMI-1/2 (MPICH's hydra, Slurm),
  // MPICH's hydra, MVAPICH2.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                           "MPI_LOCALNRANKS", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

bool mpi_active() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised); // both may be called before MPI_Init
  MPI_Finalized(&finalised);
  return initialised && !finalised;
}

int world_size() {
  int size = 1;
  if (mpi_active()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int world_rank() {
  int rank = 0;
  if (mpi_active()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void check_mpi(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string(what) + " failed: " + text);
}

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  if (!launched_by_mpi_launcher()) return;
  int provided = 0;
  // Before the error handler below is set, failures here abort inside MPI (MPI's default).
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  initialised_ = true;
  // Errors come back as codes (check_mpi turns them into exceptions with MPI's text).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_FUNNELED) {
    std::fprintf(stderr, "rtm: error: the MPI library gives no MPI_THREAD_FUNNELED support, which "
                         "the OpenMP-threaded CPU backend needs\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

MpiRuntime::~MpiRuntime() {
  if (initialised_ && mpi_active()) MPI_Finalize();
}

void abort_all_ranks_if_parallel(int code) {
  if (world_size() > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
}

ParallelContext::ParallelContext(int ranks_per_shot) {
  if (ranks_per_shot < 1)
    throw InputError("--ranks-per-shot must be at least 1, got " + std::to_string(ranks_per_shot));
  uses_mpi_ = mpi_active();
  if (uses_mpi_) {
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  if (size_ % ranks_per_shot != 0)
    throw InputError("--ranks-per-shot " + std::to_string(ranks_per_shot) + " does not divide the " +
                     std::to_string(size_) + " MPI rank(s): every shot group needs the same number "
                     "of ranks; launch a multiple of " + std::to_string(ranks_per_shot) + " ranks");
  ranks_per_shot_ = ranks_per_shot;
  if (!uses_mpi_) return;

  // Ranks sharing a node's memory are the ranks sharing its GPUs.
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);

  // Consecutive ranks form a group: with a launcher that fills nodes in order (the default of
  // mpirun and srun), a group's ranks share a node and its fast links whenever R divides the
  // ranks per node.
  MPI_Comm group = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(MPI_COMM_WORLD, group_index(), rank_, &group), "MPI_Comm_split (groups)");
  if (ranks_per_shot_ > 1) group_ = group;
  else MPI_Comm_free(&group);
  check_mpi(MPI_Comm_split(MPI_COMM_WORLD, is_leader() ? 0 : MPI_UNDEFINED, rank_, &leaders_),
            "MPI_Comm_split (leaders)");
}

ParallelContext::~ParallelContext() {
  if (!mpi_active()) return;
  if (group_ != MPI_COMM_NULL) MPI_Comm_free(&group_);
  if (leaders_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_);
}

void ParallelContext::abort(int code) const {
  abort_all_ranks_if_parallel(code);
  std::exit(code);
}

std::string ParallelContext::who() const {
  if (size_ == 1) return "";
  return "rank " + std::to_string(rank_) + " (group " + std::to_string(group_index()) + " of " +
         std::to_string(group_count()) + ")";
}

} // namespace rtm
