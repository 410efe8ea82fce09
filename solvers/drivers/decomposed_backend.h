// The fields for the ranks of one shot group: the backend's own when the group is one rank, else
// z-slabs (kernels/mpi/decomposed_propagator.h) over the backend the options pick, with the halo
// transport they ask for. A driver's job: it chooses among the backends.
#pragma once

#include <mpi.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/mpi/decomposed_propagator.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"
#include "solvers/drivers/backend.h"

namespace rtm {

// The halo transports a backend offers here ("mpi" for the CPU; cuda::halo_transports() for GPUs).
std::vector<std::string> halo_transports(const std::string& backend);

// The z-slab fields for a group of ranks sharing one grid: the backend makes each slab's fields
// together with their halo transport. `options.halo_transport` picks the transport ("auto": the
// first of halo_transports(), the fastest). Collective over `group`.
std::unique_ptr<DecomposedWavefield> make_decomposed_wavefield(const PropagatorSetup& setup,
                                                               const BackendOptions& options,
                                                               MPI_Comm group, std::ostream& log);
std::unique_ptr<DecomposedShotFields> make_decomposed_shot_fields(const PropagatorSetup& setup,
                                                                  const BackendOptions& options,
                                                                  MPI_Comm group, std::ostream& log);
// The wavefield and the shot fields of a decomposition made beforehand (make_slab_decomposition in
// solvers/drivers/slab_model.h: each rank's slab built from its part of the model alone).
std::unique_ptr<DecomposedWavefield> make_decomposed_wavefield(
    std::shared_ptr<SlabDecomposition> decomposition, const BackendOptions& options,
    std::ostream& log);
std::unique_ptr<DecomposedShotFields> make_decomposed_shot_fields(
    std::shared_ptr<SlabDecomposition> decomposition, const BackendOptions& options,
    std::ostream& log);

// The same, except that a group of one rank (or none, MPI_COMM_NULL) gets the backend's own fields.
std::unique_ptr<Wavefield> make_group_wavefield(const PropagatorSetup& setup,
                                                const BackendOptions& options, MPI_Comm group,
                                                std::ostream& log);
std::unique_ptr<ShotFields> make_group_shot_fields(const PropagatorSetup& setup,
                                                   const BackendOptions& options, MPI_Comm group,
                                                   std::ostream& log);

} // namespace rtm
