// The propagator for the ranks of one shot group: the backend's own when the group is one rank,
// else a DecomposedPropagator (kernels/mpi/decomposed_propagator.h) over the backend the options
// pick, with the halo transport they ask for. A driver's job: it chooses among the backends.
#pragma once

#include <mpi.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/contracts/propagator.h"
#include "solvers/drivers/backend.h"

namespace rtm {

// The halo transports a backend offers here ("mpi" for the CPU; cuda::halo_transports() for GPUs).
std::vector<std::string> halo_transports(const std::string& backend);

// The propagator for a group of ranks sharing one grid: the backend's own propagator when the
// group has one rank, a DecomposedPropagator otherwise. `options.halo_transport` picks the
// transport ("auto": the first of halo_transports(), the fastest). Collective over `group`.
std::unique_ptr<Propagator> make_decomposed_propagator(const PropagatorSetup& setup,
                                                       const BackendOptions& options, MPI_Comm group,
                                                       std::ostream& log);

} // namespace rtm
