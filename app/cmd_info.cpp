// rtm info: the build, the CPU side, and the GPU with its measured memory bandwidth; --json prints
// the same facts as one JSON object (for scripts).
#include <cstdio>
#include <memory>
#include <omp.h>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "solvers/drivers/backend.h"

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
  std::printf("  GPU %d        : %s, compute capability %d.%d, %d SMs\n", d.device, d.name.c_str(),
              d.cc_major, d.cc_minor, d.sm_count);
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

} // namespace

void register_info(CLI::App& rtm) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = rtm.add_subcommand("info", "Device, build, and measured memory bandwidth");
  cmd->add_flag("--json", *json, "Print the same facts as one JSON object");
  cmd->callback([json]() { print_info(*json); });
}

} // namespace rtm::app
