// Halo exchange between the z-slabs of a decomposed grid (kernels/mpi/decomposed_propagator.h).
//
// Each rank's propagator holds its own planes plus kHalo "ghost" planes copied from each
// neighbour. A step computes the own edge planes first, then start() sends them to the neighbours
// and receives theirs into the ghost planes while the interior planes are computed, and finish()
// completes the exchange before the step ends. Plain C++ (MPI, no CUDA types): the CPU transport is
// host MPI, the GPU transports (NCCL, MPI through pinned host buffers, CUDA-aware MPI) live in
// kernels/cuda/halo_exchange_cuda.cu (declared in kernels/cuda/halo_exchange_cuda.h).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "solvers/contracts/propagator.h"

namespace rtm {

// Who this rank trades planes with, and which local planes (of the propagator's own grid) go
// where. Every message is kHalo whole padded planes.
struct HaloPlan {
  MPI_Comm comm = MPI_COMM_NULL; // the ranks sharing one grid
  int rank_below = -1;           // neighbour holding the planes below (smaller z); -1: none
  int rank_above = -1;           // neighbour above; -1: none
  int send_below = 0, recv_below = 0; // first local plane of each message to / from below
  int send_above = 0, recv_above = 0; // ... to / from above
};

class HaloExchange {
public:
  virtual ~HaloExchange() = default;
  virtual std::string name() const = 0;
  // Starts the exchange of the field the propagator is computing (Propagator::next_field_planes):
  // called once its edge planes are computed (on a GPU: queued) and before the interior is.
  virtual void start() = 0;
  // Completes it: afterwards the ghost planes hold the neighbours' edge planes (on a GPU, for all
  // work queued after this call on the propagator's stream).
  virtual void finish() = 0;
};

// Host MPI between host arrays (the CPU backend): nonblocking sends and receives straight from
// and into the wavefield, completed by finish(). (kernels/mpi/halo_exchange.cpp)
std::unique_ptr<HaloExchange> make_host_mpi_exchange(Propagator& local, const HaloPlan& plan);

} // namespace rtm
