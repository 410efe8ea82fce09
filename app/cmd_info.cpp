// rtm info: the build, the CPU side, and the GPU with its measured memory bandwidth.
#include <cstdio>
#include <omp.h>

#include "app/commands.h"
#include "solvers/backend.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/bench.h"
#include "kernels/cuda_backend.h"
#endif

namespace rtm::app {

void register_info(CLI::App& rtm) {
  CLI::App* cmd = rtm.add_subcommand("info", "Device, build, and measured memory bandwidth");
  cmd->callback([]() {
    std::printf("rtm 0.1.0\n");
    std::printf("  build        : %s, CUDA kernels %s\n",
#ifdef NDEBUG
                "release",
#else
                "debug",
#endif
                cuda_built() ? "built" : "not built (CPU backend only)");
    std::printf("  CPU backend  : OpenMP, %d threads\n", omp_get_max_threads());
#ifdef RTM_HAVE_CUDA
    const cuda::DeviceInfo d = cuda::query_device();
    if (!d.available) {
      std::printf("  GPU          : none usable (%s)\n", d.why_unavailable.c_str());
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
                cuda::measure_device_copy_gbs(d.device));
    std::printf("  CUDA         : runtime %s, driver %s\n", d.runtime_version.c_str(),
                d.driver_version.c_str());
#else
    std::printf("  GPU          : this build has no CUDA kernels\n");
#endif
  });
}

} // namespace rtm::app
