// The CUDA backend as host code sees it: plain C++ declarations, no CUDA types.
// Compiled only where a CUDA compiler exists (RTM_HAVE_CUDA); solvers/drivers/backend.cpp guards its use.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/device_info.h" // DeviceInfo, query_device, visible_device_count
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

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

// Creates a propagator running `variant` (a name from variant_table(), or "auto"). Throws
// std::invalid_argument for an unknown name and std::runtime_error with a clear message for a grid
// that does not fit in free device memory (both numbers in the message). A memory option the
// device lacks falls back to ordinary memory with a message on stderr.
// "auto" times the float32 kernels for a few steps on this very grid (random wavefields) and
// keeps the fastest; it says which it chose, with the times, on `log` when given.
// The options combine with the variant's own preset (e.g. compressible + l2_persist).
std::unique_ptr<Propagator> make_propagator(const PropagatorSetup& setup, const std::string& variant,
                                            const MemoryOptions& options, int device = 0,
                                            std::ostream* log = nullptr);

} // namespace rtm::cuda
