#include "solvers/drivers/decomposed_backend.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cpu/tti_propagator.h"
#include "kernels/mpi/halo_exchange.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/physics.h"
#include "solvers/drivers/tti_setup.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
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

namespace {

// What a slab's fields are made with: the backend ("cpu" or "cuda"), the variant the backend gets
// (the options' own, or for TTI the TTI variant tti_setup.h chose) and the transport, checked. The
// transports send the plan's ghost width (kHalo, or kTtiRing for TTI) on either backend.
struct SlabChoice {
  std::string backend, variant, transport;
};

SlabChoice backend_and_transport(const BackendOptions& options, Physics physics, std::ostream& log) {
  std::string backend, variant = options.variant;
  if (physics == Physics::tti) {
    const TtiBackend choice = tti_backend(options, log);
    backend = choice.backend;
    variant = choice.variant;
  } else {
    backend = choose_backend(options, log);
  }
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
  return {backend, variant, transport};
}

#ifdef RTM_HAVE_CUDA
cuda::MemoryOptions memory_options(const BackendOptions& options) {
  return {options.compressible, options.l2_persist};
}
#endif

} // namespace

std::unique_ptr<DecomposedWavefield> make_decomposed_wavefield(const PropagatorSetup& setup,
                                                               const BackendOptions& options,
                                                               MPI_Comm group, std::ostream& log) {
  std::ostringstream quiet; // checked before the collective split; said below
  backend_and_transport(options, physics_of(setup), quiet);
  return make_decomposed_wavefield(std::make_shared<SlabDecomposition>(setup, group), options, log);
}

std::unique_ptr<DecomposedWavefield> make_decomposed_wavefield(
    std::shared_ptr<SlabDecomposition> d, const BackendOptions& options, std::ostream& log) {
  const SlabChoice choice = backend_and_transport(options, physics_of(d->local_setup()), log);
  SlabWavefield local;
  if (choice.backend == "cpu") {
    if (physics_of(d->local_setup()) == Physics::acoustic)
      local.field = std::make_unique<CpuWavefield>(d->local_setup());
    else local.field = std::make_unique<CpuTtiWavefield>(d->local_setup());
    local.exchange = make_host_mpi_exchange(*local.field, d->plan());
  } else {
#ifdef RTM_HAVE_CUDA
    use_tuning_cache_for(choice.variant, log);
    local = cuda::make_slab_wavefield(d->local_setup(), choice.variant, memory_options(options),
                                      options.device, &log, choice.transport, d->plan());
#endif
  }
  d->release_model_term(); // the field keeps its own copy
  Wavefield& field = *local.field;
  return std::make_unique<DecomposedWavefield>(std::move(d), field, std::move(local.exchange),
                                               std::move(local.field));
}

std::unique_ptr<DecomposedShotFields> make_decomposed_shot_fields(const PropagatorSetup& setup,
                                                                  const BackendOptions& options,
                                                                  MPI_Comm group, std::ostream& log) {
  std::ostringstream quiet; // checked before the collective split; said below
  backend_and_transport(options, physics_of(setup), quiet);
  return make_decomposed_shot_fields(std::make_shared<SlabDecomposition>(setup, group), options, log);
}

std::unique_ptr<DecomposedShotFields> make_decomposed_shot_fields(
    std::shared_ptr<SlabDecomposition> d, const BackendOptions& options, std::ostream& log) {
  const SlabChoice choice = backend_and_transport(options, physics_of(d->local_setup()), log);
  SlabShotFields local;
  if (choice.backend == "cpu") {
    if (physics_of(d->local_setup()) == Physics::acoustic)
      local.fields = std::make_unique<CpuShotFields>(d->local_setup());
    else local.fields = std::make_unique<CpuTtiShotFields>(d->local_setup());
    local.source_exchange = make_host_mpi_exchange(local.fields->source(), d->plan());
    local.receiver_exchange = make_host_mpi_exchange(local.fields->receiver(), d->plan());
  } else {
#ifdef RTM_HAVE_CUDA
    use_tuning_cache_for(choice.variant, log);
    local = cuda::make_slab_shot_fields(d->local_setup(), choice.variant, memory_options(options),
                                        options.device, &log, choice.transport, d->plan());
#endif
  }
  d->release_model_term();
  return std::make_unique<DecomposedShotFields>(std::move(d), std::move(local));
}

std::unique_ptr<Wavefield> make_group_wavefield(const PropagatorSetup& setup,
                                                const BackendOptions& options, MPI_Comm group,
                                                std::ostream& log) {
  int size = 1;
  if (group != MPI_COMM_NULL) MPI_Comm_size(group, &size);
  if (size == 1) return make_wavefield(setup, options, log);
  return make_decomposed_wavefield(setup, options, group, log);
}

std::unique_ptr<ShotFields> make_group_shot_fields(const PropagatorSetup& setup,
                                                   const BackendOptions& options, MPI_Comm group,
                                                   std::ostream& log) {
  int size = 1;
  if (group != MPI_COMM_NULL) MPI_Comm_size(group, &size);
  if (size == 1) return make_shot_fields(setup, options, log);
  return make_decomposed_shot_fields(setup, options, group, log);
}

} // namespace rtm
