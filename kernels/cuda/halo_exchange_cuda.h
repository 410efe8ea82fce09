// The GPU halo transports (kernels/cuda/halo_exchange_cuda.cu): the MPI layer's HaloExchange
// (kernels/mpi/halo_exchange.h) between GPU wavefields. Plain C++: no CUDA types.
#pragma once

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
// A GPU transport by name (one of halo_transports()); collective over plan.comm.
std::unique_ptr<HaloExchange> make_halo_exchange(const std::string& name, Propagator& local,
                                                 const HaloPlan& plan);
} // namespace cuda

} // namespace rtm
