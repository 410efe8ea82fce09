// Halo exchange between the z-slabs of a decomposed grid (kernels/mpi/decomposed_propagator.h).
//
// Each rank's wavefield holds its own planes plus kHalo "ghost" planes copied from each
// neighbour. A step computes the own edge planes first, then start() sends them to the neighbours
// and receives theirs into the ghost planes while the interior planes are computed, and finish()
// completes the exchange before the step ends. Plain C++ (MPI, no CUDA types): the CPU transport is
// host MPI, the GPU transports (NCCL, MPI through pinned host buffers, CUDA-aware MPI) live in
// kernels/cuda/halo/halo_exchange_cuda.cu (declared in kernels/cuda/halo_exchange_cuda.h).
#pragma once

#include <mpi.h>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

// Who this rank trades planes with, and which local planes (of the wavefield's own grid) go
// where. Every message is `planes` whole padded planes: the slab's ghost width (kHalo for the
// isotropic step, kTtiRing = 2 kHalo for the TTI step, whose two passes reach that far).
struct HaloPlan {
  MPI_Comm comm = MPI_COMM_NULL; // the ranks sharing one grid
  int rank_below = -1;           // neighbour holding the planes below (smaller z); -1: none
  int rank_above = -1;           // neighbour above; -1: none
  int send_below = 0, recv_below = 0; // first local plane of each message to / from below
  int send_above = 0, recv_above = 0; // ... to / from above
  int planes = kHalo;                  // planes per message (last: aggregate initialisers above)
};

class HaloExchange {
public:
  virtual ~HaloExchange() = default;
  virtual std::string name() const = 0;
  // Starts the exchange of the field the wavefield is computing (Wavefield::next_field_planes):
  // called once its edge planes are computed (on a GPU: queued) and before the interior is.
  virtual void start() = 0;
  // Completes it: afterwards the ghost planes hold the neighbours' edge planes (on a GPU, for all
  // work queued after this call on the wavefield's stream).
  virtual void finish() = 0;
};

// A slab's local wavefield and its transport, made together by the backend: the transport knows
// the wavefield's real type (a GPU transport runs on the wavefield's stream), so nobody casts.
struct SlabWavefield {
  std::unique_ptr<Wavefield> field;
  std::unique_ptr<HaloExchange> exchange;
};
// The same for a shot's pair of fields: one transport for each.
struct SlabShotFields {
  std::unique_ptr<ShotFields> fields;
  std::unique_ptr<HaloExchange> source_exchange, receiver_exchange;
};

// Host MPI between host arrays (the CPU backend): nonblocking sends and receives straight from
// and into the wavefield, completed by finish(). (kernels/mpi/halo_exchange.cpp)
std::unique_ptr<HaloExchange> make_host_mpi_exchange(Wavefield& local, const HaloPlan& plan);


} // namespace rtm
