#include "solvers/drivers/shot_parallel.h"

#include "solvers/drivers/decomposed_backend.h"

#include <algorithm>
#include <cstdio>
#include <streambuf>
#include <string>

#include "solvers/contracts/errors.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace rtm {

int gpu_for_local_rank(int local_rank, int local_ranks, int gpus, bool allow_sharing) {
  if (gpus < 1) throw InputError("--backend cuda: no CUDA device is visible to this rank");
  if (local_ranks > gpus && !allow_sharing)
    throw InputError(std::to_string(local_ranks) + " MPI ranks run on this node but it has " +
                     std::to_string(gpus) + " visible GPU(s): launch at most " +
                     std::to_string(gpus) + " ranks per node (e.g. mpirun --npernode " +
                     std::to_string(gpus) + "), or pass --allow-gpu-sharing to let ranks share "
                     "GPUs round-robin");
  return local_rank % gpus;
}

void place_on_device(BackendOptions& options, const ParallelContext& parallel,
                     const ParallelOptions& parallel_options, std::ostream& log) {
  check_variant_name(options.variant);
  options.backend = resolve_backend(options.backend, log);
  if (options.backend != "cuda") return;
#ifdef RTM_HAVE_CUDA
  options.device = gpu_for_local_rank(parallel.local_rank(), parallel.local_size(),
                                      cuda::visible_device_count(),
                                      parallel_options.allow_gpu_sharing);
#else
  (void)parallel;
  (void)parallel_options;
#endif
}

std::unique_ptr<Wavefield> make_shot_wavefield(const PropagatorSetup& setup,
                                               const BackendOptions& options,
                                               const ParallelContext& parallel, std::ostream& log) {
  if (parallel.ranks_per_shot() == 1) return make_wavefield(setup, options, log);
  // A group of several ranks: one model split along z over the group (kernels/mpi/decomposed_propagator.h).
  return make_decomposed_wavefield(setup, options, parallel.group_comm(), log);
}

std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup,
                                             const BackendOptions& options,
                                             const ParallelContext& parallel, std::ostream& log) {
  if (parallel.ranks_per_shot() == 1) return make_shot_fields(setup, options, log);
  return make_decomposed_shot_fields(setup, options, parallel.group_comm(), log);
}

ShotDispenser::ShotDispenser(const ParallelContext& parallel, int count)
    : parallel_(parallel), count_(count) {
  if (!parallel_.uses_mpi()) return;
  const MPI_Aint bytes = parallel_.is_root() ? MPI_Aint(sizeof(int64_t)) : 0;
  check_mpi(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter_,
                             &window_),
            "MPI_Win_allocate (shot counter)");
  if (parallel_.is_root()) {
    // A local store into window memory belongs in an access epoch on its own window.
    check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, window_), "MPI_Win_lock");
    *counter_ = 0;
    check_mpi(MPI_Win_unlock(0, window_), "MPI_Win_unlock");
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); // nobody takes a shot before it is 0
}

ShotDispenser::~ShotDispenser() {
  if (window_ != MPI_WIN_NULL && mpi_active()) MPI_Win_free(&window_);
}

namespace {
// What a stop adds to the counter: far past any shot count, so that every later fetch finds
// nothing left and stop_group can tell a stop from a run that handed out its last shot.
constexpr int64_t kStopped = int64_t(1) << 40;
} // namespace

int ShotDispenser::next(bool stop) {
  int64_t taken = count_;
  if (parallel_.is_leader()) {
    if (!parallel_.uses_mpi()) {
      if (stop) local_next_ = count_;
      taken = local_next_ < count_ ? local_next_++ : count_;
    } else {
      // Stopping sets the counter far past the end: every later fetch finds nothing left.
      const int64_t operand = stop ? kStopped : 1;
      check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_), "MPI_Win_lock (shot counter)");
      check_mpi(MPI_Fetch_and_op(&operand, &taken, MPI_INT64_T, 0, 0, MPI_SUM, window_),
                "MPI_Fetch_and_op (shot counter)");
      check_mpi(MPI_Win_unlock(0, window_), "MPI_Win_unlock (shot counter)");
      if (stop) taken = count_;
    }
  }
  int shot = taken < count_ ? int(taken) : -1;
  if (parallel_.group_comm() != MPI_COMM_NULL)
    check_mpi(MPI_Bcast(&shot, 1, MPI_INT, 0, parallel_.group_comm()), "MPI_Bcast (shot number)");
  return shot;
}

bool ShotDispenser::stop_group(bool stop) {
  int flag = parallel_.is_leader() && stop ? 1 : 0;
  if (parallel_.is_leader() && flag == 0 && parallel_.uses_mpi()) {
    // Another group's stop emptied the counter (next(true) added kStopped): this group stops at
    // this boundary too, as a group taking its number here would have found none left.
    const int64_t nothing = 0;
    int64_t seen = 0;
    check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_), "MPI_Win_lock (shot counter)");
    check_mpi(MPI_Fetch_and_op(&nothing, &seen, MPI_INT64_T, 0, 0, MPI_NO_OP, window_),
              "MPI_Fetch_and_op (shot counter)");
    check_mpi(MPI_Win_unlock(0, window_), "MPI_Win_unlock (shot counter)");
    flag = seen >= kStopped ? 1 : 0;
  }
  if (parallel_.group_comm() != MPI_COMM_NULL)
    check_mpi(MPI_Bcast(&flag, 1, MPI_INT, 0, parallel_.group_comm()), "MPI_Bcast (stop request)");
  if (flag != 0) next(true); // every rank of the group calls it: it is collective too
  return flag != 0;
}

int agree_on_stop(const ParallelContext& parallel, int local_signal) {
  int agreed = local_signal;
  if (parallel.uses_mpi())
    check_mpi(MPI_Allreduce(&local_signal, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
              "MPI_Allreduce (stop request)");
  return agreed;
}

std::string shot_progress_line(const ParallelContext& parallel, const char* verb, int shot,
                               int done_here, int done_before, int total, double elapsed_s,
                               double gcells_per_s) {
  char line[256];
  if (parallel.size() == 1) {
    const int done = done_before + done_here;
    const double left = done_here > 0 ? elapsed_s / done_here * (total - done) : 0.0;
    std::snprintf(line, sizeof line, "rtm: %s shot %d/%d, %.2f Gcells/s, %.1f s elapsed, ~%.1f s left\n",
                  verb, done, total, gcells_per_s, elapsed_s, left);
  } else {
    std::snprintf(line, sizeof line, "rtm: %s %s shot %d (%d by this group), %.2f Gcells/s, %.1f s elapsed\n",
                  parallel.who().c_str(), verb, shot, done_here, gcells_per_s, elapsed_s);
  }
  return line;
}

namespace {
// Elements per MPI call: far below INT_MAX, large enough that the calls cost nothing extra.
constexpr size_t kMpiPiece = size_t(1) << 26;
} // namespace

void sum_to_root(std::vector<float>& values, MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  for (size_t first = 0; first < values.size(); first += kMpiPiece) {
    const int count = int(std::min(kMpiPiece, values.size() - first));
    float* piece = values.data() + first;
    check_mpi(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : piece, piece, count, MPI_FLOAT, MPI_SUM, 0, comm),
              "MPI_Reduce (partial images)");
  }
}

void broadcast_from_root(std::vector<float>& values, MPI_Comm comm) {
  for (size_t first = 0; first < values.size(); first += kMpiPiece) {
    const int count = int(std::min(kMpiPiece, values.size() - first));
    check_mpi(MPI_Bcast(values.data() + first, count, MPI_FLOAT, 0, comm), "MPI_Bcast (image)");
  }
}

std::ostream& null_stream() {
  struct NullBuffer : std::streambuf {
    int overflow(int c) override { return traits_type::not_eof(c); }
  };
  static NullBuffer buffer;
  static std::ostream stream(&buffer);
  return stream;
}

} // namespace rtm
