#include "solvers/drivers/backend.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/errors.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/tti_setup.h"
#include "solvers/drivers/tuning_cache.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/tti_backend.h"
#endif

namespace rtm {

bool cuda_built() {
#ifdef RTM_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_usable(std::string* why) {
#ifdef RTM_HAVE_CUDA
  const cuda::DeviceInfo info = cuda::query_device();
  if (!info.available && why) *why = info.why_unavailable;
  return info.available;
#else
  if (why) *why = "this build of rtm has no CUDA kernels (configured without a CUDA compiler)";
  return false;
#endif
}

std::string resolve_backend(const std::string& requested, std::ostream& log) {
  if (requested == "cpu") return "cpu";
  if (requested != "auto" && requested != "cuda")
    throw InputError("--backend: expected auto, cpu or cuda, got '" + requested + "'");
  std::string why;
  if (cuda_usable(&why)) return "cuda";
  if (requested == "cuda") throw InputError("--backend cuda: no usable GPU: " + why);
  // One short line, said on every run of a machine without a GPU: the reason's first clause
  // ("no CUDA device is visible"); `rtm info` gives the whole of it.
  const std::string brief = why.substr(0, std::min(why.find(" ("), why.find(';')));
  log << "rtm: no usable GPU (" << brief << "): using the CPU; `rtm info` says more\n";
  return "cpu";
}

#ifdef RTM_HAVE_CUDA
namespace {
// The CUDA variant table's lookup, its refusal as bad input (naming the TTI variants too).
cuda::VariantSelection find_cuda_variant(const std::string& variant) {
  try {
    std::vector<std::string> others = {"auto", "cpu"};
    for (const std::string& name : cuda::tti_variant_names()) others.push_back(name);
    return cuda::find_variant(variant, others);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--variant: ") + e.what());
  }
}

// The acoustic kernel's row of the table; nullptr for "auto" and "cpu" (float32 kernels only) and
// the TTI variants (float32 fields, their own model arrays).
const cuda::VariantInfo* acoustic_kernel(const std::string& variant) {
  if (variant == "auto" || variant == "cpu" || cuda::is_tti_variant(variant)) return nullptr;
  return find_cuda_variant(variant).kernel;
}
} // namespace
#endif

void check_variant_name(const std::string& variant) {
  if (variant == "auto" || variant == "cpu") return;
#ifdef RTM_HAVE_CUDA
  if (cuda::is_tti_variant(variant)) return; // the TTI step's kernels (--physics tti)
  find_cuda_variant(variant);
#else
  // Without the CUDA kernels the table of variant names is not in the program, so a name cannot be
  // told from a typo; and no CUDA variant could run anyway.
  throw InputError("--variant '" + variant +
                   "': this build of rtm has no CUDA kernels (configured without a CUDA "
                   "compiler); expected auto or cpu");
#endif
}

uint64_t free_device_bytes(const std::string& backend, int device) {
  if (const char* fake = std::getenv("RTM_FAKE_FREE_GPU_BYTES")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long bytes = std::strtoull(fake, &end, 10);
    if (end == fake || *end != '\0' || errno == ERANGE || bytes == 0 || fake[0] == '-')
      throw InputError(std::string("RTM_FAKE_FREE_GPU_BYTES: expected a positive number of bytes, "
                                   "got '") + fake + "'");
    return uint64_t(bytes);
  }
  if (backend != "cuda") return 0;
#ifdef RTM_HAVE_CUDA
  const cuda::DeviceInfo info = cuda::query_device(device);
  return info.available ? uint64_t(info.free_mem_bytes) : 0;
#else
  (void)device;
  return 0;
#endif
}

int wavefield_element_bytes(const std::string& variant) {
#ifdef RTM_HAVE_CUDA
  if (const cuda::VariantInfo* kernel = acoustic_kernel(variant)) return kernel->element_bytes;
#endif
  (void)variant;
  return 4;
}

bool wavefield_block_exponents(const std::string& variant) {
#ifdef RTM_HAVE_CUDA
  if (const cuda::VariantInfo* kernel = acoustic_kernel(variant)) return kernel->block_floating_point;
#endif
  (void)variant;
  return false;
}

double kernel_model_copy_bytes(const std::string& variant) {
#ifdef RTM_HAVE_CUDA
  if (const cuda::VariantInfo* kernel = acoustic_kernel(variant)) return kernel->model_copy_bytes;
#endif
  (void)variant;
  return 0;
}

void check_variant_runs_here(const std::string& variant, int device) {
#ifdef RTM_HAVE_CUDA
  if (const cuda::VariantInfo* kernel = acoustic_kernel(variant))
    cuda::check_runs_on(*kernel, cuda::query_device(device), variant);
#endif
  (void)variant;
  (void)device;
}

void check_variant_operations(const std::string& variant, bool migration, bool cpml,
                              Physics physics, const std::string& context) {
#ifdef RTM_HAVE_CUDA
  const cuda::VariantInfo* kernel = acoustic_kernel(variant);
  if (!kernel) return;
  // The row's columns decide (kernels/cuda/steps/variant_table.cu); the first operation it lacks is named.
  const char* what = migration && !kernel->supports_migration
                         ? "migration and Born modeling (imaging, box copies, boundary stores)"
                     : cpml && !kernel->supports_cpml ? "the C-PML (use --absorber sponge)"
                     : physics == Physics::tti && !kernel->supports_tti ? "TTI physics"
                                                      : nullptr;
  if (!what) return;
  throw InputError(context + ": --variant " + variant + " (" +
                   (kernel->block_floating_point ? "block floating point" : kernel->storage) +
                   " wavefields) does not support " + what +
                   "; it supports isotropic modeling (rtm model) with --absorber sponge on one GPU "
                   "per shot, and rtm bench. Choose a float32 variant (tma_ring, auto) for this run");
#else
  (void)variant, (void)migration, (void)cpml, (void)physics, (void)context;
#endif
}

std::string choose_backend(const BackendOptions& options, std::ostream& log) {
  // Checked before the backend is chosen: a misspelt name is an error on every machine, not only
  // on those where the GPU is used.
  check_variant_name(options.variant);
  const std::string backend = resolve_backend(options.backend, log);
  if (backend == "cpu") {
    if (options.variant != "auto" && options.variant != "cpu")
      log << "rtm: --variant " << options.variant << " applies to the CUDA backend only; ignored\n";
    return backend;
  }
#ifdef RTM_HAVE_CUDA
  if (options.variant == "cpu")
    throw InputError("--variant cpu runs the CPU reference, but --backend chose cuda; use "
                     "--backend cpu, or --variant auto or a CUDA variant name");
  if (cuda::is_tti_variant(options.variant))
    throw InputError("--variant " + options.variant +
                     " is a kernel of the TTI step: it runs with --physics tti; this run is "
                     "isotropic (use --variant auto or an acoustic variant name)");
  return backend;
#else
  throw InputError("--backend cuda: this build has no CUDA kernels");
#endif
}

std::unique_ptr<Wavefield> make_wavefield(const PropagatorSetup& setup, const BackendOptions& options,
                                          std::ostream& log) {
  if (physics_of(setup) == Physics::tti) // solvers/drivers/tti_setup.h
    return make_tti_wavefield(setup, options, log);
  if (choose_backend(options, log) == "cpu") return std::make_unique<CpuWavefield>(setup);
#ifdef RTM_HAVE_CUDA
  // "auto" times the float32 kernels on this grid (or finds them timed in the tuning cache) and
  // reports its choice on `log`.
  use_tuning_cache_for(options.variant, log);
  return cuda::make_wavefield(setup, options.variant, {options.compressible, options.l2_persist},
                              options.device, &log);
#else
  throw std::logic_error("make_wavefield: no CUDA backend in this build");
#endif
}

std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup,
                                             const BackendOptions& options, std::ostream& log) {
  if (physics_of(setup) == Physics::tti) return make_tti_shot_fields(setup, options, log);
  if (choose_backend(options, log) == "cpu") return std::make_unique<CpuShotFields>(setup);
#ifdef RTM_HAVE_CUDA
  use_tuning_cache_for(options.variant, log);
  return cuda::make_shot_fields(setup, options.variant, {options.compressible, options.l2_persist},
                                options.device, &log);
#else
  throw std::logic_error("make_shot_fields: no CUDA backend in this build");
#endif
}

void use_tuning_cache_for(const std::string& variant, std::ostream& log) {
#ifdef RTM_HAVE_CUDA
  if (variant != "auto") return;
  std::string why_none;
  TuningCache* cache = process_tuning_cache(&why_none);
  static bool said = false; // once per process
  if (!cache && !said && why_none.rfind("RTM_TUNING_CACHE=", 0) != 0) {
    log << "rtm: --variant auto: no tuning cache (" << why_none << "): the kernels are timed\n";
    said = true;
  }
  cuda::use_tuning_cache(cache);
#else
  (void)variant, (void)log;
#endif
}

AutotuneTotals autotune_totals() {
#ifdef RTM_HAVE_CUDA
  return cuda::autotune_totals();
#else
  return {};
#endif
}

} // namespace rtm
