// The GPU a run uses, as host code sees it: plain C++, no CUDA types (kernels/cuda/util/device_info.cu).
// One description for every user: the propagators and `rtm bench`/`rtm info` (kernels/cuda/bench.h) and
// the microkernels of `rtm micro` (kernels/micro/micro.h).
#pragma once

#include <cstddef>
#include <string>

namespace rtm::cuda {

struct DeviceInfo {
  bool available = false;
  std::string why_unavailable; // set when !available
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  // RTM_FAKE_COMPUTE_CAPABILITY=8.0 (say) lowers cc_major.cc_minor to show, on a newer GPU, what a
  // run does on an older one: which kernels `auto` and `rtm bench` take and which are refused.
  // It can only lower the capability (the code for the real one still runs). `real_cc_*` is the
  // GPU's own.
  bool compute_capability_faked = false;
  int real_cc_major = 0, real_cc_minor = 0;
  int sm_count = 0;
  size_t global_mem_bytes = 0;
  size_t free_mem_bytes = 0;
  size_t l2_bytes = 0;
  size_t max_persisting_l2_bytes = 0; // 0: no L2 persistence on this device
  size_t max_access_policy_window_bytes = 0;
  bool generic_compression = false;
  // Clocks and bus width from cudaDeviceGetAttribute (CUDA 13 removed them from cudaDeviceProp);
  // 0 where the runtime does not report them.
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  int sm_clock_khz = 0;          // the boost clock
  double theoretical_bandwidth_gbs = 0; // theoretical_bandwidth_gbs(memory clock, bus width)
  std::string runtime_version, driver_version;
};

// 2 x memory clock x bus width (double data rate), in GB/s = 1e9 B/s; 0 (unknown, never a guess)
// when either is 0.
inline double theoretical_bandwidth_gbs(int memory_clock_khz, int bus_width_bits) {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0) return 0.0;
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

// Never throws for a missing device or driver: `available` is false and `why_unavailable` says
// why (no driver, no device, an index out of range, no kernels of this build for the GPU).
// Throws rtm::InputError for an RTM_FAKE_COMPUTE_CAPABILITY that is not a capability below the
// GPU's own (parse_fake_compute_capability).
DeviceInfo query_device(int device = 0);
// RTM_FAKE_COMPUTE_CAPABILITY's value ("8.0", "8.6") as major * 10 + minor, given the GPU's own
// capability `real` (the same form); throws rtm::InputError naming the variable for anything else,
// and for a capability above `real`.
int parse_fake_compute_capability(const std::string& text, int real);
// The number of CUDA devices this process sees (0 when none or no usable driver).
int visible_device_count();

} // namespace rtm::cuda
