// Will a run fit? The device and host memory a run needs, computed from the grid and the options
// before anything is allocated, and compared with what is free: a run that cannot fit is refused
// with both numbers, what takes the space, and what to change (rather than failing an allocation
// hours in, or being killed by the kernel's out-of-memory killer).
//
// estimate_run_memory and check_memory_fits are pure (no allocation, no device query) so they are
// tested anywhere; check_run_memory asks this machine (the free memory of the GPU the run will use,
// MemAvailable of the host) and is what the drivers call before they allocate anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solvers/contracts/format.h" // format_bytes, in the estimate's messages
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/physics.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/ring_codec.h"
#include "solvers/contracts/wavefield.h"
#include "solvers/drivers/backend.h"

namespace rtm {

// How the migration gets the source wavefield backwards in time (docs/rtm.md, section 4).
enum class SourceWavefieldStorage {
  snapshots,       // every snapshot_interval-th source field kept (snapshot_place, _precision)
  boundary_saving, // the 4 outermost interior layers of each face saved every step (device memory),
                   // the source field re-propagated backwards from its last two states
};

struct RunMemoryPlan {
  GridLayout layout;        // the compute grid (absorbing layers included)
  Box box;                  // the model region (image, boundary ring, snapshots); empty: the interior
  int nt = 0;               // time steps
  int receivers = 0;        // receivers per shot
  int shots = 1;            // shots in the run: each adds a source series on the device; modeling
                            // holds every gather in host memory until it writes them
  int field_bytes = 4;      // bytes per wavefield element on the device: 4 float32, 2 half
                            // (bfp16: 2, its int16 mantissas)
  // bfp16 (block floating point, solvers/contracts/bfp16.h): an exponent byte per 16 elements of
  // each wavefield on top of field_bytes, and v2dt2 in float32 (4 bytes, not field_bytes).
  bool block_exponents = false;
  // Bytes per cell of the second v2dt2 some variants keep for their step kernel, per propagator
  // (kernel_model_copy_bytes(): half_v2dt2 2, bfp16_model16 2 + 1/16); 0: none.
  double model_copy_bytes = 0;
  bool migration = true;    // false: forward modeling only (one wavefield, no image)
  SourceWavefieldStorage storage = SourceWavefieldStorage::boundary_saving;
  int snapshot_interval = 1; // snapshots: steps between kept source fields
  // snapshots: where they live (device: with the wavefields; host: pinned host memory and two
  // device staging slots) and how they are coded (solvers/contracts/ring_codec.h; float32 fields
  // only, others keep float32 snapshots).
  SnapshotPlace snapshot_place = SnapshotPlace::device;
  RingPrecision snapshot_precision = RingPrecision::fixed16;
  // boundary_saving: the rings in the field's storage, or 16-bit with a scale per block
  // (solvers/contracts/ring_codec.h; float fields only).
  RingPrecision ring_precision = RingPrecision::full;
  // C-PML memory variables (solvers/contracts/cpml.h) in the layers between box and grid, per propagator:
  // psi twice and zeta per axis, float32 (--absorber cpml).
  bool cpml = false;
  // A group of this many ranks splits the grid into z-slabs (kernels/mpi/decomposed_propagator.h),
  // each rank holding its slab (the C-PML's z layers inside the end slabs, as the split makes
  // them). The estimate is then one rank's, the largest: device and host may come from different
  // slabs.
  int ranks_per_shot = 1;
  // With ranks_per_shot > 1, the smoothing window's reach in planes when the model is smoothed
  // (each rank reads that many more planes beyond its slab and smooths in double), -1 when not.
  int smoothing_reach = -1;
  // The wave equation stepped; its row (solvers/contracts/physics.h) gives the fields per state
  // (components), the ring's width and the slabs' ghost planes, the model's datasets. Pseudo-acoustic
  // TTI (solvers/contracts/tti.h) adds five padded coefficient arrays and the two-field scratch of
  // pass 1 per propagator.
  Physics physics = Physics::acoustic;
  // A migration that writes a checkpoint every few shots: on the CUDA backend (check_run_memory
  // keeps it for that one only) the image and the illumination are copied out through pinned host
  // buffers kept for the run (kernels/cuda/fields/cuda_shot_fields.cuh), beside the image arrays. Not for
  // TTI or a grid split into z-slabs, which download the sums without them.
  bool checkpoint_staging = false;
  // The raw image and the illumination returned beside the image (MigrationParams::keep_sums):
  // four image arrays on the host at the end; without them two (the image finished in their
  // memory).
  bool keep_sums = true;
  // Migration with subsurface-offset gathers (--offset-lags; one rank per shot only): their values
  // (OffsetGatherLayout::values, float32 on the device beside the image, and on the host when
  // downloaded) and those of the angle gathers made from them on the host (0: none).
  int64_t offset_gather_values = 0;
  int64_t angle_gather_values = 0;
  // The CPU backend computes where the host keeps its memory: its wavefields, model term, C-PML
  // memory, image sums, point series and boundary store are host memory, beside the host items.
  // check_run_memory sets it for every backend but CUDA; estimate_run_memory then adds those
  // device items to the host's (the device list stays, for RTM_FAKE_FREE_GPU_BYTES's check).
  bool fields_on_host = false;
  // One rank per shot: whole copies of the velocity model the command and the driver hold beside
  // the run (the model as read and the simulation grid's copy: 2); each copy also holds
  // the physics' other datasets (TTI: /epsilon, /delta, /theta, /phi). A group of ranks per shot holds model planes instead ("model
  // planes (hyperslab)"), and this is not used.
  int model_copies = 0;
  // Migration: the values of every trace of the shot file, which every rank reads whole and holds
  // for the run (one shot's working copies are "shot data").
  uint64_t input_trace_values = 0;
  // Least-squares RTM (solvers/drivers/lsrtm.h; migration only, one rank per shot): its solver's
  // model-sized float32 vectors on the host, and (when > 0) the Born perturbation on the device
  // and the Born data of one shot on the host.
  int least_squares_vectors = 0;
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

// What a run needs, item by item, as the propagators allocate it. Device, per propagating field
// (the source field, plus the receiver field in migration): two padded wavefields and a padded
// v2dt2 in the field's element size, the damping profiles, and its point sets (the receivers'
// series and stencils, one source series per shot); once, the float32 staging buffer uploads go
// through. Migration adds the image and illumination over the model box (float32) and either the
// boundary store (ring cells x (nt - 1) steps in the field's element size, plus the ring's cell
// list) or the box staging buffer snapshots are copied through. Host: v2dt2 and its padded copy,
// the gathers (modeling: all shots; migration: one shot's muted copy and its series), the image
// arrays of migration (with checkpoint_staging also their pinned copies), and the snapshots
// (ceil(nt / interval) copies of the box, float32).
//
// With ranks_per_shot > 1, one rank's share (the largest), the same items on its slab's local grid
// (own and ghost planes): its part of the boundary ring, its own planes of the image, its planes of
// the snapshots; on the host its model planes (read by hyperslab; with smoothing, its reach too,
// smoothed in double) and its own planes of the image arrays, never the whole grid
// (docs/decomposition.md). Throws InputError when the grid is too thin for that many slabs.
MemoryEstimate estimate_run_memory(const RunMemoryPlan& plan);

// The fewest ranks per shot, from plan.ranks_per_shot + 1 up to `most`, whose per-rank device
// estimate fits `device_free` (95% of it); 0 when none does (or the grid is too thin first).
int ranks_per_shot_that_fit(const RunMemoryPlan& plan, uint64_t device_free, int most = 64);

// Refuses (InputError) a run whose device or host needs exceed what is available, giving both
// numbers in GiB, the three largest items and what to change. A run may use 95% of what is free
// (headroom for the CUDA context, workspaces, fragmentation). `device_free` 0 means "no device
// used" and `host_available` 0 "unknown": that side is then not checked. `context` starts the
// message ("rtm migrate"); `host_source` says where `host_available` came from.
void check_memory_fits(const MemoryEstimate& estimate, const RunMemoryPlan& plan,
                       uint64_t device_free, uint64_t host_available, const std::string& context,
                       const std::string& host_source = "MemAvailable in /proc/meminfo");

// check_memory_fits with what this machine has, before anything is allocated: the free memory of
// the GPU `backend` will use (options.device; "auto" resolved quietly here, the driver reports its
// choice later; nothing for the CPU backend), from free_device_bytes in solvers/drivers/backend.h, which
// honours RTM_FAKE_FREE_GPU_BYTES; and MemAvailable divided among the `ranks_on_node` ranks that
// share this node's memory, each holding what `plan` describes. The variant name is checked first,
// so a misspelt one is reported as such.
void check_run_memory(const RunMemoryPlan& plan, const BackendOptions& backend, int ranks_on_node,
                      const std::string& context);


// How an automatic reconstruction keeps the source field (MigrationParams' Reconstruction::automatic):
// snapshots where the whole run fits with them in kSnapshotDeviceShare of the free device memory
// (the CPU backend: of the host's), else in pinned host memory where they fit in
// kSnapshotHostShare of the host's available memory (a GPU run), else boundary saving. `plan`
// as check_run_memory's, `snapshots_possible` false where the physics or the kernel has none.
// `device_free` 0: no GPU; `host_available` 0: unknown (no snapshots then). Pure.
struct SourceStorageChoice {
  SourceWavefieldStorage storage = SourceWavefieldStorage::boundary_saving;
  SnapshotPlace place = SnapshotPlace::device;
  std::string reason; // for the log: what fitted, or why not
};
constexpr double kSnapshotDeviceShare = 0.9, kSnapshotHostShare = 0.6;
SourceStorageChoice choose_source_storage(const RunMemoryPlan& plan, uint64_t device_free,
                                          uint64_t host_available, bool snapshots_possible,
                                          bool allow_device = true, bool allow_host = true);
// choose_source_storage with what this machine has (as check_run_memory asks it).
SourceStorageChoice choose_source_storage_here(const RunMemoryPlan& plan, const BackendOptions& backend,
                                               int ranks_on_node, bool snapshots_possible,
                                               bool allow_device = true, bool allow_host = true);

} // namespace rtm
