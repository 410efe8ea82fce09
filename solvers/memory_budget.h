// Will a run fit? The device and host memory a run needs, computed from the grid and the options
// before anything is allocated, and compared with what is free: a run that cannot fit is refused
// with both numbers, what takes the space, and what to change (rather than failing an allocation
// hours in, or being killed by the kernel's out-of-memory killer).
//
// Pure functions (no allocation, no device query) so they are tested anywhere; the driver passes the
// free device memory (cuda::DeviceInfo::free_mem_bytes) and the host's (io/host_memory.h's
// host_available_bytes()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/grid_layout.h"

namespace rtm {

// How the migration gets the source wavefield backwards in time (PHYSICS.md).
enum class SourceWavefieldStorage {
  snapshots,       // every snapshot_interval-th source field kept in host memory
  boundary_saving, // the 4 outermost interior layers of each face saved every step (device memory),
                   // the source field re-propagated backwards from its last two states
};

struct RunMemoryPlan {
  GridLayout layout;        // the compute grid (absorbing layers included)
  int nt = 0;               // time steps
  int receivers = 0;        // receivers per shot
  int shots = 1;            // shots whose gathers are held in host memory at once
  int field_bytes = 4;      // bytes per wavefield element on the device: 4 float32, 2 half
  bool migration = true;    // false: forward modeling only (one wavefield, no image)
  SourceWavefieldStorage storage = SourceWavefieldStorage::boundary_saving;
  int snapshot_interval = 1; // snapshots: steps between kept source fields
};

struct MemoryItem {
  std::string what;
  uint64_t bytes = 0;
};

struct MemoryEstimate {
  std::vector<MemoryItem> device; // one GPU's memory
  std::vector<MemoryItem> host;   // this process's host memory
  uint64_t device_bytes() const;
  uint64_t host_bytes() const;
};

// What a run needs, item by item. Device: per propagating field two padded wavefields (the source
// field, plus the receiver field in migration) and one padded v2dt2, the staging buffer the CUDA
// propagator uploads through, the receiver traces, and for migration the padded image and
// illumination (float32) and the boundary store when boundary saving is used. Host: the model and
// v2dt2 (dense float32), the shot's traces, the image and illumination, and the snapshots.
MemoryEstimate estimate_run_memory(const RunMemoryPlan& plan);

// Refuses (InputError) a run whose device or host needs exceed what is available, giving both
// numbers in GiB, the three largest items and what to change. A run may use 95% of what is free
// (headroom for the CUDA context, workspaces, fragmentation). `device_free` 0 means "no device
// used" and `host_available` 0 "unknown": that side is then not checked. `context` starts the
// message ("rtm migrate").
void check_memory_fits(const MemoryEstimate& estimate, const RunMemoryPlan& plan,
                       uint64_t device_free, uint64_t host_available, const std::string& context);

// "12.34 GiB"
std::string gib_string(uint64_t bytes);

} // namespace rtm
