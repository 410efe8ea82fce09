// Choosing where the wave steps run: the CPU reference or a CUDA variant.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "solvers/contracts/physics.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/tuning.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

struct BackendOptions {
  std::string backend = "auto"; // auto | cpu | cuda
  std::string variant = "auto"; // a CUDA variant name, or auto (the fastest on this grid)
  bool compressible = false;    // CUDA: compressible wavefield allocations
  bool l2_persist = false;      // CUDA: L2 persisting access-policy window
  // How the z-slabs of a grid shared by several ranks trade halo planes: auto (the fastest this
  // build offers), mpi (CPU), nccl, mpi-cuda-aware, mpi-staged (GPUs); kernels/mpi/decomposed_propagator.h.
  std::string halo_transport = "auto";
  int device = 0; // CUDA: the GPU this rank uses (per MPI rank: solvers/drivers/shot_parallel.h)
};

// True when this build contains the CUDA kernels.
bool cuda_built();
// True when the CUDA kernels are built and a usable GPU is present; otherwise `why` says why not.
bool cuda_usable(std::string* why = nullptr);

// "cpu" or "cuda" for a requested backend. "auto" picks cuda when usable and says on `log` when it
// falls back to the CPU; "cuda" without a usable GPU throws InputError with the reason.
std::string resolve_backend(const std::string& requested, std::ostream& log);

// Refuses (InputError listing the known names) a --variant that is neither auto, cpu nor a name
// of the CUDA variant table (cuda::find_variant: a kernel or a preset, with optional memory
// options); in a build without CUDA only auto and cpu are accepted.
void check_variant_name(const std::string& variant);

// Free memory, in bytes, of GPU `device` for a run on `backend` ("cpu" or "cuda", resolved); 0
// on the CPU backend (nothing to check). For tests of the memory check on a machine
// without a GPU, the environment variable RTM_FAKE_FREE_GPU_BYTES (a positive integer) replaces
// the device's figure, and makes even a CPU run check the device side as if it ran on such a GPU.
uint64_t free_device_bytes(const std::string& backend, int device = 0);

// Bytes per wavefield element the variant stores on the device: 2 for a half-precision variant,
// 4 otherwise ("auto" only picks float32 kernels; "cpu", and any name in a build without CUDA, 4).
// An unknown name is refused as check_variant_name() does.
int wavefield_element_bytes(const std::string& variant);
// True for a variant whose wavefields are block floating point (bfp16: an exponent byte per 16
// elements besides the 2-byte mantissas, v2dt2 in float32); false for "auto", "cpu" and any name in
// a build without CUDA.
bool wavefield_block_exponents(const std::string& variant);
// Device bytes per cell of the second v2dt2 a variant keeps for its step kernel (half_v2dt2: 2,
// bfp16_model16: 2 + 1/16); 0 for every other variant, "auto", "cpu" and a build without CUDA.
double kernel_model_copy_bytes(const std::string& variant);
// Refuses (InputError naming the kernel, the capability it needs, the GPU's and the kernels that
// run there), before a run starts, an acoustic CUDA kernel that GPU `device` is too old for
// (tma_ring and half_v2dt2 need 9.0). Nothing for auto (it times only what runs there), cpu, the
// TTI variants, or a build without CUDA. Call it where the run uses the CUDA backend.
void check_variant_runs_here(const std::string& variant, int device);
// Refuses (InputError naming the variant and what it supports), before a run starts, a block
// floating point variant (bfp16, bfp16_model16) asked for what it does not offer: migration or
// Born (`migration`), the C-PML (`cpml`), the `physics` stepped (TTI). Nothing for any other
// variant.
void check_variant_operations(const std::string& variant, bool migration, bool cpml,
                              Physics physics, const std::string& context);

// Checks the variant name (on every machine, not only where the GPU is used), resolves the backend
// and says on `log` what of the options does not apply: "cpu" or "cuda". Throws InputError for a
// variant the chosen backend cannot run.
std::string choose_backend(const BackendOptions& options, std::ostream& log);

// The wavefield the options ask for (the backend already resolved or "auto"): for modeling.
std::unique_ptr<Wavefield> make_wavefield(const PropagatorSetup& setup, const BackendOptions& options,
                                          std::ostream& log);
// A shot's source and receiver fields, both of one backend and kernel ("auto" chooses once), with
// the image and the Born perturbation: for migration and Born modeling.
std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup,
                                             const BackendOptions& options, std::ostream& log);

// Before a CUDA field of `variant` is made: for "auto", hands the process's tuning cache
// (solvers/drivers/tuning_cache.h) to the CUDA backend, which then looks its choice up before
// timing the kernels and remembers what it timed. Said once on `log` when there is none for a
// reason other than RTM_TUNING_CACHE=off. Nothing in a build without CUDA.
void use_tuning_cache_for(const std::string& variant, std::ostream& log);
// What this process's --variant auto choices cost so far (all zero without CUDA): for --profile.
AutotuneTotals autotune_totals();

} // namespace rtm
