// MPI for the shot level of parallelism (docs/parallel.md): who this process is among the ranks,
// which GPU of its node it owns, and which group of ranks it computes shots with.
//
// A plain `rtm` run never touches MPI: MpiRuntime initialises MPI only when the process was started
// by an MPI launcher (mpirun, mpiexec, srun with PMI), and a ParallelContext without MPI is one rank
// of one group. So every command runs the same code with one rank or many.
#pragma once

#include <string>

#include <mpi.h>

namespace rtm {

// True when an MPI launcher started this process (it set OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK,
// PMI_SIZE, MPI_LOCALNRANKS or MV2_COMM_WORLD_SIZE in the environment).
bool launched_by_mpi_launcher();

// True between MPI_Init and MPI_Finalize.
bool mpi_active();

// The number of ranks: MPI_COMM_WORLD's size while MPI is active, else 1.
int world_size();
int world_rank();

// Owns MPI initialisation for the whole process: app/main.cpp creates one before anything else.
// Under a launcher it calls MPI_Init_thread(MPI_THREAD_FUNNELED) (OpenMP threads compute, only the
// main thread calls MPI) and MPI_Finalize when it goes out of scope; otherwise it does nothing.
class MpiRuntime {
public:
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

private:
  bool initialised_ = false;
};

// Ends every rank at once, with `code` as the exit status, when an error was raised on some ranks
// only (the others would wait forever in their next collective call). Returns normally when MPI is
// not active or only one rank runs: the caller then returns `code` from main itself.
void abort_all_ranks_if_parallel(int code);

// The ranks seen by one command, grouped for shots: `ranks_per_shot` consecutive world ranks form a
// shot group that computes one shot at a time together (R > 1: one model split over R GPUs); the
// groups share the shots out dynamically (solvers/drivers/shot_parallel.h). Owns its communicators.
class ParallelContext {
public:
  // One rank, no MPI: tests and library callers.
  ParallelContext() = default;
  // From MPI_COMM_WORLD when MPI is active (collective: every rank must construct it), else one
  // rank. InputError when ranks_per_shot < 1 or does not divide the number of ranks.
  explicit ParallelContext(int ranks_per_shot);
  ~ParallelContext();
  ParallelContext(const ParallelContext&) = delete;
  ParallelContext& operator=(const ParallelContext&) = delete;

  bool uses_mpi() const { return uses_mpi_; }
  int rank() const { return rank_; }               // in MPI_COMM_WORLD
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }      // world rank 0: reads checkpoints, writes files
  int local_rank() const { return local_rank_; }   // among the ranks on this node
  int local_size() const { return local_size_; }

  int ranks_per_shot() const { return ranks_per_shot_; }
  int group_index() const { return rank_ / ranks_per_shot_; }
  int group_count() const { return size_ / ranks_per_shot_; }
  int group_rank() const { return rank_ % ranks_per_shot_; }
  bool is_leader() const { return group_rank() == 0; }
  // The ranks of this shot group; MPI_COMM_NULL when a group is one rank (nothing to talk about).
  MPI_Comm group_comm() const { return group_; }
  // The group leaders (world rank r * ranks_per_shot); MPI_COMM_NULL on the other ranks and without
  // MPI. Its rank 0 is world rank 0.
  MPI_Comm leaders_comm() const { return leaders_; }
  MPI_Comm world_comm() const { return uses_mpi_ ? MPI_COMM_WORLD : MPI_COMM_NULL; }

  // MPI_Abort over every rank (see abort_all_ranks_if_parallel); without MPI, std::exit(code).
  [[noreturn]] void abort(int code) const;

  // "rank 2 (group 1 of 3)" for messages; "" with one rank, so single-rank output is unchanged.
  std::string who() const;

private:
  bool uses_mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, ranks_per_shot_ = 1;
  MPI_Comm group_ = MPI_COMM_NULL, leaders_ = MPI_COMM_NULL;
};

// Throws std::runtime_error naming `what` when an MPI call did not return MPI_SUCCESS (with the
// error string MPI gives).
void check_mpi(int status, const char* what);

} // namespace rtm
