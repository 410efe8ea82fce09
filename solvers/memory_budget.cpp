#include "solvers/memory_budget.h"

#include <algorithm>
#include <cstdio>

#include "io/errors.h"
#include "kernels/propagator.h"

namespace rtm {
namespace {

// A run may use this fraction of what is free: the rest is headroom for the CUDA context, library
// workspaces, fragmentation and other processes on a shared machine.
constexpr double kUsableFraction = 0.95;

uint64_t sum(const std::vector<MemoryItem>& items) {
  uint64_t total = 0;
  for (const MemoryItem& item : items) total += item.bytes;
  return total;
}

// "boundary store 60.10 GiB, wavefields 16.00 GiB, v2dt2 8.00 GiB"
std::string largest_items(std::vector<MemoryItem> items) {
  std::sort(items.begin(), items.end(),
            [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
  std::string text;
  for (size_t n = 0; n < items.size() && n < 3; ++n)
    text += (n ? ", " : "") + items[n].what + " " + gib_string(items[n].bytes);
  return text;
}

} // namespace

uint64_t MemoryEstimate::device_bytes() const { return sum(device); }
uint64_t MemoryEstimate::host_bytes() const { return sum(host); }

std::string gib_string(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  return text;
}

MemoryEstimate estimate_run_memory(const RunMemoryPlan& plan) {
  const GridLayout& g = plan.layout;
  const uint64_t padded = uint64_t(g.size);
  const uint64_t interior = uint64_t(g.interior_cells());
  const uint64_t element = uint64_t(plan.field_bytes);
  const uint64_t nt = uint64_t(std::max(plan.nt, 0));
  const uint64_t receivers = uint64_t(std::max(plan.receivers, 0));
  const uint64_t shots = uint64_t(std::max(plan.shots, 1));
  // Each propagating field is its own propagator with its own v2dt2 (as CudaPropagator allocates).
  const uint64_t propagators = plan.migration ? 2 : 1;

  MemoryEstimate e;
  e.device.push_back({"wavefields", propagators * 2 * padded * element});
  e.device.push_back({"v2dt2", propagators * padded * element});
  e.device.push_back({"upload staging", std::max(padded, interior) * sizeof(float)});
  e.device.push_back({"source and receiver series",
                      propagators * (nt * (receivers + 1) * sizeof(float) +
                                     (receivers + 1) * sizeof(PointStencil))});
  if (plan.migration) {
    e.device.push_back({"image and illumination", 2 * padded * sizeof(float)});
    if (plan.storage == SourceWavefieldStorage::boundary_saving) {
      const uint64_t nx = uint64_t(g.nx), ny = uint64_t(g.ny), nz = uint64_t(g.nz);
      const uint64_t per_step = 2 * uint64_t(kHalo) * (nx * ny + ny * nz + nx * nz) * element;
      e.device.push_back({"boundary store", nt * per_step});
    }
  }

  e.host.push_back({"model and v2dt2", 2 * interior * sizeof(float)});
  e.host.push_back({"shot gathers", shots * receivers * nt * sizeof(float)});
  if (plan.migration) {
    e.host.push_back({"image and illumination", 2 * interior * sizeof(float)});
    if (plan.storage == SourceWavefieldStorage::snapshots) {
      const uint64_t interval = uint64_t(std::max(plan.snapshot_interval, 1));
      const uint64_t count = (nt + interval - 1) / interval;
      e.host.push_back({"snapshots", count * interior * sizeof(float)});
    }
  }
  return e;
}

void check_memory_fits(const MemoryEstimate& estimate, const RunMemoryPlan& plan,
                       uint64_t device_free, uint64_t host_available, const std::string& context) {
  const uint64_t device_needed = estimate.device_bytes();
  if (device_free > 0 && double(device_needed) > kUsableFraction * double(device_free)) {
    std::string hint;
    if (plan.migration && plan.storage == SourceWavefieldStorage::boundary_saving)
      hint += "keep snapshots in host memory instead of saving boundaries on the GPU, ";
    if (plan.field_bytes > 2) hint += "store the wavefields in half precision (fp16_storage), ";
    hint += "record a shorter time or use a smaller grid, or run on more ranks so that each GPU "
            "holds a smaller part";
    throw InputError(context + ": this run needs " + gib_string(device_needed) +
                     " of GPU memory but " + gib_string(device_free) +
                     " are free on the device (a run may use 95% of it; largest: " +
                     largest_items(estimate.device) + "). To fit: " + hint + ".");
  }
  const uint64_t host_needed = estimate.host_bytes();
  if (host_available > 0 && double(host_needed) > kUsableFraction * double(host_available)) {
    std::string hint;
    if (plan.migration && plan.storage == SourceWavefieldStorage::snapshots)
      hint += "keep fewer snapshots (a snapshot interval above the present " +
              std::to_string(std::max(plan.snapshot_interval, 1)) +
              " steps) or save boundaries instead, ";
    hint += "model or migrate fewer shots per run, or spread the shots over more ranks or machines";
    throw InputError(context + ": this run needs " + gib_string(host_needed) +
                     " of host memory but " + gib_string(host_available) +
                     " are available (MemAvailable in /proc/meminfo; a run may use 95% of it; "
                     "largest: " + largest_items(estimate.host) + "). To fit: " + hint + ".");
  }
}

} // namespace rtm
