// The device query behind kernels/cuda/util/device_info.h.
#include "kernels/cuda/util/device_info.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "solvers/contracts/errors.h"

namespace rtm::cuda {
namespace {

std::string version_string(int v) { // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// An attribute, or 0 where the runtime does not report it or refuses it (the callers print "n/a").
int attribute_or_zero(cudaDeviceAttr attribute, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    (void)cudaGetLastError(); // an answer, not a pending error
    return 0;
  }
  return value > 0 ? value : 0;
}

// A tiny kernel whose attributes tell whether this build carries code for the GPU.
__global__ void probe_kernel() {}

} // namespace

int parse_fake_compute_capability(const std::string& text, int real) {
  const std::string real_text = std::to_string(real / 10) + "." + std::to_string(real % 10);
  const bool dotted = text.size() == 3 && std::isdigit(static_cast<unsigned char>(text[0])) &&
                      text[1] == '.' && std::isdigit(static_cast<unsigned char>(text[2]));
  if (!dotted)
    throw InputError("RTM_FAKE_COMPUTE_CAPABILITY: expected a compute capability such as 8.0 or "
                     "8.6 (at most this GPU's " + real_text + "), got '" + text + "'");
  const int cc = (text[0] - '0') * 10 + (text[2] - '0');
  if (cc > real)
    throw InputError("RTM_FAKE_COMPUTE_CAPABILITY=" + text + " is above this GPU's " + real_text +
                     ": it can only lower the capability (to see what a run does on an older GPU)");
  return cc;
}

int visible_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // an answer (no device, no driver), not a pending error
    return 0;
  }
  return count;
}

DeviceInfo query_device(int device) {
  DeviceInfo info;
  info.device = device;
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess) {
    info.why_unavailable = std::string(counted == cudaErrorInsufficientDriver
                                           ? "no NVIDIA driver new enough for this build (or none at all); "
                                           : "") +
                           "cudaGetDeviceCount failed: " + cudaGetErrorString(counted);
    cudaGetLastError(); // clear it: this is an answer, not a pending error
    return info;
  }
  if (count == 0) {
    info.why_unavailable = "no CUDA device is visible";
    return info;
  }
  if (device < 0 || device >= count) {
    info.why_unavailable = "device " + std::to_string(device) + " requested, " +
                           std::to_string(count) + " visible";
    return info;
  }
  int runtime = 0, driver = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  info.runtime_version = version_string(runtime);
  info.driver_version = version_string(driver);

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.cc_major = info.real_cc_major = prop.major;
  info.cc_minor = info.real_cc_minor = prop.minor;
  if (const char* fake = std::getenv("RTM_FAKE_COMPUTE_CAPABILITY")) {
    const int cc = parse_fake_compute_capability(fake, prop.major * 10 + prop.minor);
    info.cc_major = cc / 10;
    info.cc_minor = cc % 10;
    info.compute_capability_faked = true;
  }
  info.sm_count = prop.multiProcessorCount;
  info.global_mem_bytes = prop.totalGlobalMem;
  info.l2_bytes = size_t(prop.l2CacheSize);
  info.max_persisting_l2_bytes = size_t(std::max(prop.persistingL2CacheMaxSize, 0));
  info.max_access_policy_window_bytes = size_t(std::max(prop.accessPolicyMaxWindowSize, 0));

  // Memory clock and bus width: CUDA 13 dropped them from cudaDeviceProp, and some drivers report
  // 0 or refuse the attribute. Then the theoretical figure is unknown (0), never a guess.
  info.memory_clock_khz = attribute_or_zero(cudaDevAttrMemoryClockRate, device);
  info.bus_width_bits = attribute_or_zero(cudaDevAttrGlobalMemoryBusWidth, device);
  info.sm_clock_khz = attribute_or_zero(cudaDevAttrClockRate, device);
  info.theoretical_bandwidth_gbs = theoretical_bandwidth_gbs(info.memory_clock_khz, info.bus_width_bits);

  try {
    info.generic_compression = compressible_memory_unavailable_reason(device).empty();
  } catch (const CudaError&) {
    info.generic_compression = false; // the driver lacks the entry points: no compression then
  }

  CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes attributes{};
  const cudaError_t loadable = cudaFuncGetAttributes(&attributes, probe_kernel);
  if (loadable != cudaSuccess) {
    cudaGetLastError();
    info.why_unavailable = "this build has no kernels for " + info.name + " (compute capability " +
                           std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor) +
                           "; rebuild with CMAKE_CUDA_ARCHITECTURES=" +
                           std::to_string(info.cc_major * 10 + info.cc_minor) + "): " +
                           cudaGetErrorString(loadable);
    return info;
  }
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  info.free_mem_bytes = free_bytes;
  info.available = true;
  return info;
}

} // namespace rtm::cuda
