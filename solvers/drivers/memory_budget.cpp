#include "solvers/drivers/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/host_memory.h"
#include "solvers/contracts/cpml.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/tti.h"
#include "solvers/drivers/backend.h"
#include "kernels/mpi/decomposed_propagator.h"

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
    text += (n ? ", " : "") + items[n].what + " " + format_bytes(items[n].bytes);
  return text;
}

} // namespace

uint64_t MemoryEstimate::device_bytes() const { return sum(device); }
uint64_t MemoryEstimate::host_bytes() const { return sum(host); }

namespace {

// The source snapshots of `cells` cells each (the box, or a slab's own planes of it), one every
// snapshot_interval steps of nt: in device memory (on the CPU backend add_host_side moves them to
// the host's list), or pinned in host memory with two device staging slots. The CPU backend and
// the host stores stage a float32 copy of the box as well.
void add_snapshot_items(MemoryEstimate& e, const RunMemoryPlan& plan, uint64_t row, uint64_t cells,
                        uint64_t nt) {
  const uint64_t interval = uint64_t(std::max(plan.snapshot_interval, 1));
  const uint64_t slots = nt > 0 ? (nt - 1) / interval + 1 : 1;
  const RingPrecision precision = plan.field_bytes == 4 && !plan.block_exponents
                                      ? plan.snapshot_precision
                                      : RingPrecision::full;
  const uint64_t slot = uint64_t(coded_rows_bytes(int64_t(row), int64_t(cells / row), precision));
  const std::string what = std::string("snapshots of the source field (") + std::to_string(slots) +
                           " x " + (precision == RingPrecision::full ? "float32" : "16-bit") + ")";
  if (plan.fields_on_host) e.device.push_back({"snapshot staging", cells * sizeof(float)});
  if (plan.snapshot_place == SnapshotPlace::device) {
    e.device.push_back({what, slots * slot});
  } else {
    if (!plan.fields_on_host) e.device.push_back({"snapshot staging", 2 * slot});
    e.host.push_back({what + ", pinned", slots * slot});
  }
}

// What the propagators' own items leave out, added to `e` by both estimates: the CPU backend's
// fields in host memory (the device list stays as it is), the whole-model copies and the shot
// file's traces. `propagators` and `interior` are the estimate's (per rank for a slab).
void add_host_side(MemoryEstimate& e, const RunMemoryPlan& plan, uint64_t propagators,
                   uint64_t interior, uint64_t model_cells) {
  const uint64_t f32 = sizeof(float);
  if (plan.fields_on_host) {
    // Each CpuWavefield keeps a copy of the setup it was made from (its dense v2dt2) beside its
    // padded v2dt2; the driver's own setup is the dense v2dt2 alone (the padded copy the host list
    // counts is the CUDA backend's upload).
    for (MemoryItem& item : e.host)
      if (item.what.rfind("v2dt2", 0) == 0) item.bytes = interior * f32;
    for (const MemoryItem& item : e.device) {
      if (item.what == "upload staging") continue; // the CUDA backend's
      if (item.what == "v2dt2")
        e.host.push_back({"v2dt2 of each field (CPU backend)", item.bytes + propagators * interior * f32});
      else
        e.host.push_back({item.what + " (CPU backend)", item.bytes});
    }
  }
  // One rank per shot: a slab holds model planes. Each copy holds /vp and the physics' datasets.
  const std::vector<const char*>& datasets = physics_info(plan.physics).model_datasets;
  if (plan.model_copies > 0 && model_cells > 0)
    e.host.push_back({"velocity model (" + std::to_string(plan.model_copies) + " copies" +
                          (datasets.empty() ? "" : ", with its anisotropy") + ")",
                      uint64_t(plan.model_copies) * model_cells * (1 + datasets.size()) * f32});
  if (plan.input_trace_values > 0)
    e.host.push_back({"the shot file's traces", plan.input_trace_values * f32});
}

} // namespace

namespace {

// One rank's share of a run split into z-slabs: the largest device and the largest host needs
// over the slabs (estimate_run_memory's items on each slab's local grid).
MemoryEstimate estimate_slab_memory(const RunMemoryPlan& plan) {
  const GridLayout& g = plan.layout;
  Box box = plan.box;
  if (box.empty()) box = Box{0, g.nx, 0, g.ny, 0, g.nz};
  const std::vector<Slab> slabs = split_into_slabs(g.nz, plan.ranks_per_shot,
                                                   plan.cpml ? box.z0 : 0, plan.cpml ? g.nz - box.z1 : 0,
                                                   slab_ghost_planes(plan.physics));
  // TTI: p and q, the ring kTtiRing thick for both (solvers/contracts/tti_ring.h).
  const PhysicsInfo& physics = physics_info(plan.physics);
  const uint64_t fields = uint64_t(physics.components);
  const int ring_width = physics.ring_width;
  const uint64_t element = uint64_t(plan.field_bytes);
  const uint64_t f32 = sizeof(float);
  const uint64_t nt = uint64_t(std::max(plan.nt, 0));
  const uint64_t receivers = uint64_t(std::max(plan.receivers, 0));
  const uint64_t shots = uint64_t(std::max(plan.shots, 1));
  const uint64_t propagators = plan.migration ? 2 : 1;
  const uint64_t box_plane = uint64_t(box.nx()) * uint64_t(box.ny());
  auto inner = [&](int n) { return n > 2 * ring_width ? uint64_t(n - 2 * ring_width) : uint64_t(0); };
  const uint64_t ring_plane =
      box.nz() > 2 * ring_width ? box_plane - inner(box.nx()) * inner(box.ny()) : box_plane;
  auto planes_between = [](int a0, int a1, int b0, int b1) {
    return uint64_t(std::max(0, std::min(a1, b1) - std::max(a0, b0)));
  };

  MemoryEstimate worst;
  uint64_t worst_device = 0, worst_host = 0;
  for (const Slab& s : slabs) {
    const int L = s.local_planes(), k0 = s.first_local();
    const GridLayout local = make_layout(g.nx, g.ny, L);
    const uint64_t padded = uint64_t(local.size), interior = uint64_t(local.interior_cells());
    const uint64_t box_planes = planes_between(box.z0, box.z1, k0, k0 + L);       // own and ghost
    const uint64_t own_planes = planes_between(box.z0, box.z1, s.z_begin, s.z_end);
    // The ring's full planes (within its width of the box's z faces) and partial planes on this slab.
    const uint64_t full = box.nz() > 2 * ring_width
                              ? planes_between(box.z0, box.z0 + ring_width, k0, k0 + L) +
                                    planes_between(box.z1 - ring_width, box.z1, k0, k0 + L)
                              : box_planes;
    const uint64_t ring = fields * (full * box_plane + (box_planes - full) * ring_plane);
    const uint64_t damping = uint64_t(g.nx + g.ny + L + 3 * (kHalo + 32)) * f32;

    MemoryEstimate e;
    e.device.push_back({"wavefields", propagators * 2 * fields * padded * element});
    if (plan.physics == Physics::tti)
      e.device.push_back({"TTI coefficients and pass-1 scratch",
                        propagators * (5 + 2 * uint64_t(kTtiScratchArrays)) * padded * f32});
    e.device.push_back({"v2dt2", propagators * padded * element});
    if (plan.model_copy_bytes > 0)
      e.device.push_back({"v2dt2 as the step kernel reads it",
                          propagators * uint64_t(std::ceil(double(padded) * plan.model_copy_bytes))});
    e.device.push_back({"damping profiles", propagators * damping});
    if (plan.cpml) {
      const int z_layers = (s.z_begin == 0 ? box.z0 : 0) + (s.z_end == g.nz ? g.nz - box.z1 : 0);
      const uint64_t lx = uint64_t(cpml_compact_length(g.nx, g.nx - box.nx(), 0)),
                     ly = uint64_t(cpml_compact_length(g.ny, g.ny - box.ny(), 0)),
                     lz = uint64_t(cpml_compact_length(L, z_layers, 0));
      const uint64_t nx = uint64_t(g.nx), ny = uint64_t(g.ny), nz = uint64_t(L);
      const uint64_t floats = 3 * (lx * ny * nz + nx * ly * nz + nx * ny * lz) + 2 * (nx + ny + nz);
      e.device.push_back({"C-PML memory variables", propagators * floats * f32});
    }
    e.device.push_back({"upload staging", std::max(padded, interior) * f32});
    e.device.push_back({"source and receiver series",
                        nt * (receivers + shots) * f32 + (receivers + shots) * sizeof(PointStencil)});
    if (plan.migration) {
      e.device.push_back({"image and illumination (own planes)", 2 * own_planes * box_plane * f32});
      if (plan.storage == SourceWavefieldStorage::boundary_saving) {
        const uint64_t steps = nt > 1 ? nt - 1 : 1;
        e.device.push_back({"boundary store (this slab's part)", ring * steps * element + ring * sizeof(int64_t)});
      } else {
        add_snapshot_items(e, plan, uint64_t(box.nx()), own_planes * box_plane, nt);
      }
    }

    const uint64_t model_planes = box_planes + 2 * uint64_t(std::max(plan.smoothing_reach, 0));
    e.host.push_back({"model planes (hyperslab)",
                      model_planes * box_plane * (plan.smoothing_reach >= 0 ? f32 + 8 + f32 : f32)});
    e.host.push_back({"v2dt2 (slab)", interior * f32 + padded * f32});
    if (plan.physics == Physics::tti) { // the four datasets' planes, the slab's dense coefficients
      e.host.push_back({"TTI model planes (hyperslab)",
                        physics.model_datasets.size() * box_planes * box_plane * f32});
      e.host.push_back({"TTI coefficients (slab)", 5 * interior * f32});
    }
    if (plan.migration) {
      e.host.push_back({"shot data (muted copy and series)", 2 * receivers * nt * f32});
      // raw image, illumination, normalised image, the filter's padded copy and result
      e.host.push_back({"image and illumination (own planes)", 5 * (own_planes + 2) * box_plane * f32});
    } else {
      e.host.push_back({"shot gathers", shots * receivers * nt * f32});
    }
    add_host_side(e, plan, propagators, interior, 0);
    if (e.device_bytes() > worst_device) worst_device = e.device_bytes(), worst.device = e.device;
    if (e.host_bytes() > worst_host) worst_host = e.host_bytes(), worst.host = e.host;
  }
  return worst;
}

} // namespace

int ranks_per_shot_that_fit(const RunMemoryPlan& plan, uint64_t device_free, int most) {
  RunMemoryPlan more = plan;
  for (int r = std::max(plan.ranks_per_shot, 1) + 1; r <= most; ++r) {
    more.ranks_per_shot = r;
    try {
      if (double(estimate_run_memory(more).device_bytes()) <= kUsableFraction * double(device_free))
        return r;
    } catch (const InputError&) {
      return 0; // slabs too thin from here on
    }
  }
  return 0;
}

MemoryEstimate estimate_run_memory(const RunMemoryPlan& plan) {
  if (plan.ranks_per_shot > 1) return estimate_slab_memory(plan);
  const GridLayout& g = plan.layout;
  const uint64_t padded = uint64_t(g.size);
  const uint64_t interior = uint64_t(g.interior_cells());
  Box box = plan.box;
  if (box.empty()) box = Box{0, g.nx, 0, g.ny, 0, g.nz};
  const uint64_t box_cells = uint64_t(box.cells());
  const uint64_t element = uint64_t(plan.field_bytes);
  const uint64_t f32 = sizeof(float);
  const uint64_t nt = uint64_t(std::max(plan.nt, 0));
  const uint64_t receivers = uint64_t(std::max(plan.receivers, 0));
  const uint64_t shots = uint64_t(std::max(plan.shots, 1));
  // Each propagating field is its own propagator with its own v2dt2 (as CudaWavefield allocates).
  const uint64_t propagators = plan.migration ? 2 : 1;
  // Per axis, the profile rounded up to whole 32-float segments (damping_profile_length).
  const uint64_t damping = uint64_t(g.nx + g.ny + g.nz + 3 * (kHalo + 32)) * f32;

  MemoryEstimate e;
  const uint64_t fields = uint64_t(physics_info(plan.physics).components); // TTI: p and q
  const uint64_t exponents = plan.block_exponents ? padded / 16 : 0; // bfp16: a byte per 16
  e.device.push_back({"wavefields", propagators * 2 * fields * (padded * element + exponents)});
  if (plan.physics == Physics::tti)
    e.device.push_back({"TTI coefficients and pass-1 scratch",
                        propagators * (5 + 2 * uint64_t(kTtiScratchArrays)) * padded * f32});
  e.device.push_back({"v2dt2", propagators * padded * (plan.block_exponents ? f32 : element)});
  if (plan.model_copy_bytes > 0)
    e.device.push_back({"v2dt2 as the step kernel reads it",
                        propagators * uint64_t(std::ceil(double(padded) * plan.model_copy_bytes))});
  e.device.push_back({"damping profiles", propagators * damping});
  if (plan.cpml) {
    // Per axis, the layer cells (the grid less the box along that axis) with their guard cells
    // (cpml_compact_length), the full extent along the others.
    const uint64_t lx = uint64_t(cpml_compact_length(g.nx, g.nx - box.nx(), 0)),
                   ly = uint64_t(cpml_compact_length(g.ny, g.ny - box.ny(), 0)),
                   lz = uint64_t(cpml_compact_length(g.nz, g.nz - box.nz(), 0));
    const uint64_t nx = uint64_t(g.nx), ny = uint64_t(g.ny), nz = uint64_t(g.nz);
    const uint64_t floats = 3 * (lx * ny * nz + nx * ly * nz + nx * ny * lz) + 2 * (nx + ny + nz);
    e.device.push_back({"C-PML memory variables", propagators * floats * f32});
  }
  e.device.push_back({"upload staging", std::max(padded, interior) * f32});
  // The receivers on the receiver field (migration) or the one field (modeling), one source per
  // shot on the source field.
  e.device.push_back({"source and receiver series",
                      nt * (receivers + shots) * f32 + (receivers + shots) * sizeof(PointStencil)});
  if (plan.migration) {
    e.device.push_back({"image and illumination", 2 * box_cells * f32});
    if (plan.least_squares_vectors > 0)
      e.device.push_back({"Born perturbation (least-squares RTM)", box_cells * f32});
    if (plan.offset_gather_values > 0)
      e.device.push_back({"offset gathers", uint64_t(plan.offset_gather_values) * f32});
    if (plan.storage == SourceWavefieldStorage::boundary_saving) {
      const uint64_t ring = uint64_t(saved_ring_cells(plan.physics, box));
      const uint64_t steps = nt > 1 ? nt - 1 : 1; // the last state is the forward run's own
      const uint64_t per_step = uint64_t(ring_step_bytes(int64_t(ring), plan.ring_precision,
                                                         int64_t(element)));
      e.device.push_back({plan.ring_precision != RingPrecision::full && element > 2
                              ? "boundary store (16-bit ring)"
                              : "boundary store",
                          per_step * steps + ring * sizeof(int64_t)});
    } else {
      add_snapshot_items(e, plan, uint64_t(box.nx()), box_cells, nt);
    }
  }

  // PropagatorSetup's dense v2dt2, and the padded copy a backend makes of it.
  e.host.push_back({"v2dt2", interior * f32 + padded * f32});
  if (plan.migration) {
    e.host.push_back({"shot data (muted copy and series)", 2 * receivers * nt * f32});
    // raw image, illumination, normalised and filtered image; without keep_sums the last two in
    // the first two's memory
    e.host.push_back({"image and illumination", (plan.keep_sums ? 4 : 2) * box_cells * f32});
    // Pinned copies of both for the checkpoints, alive until the end, when the four above are.
    // (A checkpoint's own arrays, 2 x the box while it is written, fit in the four during the loop.)
    if (plan.checkpoint_staging && plan.physics != Physics::tti)
      e.host.push_back({"checkpoint staging (pinned image and illumination)", 2 * box_cells * f32});
    if (plan.least_squares_vectors > 0) {
      e.host.push_back({"least-squares RTM: " + std::to_string(plan.least_squares_vectors) +
                            " model vectors of the conjugate gradients",
                        uint64_t(plan.least_squares_vectors) * box_cells * f32});
      e.host.push_back({"least-squares RTM: one shot's Born data", 2 * receivers * nt * f32});
    }
    if (plan.offset_gather_values > 0 || plan.angle_gather_values > 0)
      e.host.push_back({"offset and angle gathers",
                        uint64_t(plan.offset_gather_values + plan.angle_gather_values) * f32});
  } else {
    e.host.push_back({"shot gathers", shots * receivers * nt * f32});
  }
  add_host_side(e, plan, propagators, interior, box_cells);
  return e;
}

void check_memory_fits(const MemoryEstimate& estimate, const RunMemoryPlan& plan,
                       uint64_t device_free, uint64_t host_available, const std::string& context,
                       const std::string& host_source) {
  const uint64_t device_needed = estimate.device_bytes();
  if (device_free > 0 && double(device_needed) > kUsableFraction * double(device_free)) {
    std::string hint;
    // Half storage does not exist for every physics (docs/physics.md, TTI); snapshots (of p) do.
    if (plan.migration && (plan.storage == SourceWavefieldStorage::boundary_saving ||
                           plan.snapshot_place == SnapshotPlace::device))
      hint += "keep the source field as snapshots in host memory (--reconstruction snapshots "
              "--snapshot-memory host), ";
    if (plan.migration && plan.storage == SourceWavefieldStorage::snapshots)
      hint += "save the source field's boundary instead of keeping snapshots (--reconstruction "
              "boundary), ";
    if (plan.field_bytes > 2 && physics_info(plan.physics).supports_half_storage)
      hint += "store the wavefields in half precision (--variant fp16_storage), ";
    const int fit = ranks_per_shot_that_fit(plan, device_free);
    if (fit > 0) {
      RunMemoryPlan split = plan;
      split.ranks_per_shot = fit;
      hint += "record a shorter time, use a smaller model or coarser grid, or spread the model over "
              "more GPUs (more ranks per shot): with --ranks-per-shot " + std::to_string(fit) +
              " each GPU needs " +
              format_bytes(estimate_run_memory(split).device_bytes());
    } else {
      hint += "record a shorter time, use a smaller model or coarser grid, or spread the model over "
              "more GPUs (more ranks per shot) so that each holds a smaller part";
    }
    const std::string per_rank =
        plan.ranks_per_shot > 1
            ? " (per rank of a group of " + std::to_string(plan.ranks_per_shot) + ", the largest slab)"
            : "";
    throw InputError(context + ": this run needs " + format_bytes(device_needed) +
                     " of GPU memory" + per_rank + " but " + format_bytes(device_free) +
                     " are free on the device (a run may use 95% of it; largest: " +
                     largest_items(estimate.device) + "). To fit: " + hint + ".");
  }
  const uint64_t host_needed = estimate.host_bytes();
  if (host_available > 0 && double(host_needed) > kUsableFraction * double(host_available)) {
    std::string hint;
    if (plan.migration && plan.storage == SourceWavefieldStorage::snapshots)
      hint += std::string("save the source field's boundary instead of keeping snapshots "
                          "(--reconstruction boundary), ") +
              (plan.fields_on_host ? "" : "keep the snapshots on the GPU (--snapshot-memory device), ") +
              "or keep fewer snapshots (one per imaging step, every " +
              std::to_string(std::max(plan.snapshot_interval, 1)) +
              (plan.snapshot_interval > 1 ? " steps" : " step") + ": --imaging-interval), ";
    if (!plan.migration) hint += "model fewer shots per run, ";
    // The CPU backend's fields are most of it: a GPU holds them in its own memory, and a group of
    // ranks each holds its slab.
    if (plan.fields_on_host)
      hint += std::string("run on a GPU (the wavefields then live in its memory), ") +
              (plan.ranks_per_shot > 1
                   ? "split the model over more ranks per shot, "
                   : "split the model over several ranks (mpirun -n N rtm ... --ranks-per-shot N: "
                     "each holds its slab), ");
    hint += "record a shorter time, or use a smaller model or coarser grid";
    throw InputError(context + ": this run needs " + format_bytes(host_needed) +
                     " of host memory" +
                     (plan.ranks_per_shot > 1 ? " (per rank of a group of " +
                                                    std::to_string(plan.ranks_per_shot) + ")"
                                              : std::string()) +
                     " but " + format_bytes(host_available) +
                     " are available (" + host_source + "; a run may use 95% of it; "
                     "largest: " + largest_items(estimate.host) + "). To fit: " + hint + ".");
  }
}

namespace {

// `plan` with what the backend `resolved` ("cuda", "cpu") allocates for `backend`'s variant.
RunMemoryPlan plan_on_backend(const RunMemoryPlan& plan, const std::string& resolved,
                              const BackendOptions& backend) {
  RunMemoryPlan on = plan;
  on.field_bytes = resolved == "cuda" ? wavefield_element_bytes(backend.variant) : 4;
  on.block_exponents = resolved == "cuda" && wavefield_block_exponents(backend.variant);
  on.model_copy_bytes = resolved == "cuda" ? kernel_model_copy_bytes(backend.variant) : 0;
  on.checkpoint_staging = plan.checkpoint_staging && resolved == "cuda"; // the only one
  on.fields_on_host = resolved != "cuda";
  return on;
}

} // namespace

void check_run_memory(const RunMemoryPlan& plan, const BackendOptions& backend, int ranks_on_node,
                      const std::string& context) {
  check_variant_name(backend.variant);
  std::ostringstream quiet; // the driver says which backend it chose when it makes the propagator
  const std::string resolved = resolve_backend(backend.backend, quiet);
  const RunMemoryPlan device_plan = plan_on_backend(plan, resolved, backend);
  if (resolved == "cuda") {
    check_variant_runs_here(backend.variant, backend.device);
    check_variant_operations(backend.variant, plan.migration, plan.cpml, plan.physics, context);
  }
  const int sharing = std::max(ranks_on_node, 1);
  const uint64_t host_share = host_available_bytes(sharing); // an address-space limit is per rank
  check_memory_fits(estimate_run_memory(device_plan), device_plan,
                    free_device_bytes(resolved, backend.device), host_share,
                    sharing > 1 ? context + " (each of the " + std::to_string(sharing) +
                                      " ranks on this node counted with its share of the memory)"
                                : context,
                    host_available_source(sharing));
}

namespace {

bool fits_in(uint64_t needed, double share, uint64_t available) {
  return available > 0 && double(needed) <= share * double(available);
}

} // namespace

SourceStorageChoice choose_source_storage(const RunMemoryPlan& plan, uint64_t device_free,
                                          uint64_t host_available, bool snapshots_possible,
                                          bool allow_device, bool allow_host) {
  SourceStorageChoice choice;
  if (!snapshots_possible) {
    choice.reason = "snapshots are not offered for this physics or kernel";
    return choice;
  }
  RunMemoryPlan with = plan;
  with.storage = SourceWavefieldStorage::snapshots;
  const bool gpu = device_free > 0 && !plan.fields_on_host;
  auto try_place = [&](SnapshotPlace place) {
    with.snapshot_place = place;
    const MemoryEstimate e = estimate_run_memory(with);
    const bool host_ok = fits_in(e.host_bytes(), place == SnapshotPlace::host ? kSnapshotHostShare
                                                                              : kUsableFraction,
                                 host_available);
    const bool device_ok = !gpu || fits_in(e.device_bytes(), kSnapshotDeviceShare, device_free);
    return std::pair{host_ok && device_ok, gpu ? e.device_bytes() : e.host_bytes()};
  };
  std::string tried;
  if (allow_device) {
    const auto [ok, bytes] = try_place(SnapshotPlace::device);
    if (ok) {
      choice.storage = SourceWavefieldStorage::snapshots;
      choice.place = SnapshotPlace::device;
      choice.reason = "the run needs " + format_bytes(bytes) + " with them, " +
                      (gpu ? "within " : "within the host's ") +
                      std::to_string(int(100 * (gpu ? kSnapshotDeviceShare : kUsableFraction))) +
                      "% of the " + format_bytes(gpu ? device_free : host_available) +
                      (gpu ? " free on the GPU" : " available");
      return choice;
    }
    tried = std::string("with snapshots ") + (gpu ? "on the GPU" : "") + " the run would need " +
            format_bytes(bytes) + " of " + format_bytes(gpu ? device_free : host_available);
  }
  if (allow_host && gpu) {
    const auto [ok, device_bytes] = try_place(SnapshotPlace::host);
    const uint64_t host_bytes = estimate_run_memory(with).host_bytes();
    (void)device_bytes;
    if (ok) {
      choice.storage = SourceWavefieldStorage::snapshots;
      choice.place = SnapshotPlace::host;
      choice.reason = (tried.empty() ? std::string() : tried + "; ") + "in pinned host memory " +
                      format_bytes(host_bytes) + ", within " +
                      std::to_string(int(100 * kSnapshotHostShare)) + "% of the " +
                      format_bytes(host_available) + " available";
      return choice;
    }
    tried += std::string(tried.empty() ? "" : "; ") + "in host memory " + format_bytes(host_bytes) +
             " of " + format_bytes(host_available) + " available";
  }
  choice.reason = tried.empty() ? "snapshots not allowed here" : tried;
  return choice;
}

SourceStorageChoice choose_source_storage_here(const RunMemoryPlan& plan, const BackendOptions& backend,
                                               int ranks_on_node, bool snapshots_possible,
                                               bool allow_device, bool allow_host) {
  std::ostringstream quiet;
  const std::string resolved = resolve_backend(backend.backend, quiet);
  const RunMemoryPlan here = plan_on_backend(plan, resolved, backend);
  const int sharing = std::max(ranks_on_node, 1);
  return choose_source_storage(here, free_device_bytes(resolved, backend.device),
                               host_available_bytes(sharing),
                               snapshots_possible && !here.block_exponents, allow_device, allow_host);
}

} // namespace rtm
