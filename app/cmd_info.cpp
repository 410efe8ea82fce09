// rtm info: the build, the CPU side, and the GPU with its measured memory bandwidth; --json prints
// the same facts as one JSON object (for scripts).
#include <cstdio>
#include <memory>
#include <omp.h>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/memory_budget.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/bench.h"
#include "kernels/cuda/cuda_backend.h"
#endif

namespace rtm::app {
namespace {

void print_info(bool json) {
  nlohmann::json j;
  j["version"] = "0.1.0";
#ifdef NDEBUG
  j["build"] = "release";
#else
  j["build"] = "debug";
#endif
  j["cuda_kernels_built"] = cuda_built();
  j["cpu_threads"] = omp_get_max_threads();
  if (!json) {
    std::printf("rtm 0.1.0\n");
    std::printf("  build        : %s, CUDA kernels %s\n", j["build"].get<std::string>().c_str(),
                cuda_built() ? "built" : "not built (CPU backend only)");
    std::printf("  CPU backend  : OpenMP, %d threads\n", omp_get_max_threads());
  }
#ifdef RTM_HAVE_CUDA
  const cuda::DeviceInfo d = cuda::query_device();
  nlohmann::json& gpu = j["gpu"];
  gpu["available"] = d.available;
  if (!d.available) {
    gpu["why_unavailable"] = d.why_unavailable;
    if (json) std::printf("%s\n", j.dump(2).c_str());
    else std::printf("  GPU          : none usable (%s)\n", d.why_unavailable.c_str());
    return;
  }
  gpu["device"] = d.device;
  gpu["name"] = d.name;
  gpu["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  // What RTM_FAKE_COMPUTE_CAPABILITY lowered, said wherever the capability is.
  const std::string real_capability =
      std::to_string(d.real_cc_major) + "." + std::to_string(d.real_cc_minor);
  if (d.compute_capability_faked) gpu["real_compute_capability"] = real_capability;
  gpu["sm_count"] = d.sm_count;
  gpu["memory_total_bytes"] = d.global_mem_bytes;
  gpu["memory_free_bytes"] = d.free_mem_bytes;
  gpu["l2_bytes"] = d.l2_bytes;
  gpu["max_persisting_l2_bytes"] = d.max_persisting_l2_bytes;
  gpu["generic_compression"] = d.generic_compression;
  if (d.theoretical_bandwidth_gbs > 0) gpu["theoretical_bandwidth_gbs"] = d.theoretical_bandwidth_gbs;
  const double measured = cuda::measure_device_copy_gbs(d.device);
  gpu["measured_copy_bandwidth_gbs"] = measured;
  gpu["cuda_runtime"] = d.runtime_version;
  gpu["cuda_driver"] = d.driver_version;
  if (json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("  GPU %d        : %s, compute capability %d.%d%s, %d SMs\n", d.device, d.name.c_str(),
              d.cc_major, d.cc_minor,
              d.compute_capability_faked
                  ? (" (RTM_FAKE_COMPUTE_CAPABILITY; the GPU's own is " + real_capability + ")").c_str()
                  : "",
              d.sm_count);
  std::printf("  memory       : %.1f GiB total, %.1f GiB free\n", d.global_mem_bytes / 1073741824.0,
              d.free_mem_bytes / 1073741824.0);
  std::printf("  L2           : %.1f MB (persisting up to %.1f MB)\n", d.l2_bytes / 1e6,
              d.max_persisting_l2_bytes / 1e6);
  std::printf("  compression  : %s\n", d.generic_compression ? "generic compression supported" : "not supported");
  if (d.theoretical_bandwidth_gbs > 0)
    std::printf("  bandwidth    : %.0f GB/s theoretical (2 x memory clock x bus width)\n",
                d.theoretical_bandwidth_gbs);
  std::printf("  measured     : %.0f GB/s device-to-device copy (bytes read + written, 1 GiB)\n",
              measured);
  std::printf("  CUDA         : runtime %s, driver %s\n", d.runtime_version.c_str(),
              d.driver_version.c_str());
#else
  j["gpu"] = {{"available", false}, {"why_unavailable", "this build has no CUDA kernels"}};
  if (json) std::printf("%s\n", j.dump(2).c_str());
  else std::printf("  GPU          : this build has no CUDA kernels\n");
#endif
}

// The migration plan of an n^3 model inside 20-cell C-PML layers, boundary saving, float32 fields,
// `steps` time steps, 10 000 receivers, over `ranks` ranks per shot.
RunMemoryPlan cube_plan(int n, int steps, int ranks) {
  constexpr int kLayer = 20;
  RunMemoryPlan plan;
  plan.layout = make_layout(n + 2 * kLayer, n + 2 * kLayer, n + 2 * kLayer);
  plan.box = Box{kLayer, kLayer + n, kLayer, kLayer + n, kLayer, kLayer + n};
  plan.nt = steps;
  plan.receivers = 10000;
  plan.cpml = true;
  plan.migration = true;
  plan.storage = SourceWavefieldStorage::boundary_saving;
  plan.ranks_per_shot = ranks;
  return plan;
}

// The largest n whose n^3 migration fits `device_bytes` per GPU (the 95% a run may use) with
// `ranks` GPUs per shot; 0 when none from 16 up does.
int largest_cube(uint64_t device_bytes, int steps, int ranks) {
  auto fits = [&](int n, bool* thin = nullptr) {
    try {
      return double(estimate_run_memory(cube_plan(n, steps, ranks)).device_bytes()) <=
             0.95 * double(device_bytes);
    } catch (const InputError&) {
      if (thin) *thin = true; // too thin for that many slabs: try a larger model
      return false;
    }
  };
  // Small models are too thin for many slabs, large ones too big: from the first that splits.
  int lo = 16, hi = 16384;
  for (bool thin = true; thin && lo < hi;) {
    thin = false;
    if (fits(lo, &thin)) break;
    if (!thin) return 0;
    lo *= 2;
  }
  if (lo >= hi) return 0;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// rtm info --largest-models: docs/parallel.md's table, from the estimate of solvers/drivers/memory_budget.h.
void print_largest_models(int steps) {
  std::printf("largest n^3 migration model per GPU count (memory estimate; C-PML 20 cells, boundary "
              "saving, float32, %d steps, 10000 receivers; 95%% of the nominal GPU memory):\n\n",
              steps);
  std::printf("| GPU | GPUs per shot | largest model | device per GPU | host per rank |\n");
  std::printf("|---|---|---|---|---|\n");
  const struct {
    const char* name;
    uint64_t bytes;
  } gpus[] = {{"H100 (80 GB)", 80000000000ull}, {"H200 (141 GB)", 141000000000ull}};
  for (const auto& gpu : gpus)
    for (int ranks : {1, 2, 4, 8}) {
      const int n = largest_cube(gpu.bytes, steps, ranks);
      if (n == 0) {
        std::printf("| %s | %d | none | - | - |\n", gpu.name, ranks);
        continue;
      }
      const MemoryEstimate e = estimate_run_memory(cube_plan(n, steps, ranks));
      std::printf("| %s | %d | %d^3 | %s | %s |\n", gpu.name, ranks, n,
                  format_bytes(e.device_bytes()).c_str(),
                  format_bytes(e.host_bytes()).c_str());
    }
}

} // namespace

void register_info(CLI::App& rtm) {
  auto json = std::make_shared<bool>(false);
  auto largest = std::make_shared<bool>(false);
  auto steps = std::make_shared<int>(1000);
  CLI::App* cmd = rtm.add_subcommand("info", "Device, build, and measured memory bandwidth");
  cmd->add_flag("--json", *json, "Print the same facts as one JSON object");
  cmd->add_flag("--largest-models", *largest,
                "Print instead the largest cubic model a migration fits on H100 and H200 GPUs, per "
                "GPU count per shot, from the memory estimate (docs/parallel.md)");
  cmd->add_option("--steps", *steps, "With --largest-models: time steps of the migration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([json, largest, steps]() {
    if (*largest) print_largest_models(*steps);
    else print_info(*json);
  });
}

} // namespace rtm::app
