// The CUDA backend as host code sees it: plain C++ declarations, no CUDA types.
// Compiled only where a CUDA compiler exists (RTM_HAVE_CUDA); solvers/drivers/backend.cpp guards its use.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/util/device_info.h" // DeviceInfo, query_device, visible_device_count
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/tuning.h"
#include "solvers/contracts/wavefield.h"

namespace rtm::cuda {

// Bytes held by this process's live device buffers (kernels/cuda/util/device_buffer.cuh), all devices:
// exact, unlike the device's free memory, which other processes and the allocator move. For tests
// of what an owner gives back.
size_t live_device_buffer_bytes();

// Memory options any kernel takes (docs/variants.md): compressible allocations of the wavefields
// and an L2 persisting access-policy window over v2dt2.
struct MemoryOptions {
  bool compressible = false;
  bool l2_persist = false;
};
// Both sets of options at once (an option is on when either set turns it on).
MemoryOptions combined(const MemoryOptions& a, const MemoryOptions& b);
// "compressible", "l2_persist", "compressible+l2_persist", or "" for none: the suffix a variant
// name takes ("regqueue_vec4+l2_persist").
std::string memory_options_name(const MemoryOptions& options);

// What a kernel is for. The table has exactly one baseline and one best_fp32, both in float32
// storage, and at most one half_storage kernel (tests/test_variant_table.cpp holds the rules).
enum class VariantRole {
  baseline,     // the speed-up baseline and error reference of `rtm bench`
  best_fp32,    // the fastest float32 kernel as measured: the kernel the memory presets run
  half_storage, // the half-precision storage kernel, compared with best_fp32
  other,        // another technique, benched and (in float32) timed by `auto`
};
const char* variant_role_name(VariantRole role); // "baseline", "best_fp32", ...

// One row of the variant table: a kernel (kernels/cuda/steps/variant_table.cu).
struct VariantInfo {
  std::string name;          // the kernel, defined in kernels/cuda/<name>.cu
  std::string description;
  VariantRole role = VariantRole::other;
  std::string storage;       // element type of the wavefields and v2dt2: "float32" or "half", or
                             // "float32+half_v2dt2": float32 fields, v2dt2 read as half by the step
  int element_bytes = 4;     // bytes per element of the wavefields: 4 float32, 2 half
  int model_bytes = 4;       // bytes per element of the v2dt2 the step kernel reads
  // Device bytes per cell of the second v2dt2 kept beside the propagator's own when the step kernel
  // reads another type (half_v2dt2: half, bfp16_model16: 16-bit mantissas and exponents); 0 if none.
  double model_copy_bytes = 0;
  double bytes_per_cell = 0; // device-memory traffic per cell per step at the ideal: 4 arrays
                             // (3 x element_bytes + model_bytes)
  double flops_per_cell = 0;
  // Block floating point wavefields (bfp16): int16 mantissas and an exponent byte per 16 values.
  bool block_floating_point = false;
  // What the wavefield storage offers besides isotropic modeling on one GPU with the sponge:
  // migration and Born (imaging, box copies, boundary stores), the C-PML, TTI. The check of a run
  // against its row (solvers/drivers/backend.h, check_variant_operations) reads these.
  bool supports_migration = true, supports_cpml = true, supports_tti = true;
  // The lowest compute capability the kernel runs on, as major * 10 + minor: 90 for the kernels
  // fed by Hopper's bulk tensor copy, 80 (the oldest the build makes code for) for the others.
  int min_compute_capability = 80;
};
const std::vector<VariantInfo>& variant_table();

// A device's compute capability as major * 10 + minor (90 for an H100 or H200, 86 for an RTX 30).
int compute_capability(const DeviceInfo& device);
// "" when `kernel` runs on `device`; otherwise why not, naming the kernel, what it needs, what the
// device is, and the kernels that do run there.
std::string why_not_on(const VariantInfo& kernel, const DeviceInfo& device);
// Throws rtm::InputError with why_not_on's text, prefixed by `what` (the variant as the user spelt
// it), when `kernel` does not run on `device`. Checked before anything is allocated.
void check_runs_on(const VariantInfo& kernel, const DeviceInfo& device, const std::string& what);

// A preset: a name for a kernel (by its role) with memory options, e.g. `compressible`.
struct VariantPreset {
  std::string name;
  VariantRole kernel_role;
  MemoryOptions memory;
  std::string description;
};
const std::vector<VariantPreset>& variant_presets();

// The kernel with `role`; nullptr when the table has none.
const VariantInfo* variant_with_role(VariantRole role);
// The kernels `--variant auto` times on a GPU of `compute_capability`: every float32 row that runs
// there, in table order (half storage changes the answer, so it is chosen only by name).
std::vector<const VariantInfo*> auto_candidates(int compute_capability);

// A variant name resolved: the kernel it runs and the memory options it turns on itself.
struct VariantSelection {
  const VariantInfo* kernel = nullptr;
  MemoryOptions memory;
};
// The one lookup of a variant by name: a kernel ("regqueue_vec4"), a preset ("compressible"), either
// followed by memory options ("naive_32x32+compressible+l2_persist", the form propagator names
// take). Anything else throws std::invalid_argument naming the known kernels, presets and options,
// with the closest known name when one is close; `other_names` are the names the caller accepts
// besides (such as auto), listed first in that message.
VariantSelection find_variant(const std::string& name,
                              const std::vector<std::string>& other_names = {"auto"});
// Every kernel name, then every preset name.
std::vector<std::string> variant_names();

// Creates a wavefield running `variant` (a name find_variant() knows, or "auto"). Throws
// std::invalid_argument for an unknown name and std::runtime_error with a clear message for a grid
// that does not fit in free device memory (both numbers in the message). A memory option the
// device lacks falls back to ordinary memory with a message on stderr.
// "auto" times the float32 kernels that run on this GPU for a few steps on this very grid (random
// wavefields) and keeps the fastest; it says which it chose, with the times, on `log` when given.
// A kernel the GPU is too old for is refused (rtm::InputError, check_runs_on) before any
// allocation.
// The options combine with those the name turns on (e.g. the preset compressible + l2_persist).
std::unique_ptr<Wavefield> make_wavefield(const PropagatorSetup& setup, const std::string& variant,
                                          const MemoryOptions& options, int device = 0,
                                          std::ostream* log = nullptr);
// A shot's source and receiver fields (solvers/contracts/shot_fields.h) on one GPU, both running the same
// kernel with the same memory options: "auto" chooses once, for the source field.
std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup, const std::string& variant,
                                             const MemoryOptions& options, int device = 0,
                                             std::ostream* log = nullptr);

// The tuning cache "auto" consults (solvers/contracts/tuning.h; the drivers' file,
// solvers/drivers/tuning_cache.h): when set, every auto choice of this process looks its key up
// before timing and, when it timed, tells the cache its choice. The caller keeps the cache alive
// while it is set; nullptr (the default): none, every choice times.
void use_tuning_cache(TuningCache* cache);
// What this process's auto choices cost so far.
AutotuneTotals autotune_totals();

} // namespace rtm::cuda
