// The one explicit table of CUDA kernels (no self-registration), and the presets: a new kernel is a
// new kernel file plus a new row here (docs/variants.md, "How to add a kernel").
//
// Bytes per cell: the least device-memory traffic of one step, read p[n], p[n-1] and v2dt2 and
// write p[n+1] once each: 4 arrays x 4 bytes = 16 in float32, 4 x 2 = 8 in half precision,
// 3 x 4 + 2 = 14 with float32 wavefields and v2dt2 read as half; bfp16 (block floating point:
// an int16 per value and an exponent byte per 16) 3 x (2 + 1/16) + 4 = 10.1875 with a float32 v2dt2,
// 4 x (2 + 1/16) = 8.25 with v2dt2 in 16 bits and an exponent per 16 too (bfp16_model16).
// Flops per cell, counted from the stencil with a fused multiply-add as two operations:
//   lap  = c0 p                                  1 multiply
//        + 3 axes x 4 radii x w_r (p[-r] + p[+r])  12 x (1 add + 1 multiply + 1 add) = 36
//   next = 2 p - p[n-1] + v2dt2 lap              1 multiply, 1 subtract, 1 multiply, 1 add = 4
//   total 41 (the damped step adds 6 more; the benchmark runs undamped).
#include "kernels/cuda/steps/variant_table.cuh"

#include <stdexcept>

#include "solvers/contracts/closest_name.h"
#include "solvers/contracts/errors.h"

namespace rtm::cuda {

// The launchers, each defined in kernels/cuda/<name>.cu (the signature every launcher has).
using StepFunction = void(const WaveStepArgs& args, cudaStream_t stream);
StepFunction launch_naive_32x32;
StepFunction launch_blockz_128x8;
StepFunction launch_async_prefetch;
StepFunction launch_regqueue_vec4;
StepFunction launch_tma_ring;
StepFunction launch_fp16_storage;
StepFunction launch_half_v2dt2;
StepFunction launch_bfp16;
StepFunction launch_bfp16_model16;

namespace {

constexpr int kArraysPerCell = 4; // p[n], p[n-1], v2dt2 read; p[n+1] written
constexpr double kFlops = 1 + 12 * 3 + 4;

// `kernel_model`: the type of the v2dt2 the step kernel reads, when not `storage`.
VariantRow kernel(const char* name, VariantRole role, Storage storage, StepLauncher launch,
                  const char* description, Storage kernel_model) {
  VariantRow r;
  r.info.name = name;
  r.info.description = description;
  r.info.role = role;
  r.info.storage = storage == Storage::fp32 ? "float32" : storage == Storage::fp16 ? "half" : "bfp16";
  // bfp16's own model is float32 (cuda_propagator.cuh, model_storage()).
  const Storage own_model = storage == Storage::bfp16 ? Storage::fp32 : storage;
  if (kernel_model != own_model)
    r.info.storage += kernel_model == Storage::fp32   ? "+float32_v2dt2"
                      : kernel_model == Storage::fp16 ? "+half_v2dt2"
                                                      : "+u16_v2dt2";
  r.info.element_bytes = storage == Storage::fp32 ? 4 : 2;
  r.info.model_bytes = kernel_model == Storage::fp32 ? 4 : 2;
  // bfp16: each value's int16 and 1/16 of its block's exponent byte.
  // bfp16_model16's v2dt2 too (Storage::bfp16 as a kernel model: unsigned 16-bit mantissas).
  const double exponent_bytes = storage == Storage::bfp16 ? 1.0 / 16 : 0.0;
  const double model_exponent_bytes = kernel_model == Storage::bfp16 ? 1.0 / 16 : 0.0;
  r.info.bytes_per_cell = (kArraysPerCell - 1) * (r.info.element_bytes + exponent_bytes) +
                          r.info.model_bytes + model_exponent_bytes;
  r.info.model_copy_bytes = kernel_model != own_model ? r.info.model_bytes + model_exponent_bytes : 0.0;
  r.info.flops_per_cell = kFlops;
  // bfp16's codec runs inside the step kernels alone: no imaging, box copy or C-PML kernel reads
  // its blocks (kernels/cuda/fields/cuda_propagator.cu, refuse_for_bfp16).
  r.info.block_floating_point = storage == Storage::bfp16;
  r.info.supports_migration = r.info.supports_cpml = r.info.supports_tti = !r.info.block_floating_point;
  r.storage = storage;
  r.kernel_model = kernel_model;
  r.launch = launch;
  return r;
}
VariantRow kernel(const char* name, VariantRole role, Storage storage, StepLauncher launch,
                  const char* description) {
  return kernel(name, role, storage, launch, description, storage);
}
// A row fed by Hopper's bulk tensor copy (bulk_tensor_copy.cuh): compute capability 9.0 or later.
VariantRow needs_bulk_copy(VariantRow row) {
  row.info.min_compute_capability = 90;
  return row;
}

std::vector<VariantRow> build_rows() {
  using R = VariantRole;
  return {
      kernel("naive_32x32", R::baseline, Storage::fp32, launch_naive_32x32,
             "32x32 blocks over x-y, each thread walks all of z; 25 global loads per cell"),
      kernel("blockz_128x8", R::other, Storage::fp32, launch_blockz_128x8,
             "128x8 blocks, blockIdx.z splits z into 16-plane chunks; 25 global loads per cell"),
      kernel("async_prefetch", R::other, Storage::fp32, launch_async_prefetch,
             "32x16 x-y tile in shared memory, z in registers, planes prefetched with cp.async"),
      kernel("regqueue_vec4", R::other, Storage::fp32, launch_regqueue_vec4,
             "64x16 tile, 4 cells/thread, 16-byte accesses, z register queue, loads 2 planes ahead"),
      // best_fp32: the fastest float32 kernel measured (docs/variants.md); move the role to
      // another row when measurements put that one ahead.
      needs_bulk_copy(kernel("tma_ring", R::best_fp32, Storage::fp32, launch_tma_ring,
             "register-queue stencil fed by Hopper bulk tensor copies into an 8-plane shared ring")),
      kernel("fp16_storage", R::half_storage, Storage::fp16, launch_fp16_storage,
             "register-queue kernel on half-precision wavefields and v2dt2, float arithmetic"),
      needs_bulk_copy(kernel("half_v2dt2", R::other, Storage::fp32, launch_half_v2dt2,
             "tma_ring on float32 wavefields with v2dt2 read as half: 14 bytes per cell",
             Storage::fp16)),
      kernel("bfp16", R::other, Storage::bfp16, launch_bfp16,
             "register-queue kernel on block floating point wavefields (int16 + an exponent per "
             "16 cells), float32 v2dt2 and arithmetic: 10.19 bytes per cell", Storage::fp32),
      kernel("bfp16_model16", R::other, Storage::bfp16, launch_bfp16_model16,
             "bfp16 with v2dt2 read as unsigned 16-bit mantissas and an exponent per 16 cells: "
             "8.25 bytes per cell", Storage::bfp16),
  };
}

// The seeds' memory-option names, kept selectable: the best float32 kernel with one option on.
std::vector<VariantPreset> build_presets() {
  return {
      {"compressible", VariantRole::best_fp32, {true, false},
       "the best float32 kernel with the wavefields in compressible memory (cuMemCreate)"},
      {"l2_persist", VariantRole::best_fp32, {false, true},
       "the best float32 kernel with an L2 persisting window over v2dt2"},
  };
}

// The memory options as they are spelt after a '+' in a variant name.
constexpr const char* kCompressible = "compressible";
constexpr const char* kL2Persist = "l2_persist";

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

[[noreturn]] void unknown(const std::string& name, const std::string& what,
                          const std::vector<std::string>& other_names,
                          const std::vector<std::string>& candidates) {
  std::vector<std::string> kernels, presets;
  for (const VariantInfo& v : variant_table()) kernels.push_back(v.name);
  for (const VariantPreset& p : variant_presets()) presets.push_back(p.name);
  std::string message = "unknown variant '" + name + "'" + what + "; expected ";
  if (!other_names.empty()) message += joined(other_names) + ", ";
  message += "a kernel (" + joined(kernels) + ") or a preset (" + joined(presets) +
             "), either optionally followed by memory options (+" + kCompressible + ", +" +
             kL2Persist + ")";
  const std::string guess = closest_name(name, candidates);
  if (!guess.empty()) message += "; did you mean " + guess + "?";
  throw std::invalid_argument(message);
}

} // namespace

const std::vector<VariantRow>& variant_rows() {
  static const std::vector<VariantRow> rows = build_rows();
  return rows;
}

const std::vector<VariantInfo>& variant_table() {
  static const std::vector<VariantInfo> table = [] {
    std::vector<VariantInfo> infos;
    for (const VariantRow& r : variant_rows()) infos.push_back(r.info);
    return infos;
  }();
  return table;
}

const VariantRow& row_of(const VariantInfo& kernel) {
  const std::vector<VariantInfo>& table = variant_table();
  for (size_t i = 0; i < table.size(); ++i)
    if (&table[i] == &kernel) return variant_rows()[i];
  throw std::logic_error("row_of: '" + kernel.name + "' is not a row of variant_table()");
}

const std::vector<VariantPreset>& variant_presets() {
  static const std::vector<VariantPreset> presets = build_presets();
  return presets;
}

const char* variant_role_name(VariantRole role) {
  switch (role) {
  case VariantRole::baseline: return "baseline";
  case VariantRole::best_fp32: return "best_fp32";
  case VariantRole::half_storage: return "half_storage";
  case VariantRole::other: return "other";
  }
  return "?";
}

MemoryOptions combined(const MemoryOptions& a, const MemoryOptions& b) {
  return {a.compressible || b.compressible, a.l2_persist || b.l2_persist};
}

std::string memory_options_name(const MemoryOptions& options) {
  std::string s;
  if (options.compressible) s += kCompressible;
  if (options.l2_persist) s += std::string(s.empty() ? "" : "+") + kL2Persist;
  return s;
}

const VariantInfo* variant_with_role(VariantRole role) {
  for (const VariantInfo& v : variant_table())
    if (v.role == role) return &v;
  return nullptr;
}

std::vector<const VariantInfo*> auto_candidates(int compute_capability) {
  std::vector<const VariantInfo*> candidates;
  for (const VariantInfo& v : variant_table())
    if (row_of(v).storage == Storage::fp32 && row_of(v).kernel_model == Storage::fp32 &&
        v.min_compute_capability <= compute_capability)
      candidates.push_back(&v);
  return candidates;
}

int compute_capability(const DeviceInfo& device) { return device.cc_major * 10 + device.cc_minor; }

std::string why_not_on(const VariantInfo& kernel, const DeviceInfo& device) {
  const int have = compute_capability(device);
  if (kernel.min_compute_capability <= have) return "";
  std::vector<std::string> here;
  for (const VariantInfo& v : variant_table())
    if (v.min_compute_capability <= have) here.push_back(v.name);
  const auto dotted = [](int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); };
  return kernel.name + " needs compute capability " + dotted(kernel.min_compute_capability) +
         " or later (" + (kernel.min_compute_capability >= 90 ? "Hopper's bulk tensor copy" : "its instructions") +
         "); GPU " + std::to_string(device.device) + " (" + device.name + ") is " + dotted(have) +
         (device.compute_capability_faked ? " as RTM_FAKE_COMPUTE_CAPABILITY sets it" : "") +
         "; the kernels that run there: " + joined(here) + ", or auto";
}

void check_runs_on(const VariantInfo& kernel, const DeviceInfo& device, const std::string& what) {
  const std::string why = why_not_on(kernel, device);
  if (!why.empty()) throw InputError("--variant " + what + ": " + why);
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const VariantInfo& v : variant_table()) names.push_back(v.name);
  for (const VariantPreset& p : variant_presets()) names.push_back(p.name);
  return names;
}

VariantSelection find_variant(const std::string& name, const std::vector<std::string>& other_names) {
  // "kernel-or-preset[+option...]"
  const size_t plus = name.find('+');
  const std::string base = name.substr(0, plus);
  std::vector<std::string> candidates = other_names;
  for (const std::string& n : variant_names()) candidates.push_back(n);
  VariantSelection chosen;
  for (const VariantInfo& v : variant_table())
    if (v.name == base) chosen.kernel = &v;
  for (const VariantPreset& p : variant_presets()) {
    if (chosen.kernel || p.name != base) continue;
    chosen.kernel = variant_with_role(p.kernel_role);
    if (!chosen.kernel)
      throw std::logic_error("preset " + p.name + ": the variant table has no " +
                             variant_role_name(p.kernel_role) + " kernel");
    chosen.memory = p.memory;
  }
  if (!chosen.kernel) unknown(name, "", other_names, candidates);
  for (size_t at = plus; at != std::string::npos;) {
    const size_t next = name.find('+', at + 1);
    const std::string option = name.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    if (option == kCompressible) {
      chosen.memory.compressible = true;
    } else if (option == kL2Persist) {
      chosen.memory.l2_persist = true;
    } else {
      std::vector<std::string> spelt;
      for (const char* o : {kCompressible, kL2Persist}) spelt.push_back(name.substr(0, at + 1) + o);
      unknown(name, " ('" + option + "' is no memory option)", other_names, spelt);
    }
    at = next;
  }
  return chosen;
}

} // namespace rtm::cuda
