// The CUDA backend as host code sees it: plain C++ declarations, no CUDA types.
// Compiled only where a CUDA compiler exists (RTM_HAVE_CUDA); solvers/drivers/backend.cpp guards its use.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"

namespace rtm::cuda {

struct DeviceInfo {
  bool available = false;
  std::string why_unavailable; // set when !available
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t global_mem_bytes = 0;
  size_t free_mem_bytes = 0;
  size_t l2_bytes = 0;
  size_t max_persisting_l2_bytes = 0;
  size_t max_access_policy_window_bytes = 0;
  bool generic_compression = false;
  double theoretical_bandwidth_gbs = 0; // 2 x memory clock x bus width
  std::string runtime_version, driver_version;
};

DeviceInfo query_device(int device = 0);
// The number of CUDA devices this process sees (0 when none or no usable driver).
int visible_device_count();

// Memory options for any kernel (docs/variants.md): compressible allocations and an L2
// persisting access-policy window.
struct MemoryOptions {
  bool compressible = false;
  bool l2_persist = false;
};

// One row of the variant table.
struct VariantInfo {
  std::string name;
  std::string kernel;        // the kernel it runs: its own name, or the one a memory preset reuses
  std::string description;
  double bytes_per_cell = 0; // device-memory traffic per cell per step, at the ideal
  int element_bytes = 4;     // bytes per wavefield and v2dt2 element: 4 float32, 2 half precision
  double flops_per_cell = 0;
  MemoryOptions preset;      // memory options the variant turns on by itself
};

const std::vector<VariantInfo>& variant_table();

// Creates a wavefield running `variant` (a name from variant_table(), or "auto"). Throws
// std::invalid_argument for an unknown name and std::runtime_error with a clear message for a grid
// that does not fit in free device memory (both numbers in the message). A memory option the
// device lacks falls back to ordinary memory with a message on stderr.
// "auto" times the float32 kernels for a few steps on this very grid (random wavefields) and
// keeps the fastest; it says which it chose, with the times, on `log` when given.
// The options combine with the variant's own preset (e.g. compressible + l2_persist).
std::unique_ptr<Wavefield> make_wavefield(const PropagatorSetup& setup, const std::string& variant,
                                          const MemoryOptions& options, int device = 0,
                                          std::ostream* log = nullptr);
// A shot's source and receiver fields (solvers/contracts/shot_fields.h) on one GPU, both running the same
// kernel with the same memory options: "auto" chooses once, for the source field.
std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup, const std::string& variant,
                                             const MemoryOptions& options, int device = 0,
                                             std::ostream* log = nullptr);

} // namespace rtm::cuda
