// The GPU halo transports (kernels/cuda/halo/halo_exchange_cuda.cu): the MPI layer's HaloExchange
// (kernels/mpi/halo_exchange.h) between GPU wavefields. Plain C++: no CUDA types.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kernels/mpi/halo_exchange.h"
#include "solvers/contracts/propagator.h"

namespace rtm {

namespace cuda {
// The transports this build offers for GPU wavefields, fastest first: "nccl" (built with NCCL),
// "mpi-cuda-aware" (when MPIX_Query_cuda_support() says the MPI library takes device pointers),
// "mpi-staged" (always: MPI through pinned host buffers). Defined in halo_exchange_cuda.cu, so
// only in builds with the CUDA kernels.
std::vector<std::string> halo_transports();
// The CUDA backend's slab fields with a GPU transport by name (one of halo_transports()): the
// wavefield options as cuda::make_wavefield / make_shot_fields take them (kernels/cuda/cuda_backend.h).
// A setup with TTI coefficients gets the TTI fields (kernels/cuda/tti/cuda_tti_wavefield.cuh; `variant`
// then a TTI variant name, `memory` unused), whose messages are plan.planes (kTtiRing) planes of
// the interleaved (p, q). Collective over plan.comm.
struct MemoryOptions;
SlabWavefield make_slab_wavefield(const PropagatorSetup& local, const std::string& variant,
                                  const MemoryOptions& memory, int device, std::ostream* log,
                                  const std::string& transport, const HaloPlan& plan);
SlabShotFields make_slab_shot_fields(const PropagatorSetup& local, const std::string& variant,
                                     const MemoryOptions& memory, int device, std::ostream* log,
                                     const std::string& transport, const HaloPlan& plan);
} // namespace cuda

} // namespace rtm
