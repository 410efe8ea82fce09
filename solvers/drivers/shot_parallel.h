// The shot level of parallelism (docs/parallel.md): shot groups of ranks take shots one at a time
// from a shared counter, so shots of uneven cost balance themselves; each rank drives the GPU its
// node-local rank names; the fields of a shot are made in one place (make_shot_wavefield,
// make_shot_fields).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/drivers/backend.h"
#include "kernels/mpi/mpi_context.h"

namespace rtm {

// Options of the parallel run that app/options.h exposes (--ranks-per-shot, --allow-gpu-sharing).
struct ParallelOptions {
  int ranks_per_shot = 1;         // ranks computing one shot together (one model over R GPUs)
  bool allow_gpu_sharing = false; // more ranks on a node than GPUs: ranks share GPUs round-robin
};

// The GPU of the rank with node-local rank `local_rank` among `local_ranks` ranks on a node with
// `gpus` visible GPUs: the local rank itself. More ranks than GPUs is an InputError naming both
// numbers, unless sharing is allowed (then local_rank % gpus).
int gpu_for_local_rank(int local_rank, int local_ranks, int gpus, bool allow_sharing);

// Resolves options.backend ("auto" becomes "cpu" or "cuda", said on `log`) and, for the CUDA
// backend, sets options.device by gpu_for_local_rank. Every rank must call it before making a
// propagator. The CPU backend needs no device and is not checked.
void place_on_device(BackendOptions& options, const ParallelContext& parallel,
                     const ParallelOptions& parallel_options, std::ostream& log);

// The wavefield of one shot (modeling) and a shot's source and receiver fields (migration): the
// backend's own for a group of one rank; a group of R > 1 ranks shares one model split along z
// (domain decomposition, kernels/mpi/decomposed_propagator.h).
std::unique_ptr<Wavefield> make_shot_wavefield(const PropagatorSetup& setup,
                                               const BackendOptions& options,
                                               const ParallelContext& parallel, std::ostream& log);
std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup,
                                             const BackendOptions& options,
                                             const ParallelContext& parallel, std::ostream& log);

// Hands out the numbers 0 .. count-1 once each, first come first served, to the shot groups.
// With MPI the counter lives in an MPI window on world rank 0; each group's leader takes the next
// number with MPI_Fetch_and_op (one-sided: rank 0 need not be listening) and broadcasts it in its
// group, so every rank of a group computes the same shots in the same order.
class ShotDispenser {
public:
  // Collective over all ranks.
  ShotDispenser(const ParallelContext& parallel, int count);
  ~ShotDispenser(); // collective too (MPI_Win_free)
  ShotDispenser(const ShotDispenser&) = delete;
  ShotDispenser& operator=(const ShotDispenser&) = delete;

  // Collective over the shot group: the next number for this group, or -1 when none is left.
  // A leader with `stop` set takes nothing and empties the counter for every group, so the whole
  // run stops at its next shot boundary (each group finishes the shot it is computing).
  int next(bool stop);
  // Collective over the shot group: whether the group must stop here, its leader's `stop` set or
  // another group's stop having emptied the counter (every rank of the group gets the leader's
  // answer). Then the counter is emptied as next(true) does. For a group holding a number taken
  // ahead (run_shot_loop with ShotLoopBody::prepare_shot): it drops it, and every group stops at
  // its next shot boundary, as with next().
  bool stop_group(bool stop);

private:
  const ParallelContext& parallel_;
  int count_ = 0;
  int64_t local_next_ = 0;       // the counter without MPI
  MPI_Win window_ = MPI_WIN_NULL;
  int64_t* counter_ = nullptr;   // the window's memory (world rank 0 only)
};

// The signal that stopped some rank (solvers' stop requests carry a signal number), agreed over
// every rank: the largest `local_signal`, 0 when no rank was asked to stop. Collective.
int agree_on_stop(const ParallelContext& parallel, int local_signal);

// One progress line (ending in a newline) for a finished shot: with one rank
//   "rtm: <verb> shot 3/10, 1.20 Gcells/s, 4.1 s elapsed, ~9.6 s left"
// counting `done_before` (resumed) and `done_here`; with several ranks
//   "rtm: rank 2 (group 1 of 3) <verb> shot 7 (3 by this group), 1.20 Gcells/s, 4.1 s elapsed".
std::string shot_progress_line(const ParallelContext& parallel, const char* verb, int shot,
                               int done_here, int done_before, int total, double elapsed_s,
                               double gcells_per_s);

// MPI_Reduce(MPI_SUM) of `values` onto rank 0 of `comm` (in place there), in pieces small enough
// for MPI's int counts. Collective over `comm`.
void sum_to_root(std::vector<float>& values, MPI_Comm comm);
// MPI_Bcast of `values` (sized alike on every rank) from rank 0 of `comm`, in pieces.
void broadcast_from_root(std::vector<float>& values, MPI_Comm comm);

// A stream that discards everything: the log of ranks that should stay quiet.
std::ostream& null_stream();

} // namespace rtm
