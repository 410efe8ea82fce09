// The one explicit table of CUDA variants (no self-registration): a new variant is a new kernel
// file plus a new row here.
//
// Bytes per cell: the least device-memory traffic of one step, read p[n], p[n-1] and v2dt2 and
// write p[n+1] once each: 4 x 4 = 16 bytes in float32, 4 x 2 = 8 bytes in half precision.
// Flops per cell, counted from the stencil with a fused multiply-add as two operations:
//   lap  = c0 p                                  1 multiply
//        + 3 axes x 4 radii x w_r (p[-r] + p[+r])  12 x (1 add + 1 multiply + 1 add) = 36
//   next = 2 p - p[n-1] + v2dt2 lap              1 multiply, 1 subtract, 1 multiply, 1 add = 4
//   total 41 (the damped step adds 6 more; the benchmark runs undamped).
#include "kernels/cuda/variant_table.cuh"

#include <stdexcept>

namespace rtm::cuda {
namespace {

constexpr double kFp32Bytes = 4 * 4;
constexpr double kFp16Bytes = 4 * 2;
constexpr double kFlops = 1 + 12 * 3 + 4;

// The kernel that the memory-option presets (compressible, l2_persist) run: the fastest float32
// kernel we have. Change both lines if measurements show another one ahead.
constexpr StepLauncher kBestFp32 = launch_regqueue_vec4;
constexpr const char* kBestFp32Name = "regqueue_vec4";

std::vector<VariantRow> build_rows() {
  auto row = [](const char* name, const char* kernel, const char* description, Storage storage,
                StepLauncher launch, MemoryOptions preset) {
    VariantRow r;
    r.info.name = name;
    r.info.kernel = kernel;
    r.info.description = description;
    r.info.bytes_per_cell = storage == Storage::fp32 ? kFp32Bytes : kFp16Bytes;
    r.info.element_bytes = storage == Storage::fp32 ? 4 : 2;
    r.info.flops_per_cell = kFlops;
    r.info.preset = preset;
    r.storage = storage;
    r.launch = launch;
    return r;
  };
  const MemoryOptions none{};
  const MemoryOptions compressed{true, false};
  const MemoryOptions persisting{false, true};
  return {
      row("naive_32x32", "naive_32x32",
          "32x32 blocks over x-y, each thread walks all of z; 25 global loads per cell",
          Storage::fp32, launch_naive_32x32, none),
      row("blockz_128x8", "blockz_128x8",
          "128x8 blocks, blockIdx.z splits z into 16-plane chunks; 25 global loads per cell",
          Storage::fp32, launch_blockz_128x8, none),
      row("async_prefetch", "async_prefetch",
          "32x16 x-y tile in shared memory, z in registers, planes prefetched with cp.async",
          Storage::fp32, launch_async_prefetch, none),
      row("regqueue_vec4", "regqueue_vec4",
          "64x16 tile, 4 cells/thread, 16-byte accesses, z register queue, loads 2 planes ahead",
          Storage::fp32, launch_regqueue_vec4, none),
      row("compressible", kBestFp32Name,
          "the best float32 kernel with the wavefields in compressible memory (cuMemCreate)",
          Storage::fp32, kBestFp32, compressed),
      row("l2_persist", kBestFp32Name,
          "the best float32 kernel with an L2 persisting window over v2dt2",
          Storage::fp32, kBestFp32, persisting),
      row("fp16_storage", "fp16_storage",
          "register-queue kernel on half-precision wavefields and v2dt2, float arithmetic",
          Storage::fp16, launch_fp16_storage, none),
  };
}

} // namespace

const std::vector<VariantRow>& variant_rows() {
  static const std::vector<VariantRow> rows = build_rows();
  return rows;
}

const VariantRow& find_variant_row(const std::string& name) {
  std::string known;
  for (const VariantRow& r : variant_rows()) {
    if (r.info.name == name) return r;
    known += (known.empty() ? "" : ", ") + r.info.name;
  }
  throw std::invalid_argument("unknown CUDA variant '" + name + "' (known: " + known + ", auto)");
}

std::vector<const VariantRow*> auto_candidates() {
  std::vector<const VariantRow*> candidates;
  for (const VariantRow& r : variant_rows())
    if (r.storage == Storage::fp32 && !r.info.preset.compressible && !r.info.preset.l2_persist)
      candidates.push_back(&r);
  return candidates;
}

const std::vector<VariantInfo>& variant_table() {
  static const std::vector<VariantInfo> table = [] {
    std::vector<VariantInfo> infos;
    for (const VariantRow& r : variant_rows()) infos.push_back(r.info);
    return infos;
  }();
  return table;
}

} // namespace rtm::cuda
