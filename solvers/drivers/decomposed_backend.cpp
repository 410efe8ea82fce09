#include "solvers/drivers/decomposed_backend.h"

#include <algorithm>
#include <string>
#include <utility>

#include "kernels/mpi/decomposed_propagator.h"
#include "kernels/mpi/halo_exchange.h"
#include "solvers/contracts/errors.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/halo_exchange_cuda.h"
#endif

namespace rtm {

std::vector<std::string> halo_transports(const std::string& backend) {
  if (backend == "cpu") return {"mpi"};
#ifdef RTM_HAVE_CUDA
  return cuda::halo_transports();
#else
  return {};
#endif
}

std::unique_ptr<Propagator> make_decomposed_propagator(const PropagatorSetup& setup,
                                                       const BackendOptions& options, MPI_Comm group,
                                                       std::ostream& log) {
  int size = 1;
  if (group != MPI_COMM_NULL) MPI_Comm_size(group, &size);
  if (size == 1) return make_propagator(setup, options, log);

  const std::string backend = resolve_backend(options.backend, log);
  const std::vector<std::string> offered = halo_transports(backend);
  std::string transport = options.halo_transport;
  if (transport == "auto") {
    if (offered.empty()) throw InputError("no halo transport for the " + backend + " backend in this build");
    transport = offered.front();
  } else if (std::find(offered.begin(), offered.end(), transport) == offered.end()) {
    std::string list;
    for (const std::string& t : offered) list += (list.empty() ? "" : ", ") + t;
    throw InputError("--halo-transport " + transport + ": not available for the " + backend +
                     " backend here; expected auto" + (list.empty() ? "" : " or " + list));
  }
  BackendOptions local_options = options;
  local_options.backend = backend;
  auto make_local = [&](const PropagatorSetup& local) { return make_propagator(local, local_options, log); };
  auto make_exchange = [&](Propagator& local, const HaloPlan& plan) -> std::unique_ptr<HaloExchange> {
    if (transport == "mpi") return make_host_mpi_exchange(local, plan);
#ifdef RTM_HAVE_CUDA
    return cuda::make_halo_exchange(transport, local, plan);
#else
    throw InputError("--halo-transport " + transport + ": this build has no CUDA kernels");
#endif
  };
  return std::make_unique<DecomposedPropagator>(setup, group, make_local, make_exchange);
}

} // namespace rtm
