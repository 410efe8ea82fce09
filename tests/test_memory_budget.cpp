// solvers/drivers/memory_budget.h: the memory a run needs, item by item from the grid, and the refusal
// when it does not fit (both numbers and a hint), and MemAvailable read from /proc/meminfo text.
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "solvers/contracts/errors.h"
#include "io/host_memory.h"
#include "solvers/drivers/backend.h"
#include "solvers/contracts/tti_ring.h"
#include "solvers/drivers/memory_budget.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kGiB = 1ull << 30;

uint64_t item(const std::vector<MemoryItem>& items, const std::string& what) {
  for (const MemoryItem& i : items)
    if (i.what == what) return i.bytes;
  ADD_FAILURE() << "no item " << what;
  return 0;
}

bool has_item(const std::vector<MemoryItem>& items, const std::string& what) {
  for (const MemoryItem& i : items)
    if (i.what == what) return true;
  return false;
}

RunMemoryPlan plan_for(int n, int nt) {
  RunMemoryPlan plan;
  plan.layout = make_layout(n, n, n);
  plan.nt = nt;
  plan.receivers = 100;
  return plan;
}

std::string refusal(const RunMemoryPlan& plan, uint64_t device_free, uint64_t host_available) {
  try {
    check_memory_fits(estimate_run_memory(plan), plan, device_free, host_available, "rtm migrate");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryBudget, ItemsFollowFromTheGrid) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 0, 90}; // the model region: 80 x 80 x 90, layers around it
  plan.shots = 7;
  const GridLayout& g = plan.layout;
  const uint64_t padded = uint64_t(g.size), interior = 1000000, box = 80 * 80 * 90;
  const MemoryEstimate boundary = estimate_run_memory(plan);
  EXPECT_EQ(item(boundary.device, "wavefields"), 2 * 2 * padded * 4); // source + receiver fields
  EXPECT_EQ(item(boundary.device, "v2dt2"), 2 * padded * 4);
  EXPECT_EQ(item(boundary.device, "image and illumination"), 2 * box * 4);
  // 100 receivers and 7 sources, 1000 samples each, float32, plus their stencils
  EXPECT_EQ(item(boundary.device, "source and receiver series"),
            107ull * 1000 * 4 + 107 * sizeof(PointStencil));
  // The ring of the box (its cells less than 4 from a face) over nt - 1 steps, float32, plus the
  // ring's cell list (int64): the arrays CudaWavefield::make_boundary_store makes.
  const uint64_t ring = box - 72ull * 72 * 82;
  ASSERT_EQ(ring, uint64_t(boundary_ring_cells(plan.box)));
  EXPECT_EQ(item(boundary.device, "boundary store"), ring * 999 * 4 + ring * 8);
  EXPECT_FALSE(has_item(boundary.device, "snapshot staging"));
  EXPECT_FALSE(has_item(boundary.host, "snapshots"));
  EXPECT_EQ(item(boundary.host, "shot data (muted copy and series)"), 2 * 100ull * 1000 * 4);
  EXPECT_EQ(item(boundary.host, "v2dt2"), (interior + padded) * 4);
  // A 16-bit ring (solvers/contracts/ring_codec.h): 2 B a cell (padded to 4 B) and a 4 B exponent
  // per 256 cells, per step.
  for (const RingPrecision precision : {RingPrecision::fixed16, RingPrecision::half16}) {
    plan.ring_precision = precision;
    const MemoryEstimate coded = estimate_run_memory(plan);
    EXPECT_FALSE(has_item(coded.device, "boundary store"));
    EXPECT_EQ(item(coded.device, "boundary store (16-bit ring)"),
              ((ring * 2 + 3) / 4 * 4 + (ring + 255) / 256 * 4) * 999 + ring * 8);
  }
  plan.ring_precision = RingPrecision::full;

  plan.storage = SourceWavefieldStorage::snapshots;
  plan.snapshot_interval = 8;
  plan.snapshot_precision = RingPrecision::full;
  plan.snapshot_place = SnapshotPlace::host; // pinned host memory, two staging slots on the GPU
  const MemoryEstimate snapshots = estimate_run_memory(plan);
  EXPECT_FALSE(has_item(snapshots.device, "boundary store"));
  EXPECT_EQ(item(snapshots.device, "snapshot staging"), 2 * box * 4);
  // Steps 0, 8, ..., 992 of the 1000: 125 slots.
  EXPECT_EQ(item(snapshots.host, "snapshots of the source field (125 x float32), pinned"), 125ull * box * 4);
  plan.snapshot_place = SnapshotPlace::device;
  plan.snapshot_precision = RingPrecision::fixed16;
  const MemoryEstimate on_device = estimate_run_memory(plan);
  EXPECT_EQ(item(on_device.device, "snapshots of the source field (125 x 16-bit)"),
            125ull * ((box * 2 + 3) / 4 * 4 + 80ull * 90 * 4)); // a block per 80-cell row

  EXPECT_FALSE(has_item(on_device.device, "snapshot staging"));

  plan.field_bytes = 2; // half-precision storage halves the wavefields and v2dt2
  EXPECT_EQ(item(estimate_run_memory(plan).device, "wavefields"), 2 * 2 * padded * 2);

  plan.migration = false; // modeling: one propagator, no image, every gather kept until written
  const MemoryEstimate modeling = estimate_run_memory(plan);
  EXPECT_EQ(item(modeling.device, "wavefields"), 2 * padded * 2);
  EXPECT_FALSE(has_item(modeling.device, "image and illumination"));
  EXPECT_FALSE(has_item(modeling.host, "snapshots"));
  EXPECT_EQ(item(modeling.host, "shot gathers"), 7 * 100ull * 1000 * 4);

  plan.box = Box{}; // no box given: the whole interior
  plan.migration = true;
  // Half fields keep float32 snapshots (their own 16 bits exactly).
  EXPECT_EQ(item(estimate_run_memory(plan).device, "snapshots of the source field (125 x float32)"),
            125ull * interior * 4);
}

// Checkpoints on the GPU stage the image and the illumination through pinned host buffers kept
// for the run (kernels/cuda/fields/cuda_shot_fields.cuh): two more copies of the box on the host, counted
// only where a backend makes them (the CUDA backend, acoustic, one rank per shot).
TEST(MemoryBudget, CheckpointStagingCountsTwoPinnedCopiesOfTheBox) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 0, 90};
  const uint64_t box = 80 * 80 * 90;
  const uint64_t without = estimate_run_memory(plan).host_bytes();
  EXPECT_FALSE(has_item(estimate_run_memory(plan).host, "checkpoint staging (pinned image and illumination)"));
  plan.checkpoint_staging = true;
  const MemoryEstimate staged = estimate_run_memory(plan);
  EXPECT_EQ(item(staged.host, "checkpoint staging (pinned image and illumination)"), 2 * box * 4);
  EXPECT_EQ(staged.host_bytes(), without + 2 * box * 4);
  plan.physics = Physics::tti; // the TTI fields download their sums without staging
  EXPECT_FALSE(has_item(estimate_run_memory(plan).host, "checkpoint staging (pinned image and illumination)"));
  plan.physics = Physics::acoustic;
  plan.ranks_per_shot = 2; // nor does the z-slab split
  EXPECT_FALSE(has_item(estimate_run_memory(plan).host, "checkpoint staging (pinned image and illumination)"));
}

// Least-squares RTM (solvers/drivers/lsrtm.h): its solver's model vectors and one shot's Born data
// on the host, the Born perturbation beside the image on the device; nothing without it.
TEST(MemoryBudget, LeastSquaresRtmCountsItsVectorsAndThePerturbation) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 0, 90};
  const uint64_t box = 80 * 80 * 90;
  const MemoryEstimate plain = estimate_run_memory(plan);
  plan.least_squares_vectors = 5;
  const MemoryEstimate ls = estimate_run_memory(plan);
  EXPECT_EQ(item(ls.device, "Born perturbation (least-squares RTM)"), box * 4);
  EXPECT_EQ(item(ls.host, "least-squares RTM: 5 model vectors of the conjugate gradients"), 5 * box * 4);
  EXPECT_EQ(item(ls.host, "least-squares RTM: one shot's Born data"), 2 * 100 * 1000 * 4u);
  EXPECT_EQ(ls.device_bytes(), plain.device_bytes() + box * 4);
  EXPECT_EQ(ls.host_bytes(), plain.host_bytes() + 5 * box * 4 + 2 * 100 * 1000 * 4u);
}

TEST(MemoryBudget, RunThatFitsIsAccepted) {
  const RunMemoryPlan plan = plan_for(100, 1000);
  EXPECT_EQ(refusal(plan, 80 * kGiB, 100 * kGiB), "");
  EXPECT_EQ(refusal(plan, 0, 0), "") << "0 means unknown: nothing is checked";
}

TEST(MemoryBudget, GpuOverflowIsRefusedWithBothNumbersAndAHint) {
  RunMemoryPlan plan = plan_for(1000, 4000); // 1000^3 with boundary saving over 4000 steps
  const MemoryEstimate e = estimate_run_memory(plan);
  ASSERT_GT(e.device_bytes(), 80 * kGiB);
  const std::string message = refusal(plan, 80 * kGiB, 1000 * kGiB);
  EXPECT_THAT(message, HasSubstr("rtm migrate: this run needs " + format_bytes(e.device_bytes()) +
                                 " of GPU memory but 80.00 GiB are free"));
  EXPECT_THAT(message, HasSubstr("largest: boundary store"));
  EXPECT_THAT(message, HasSubstr("snapshots in host memory"));
  EXPECT_THAT(message, HasSubstr("--reconstruction snapshots"));
  EXPECT_THAT(message, HasSubstr("more ranks"));
}

TEST(MemoryBudget, HostOverflowIsRefusedWithBothNumbersAndAHint) {
  RunMemoryPlan plan = plan_for(500, 3000);
  plan.storage = SourceWavefieldStorage::snapshots;
  plan.snapshot_place = SnapshotPlace::host;
  plan.snapshot_interval = 2; // 1500 snapshots of 0.24 GiB (16-bit)
  const MemoryEstimate e = estimate_run_memory(plan);
  const std::string message = refusal(plan, 80 * kGiB, 64 * kGiB);
  EXPECT_THAT(message, HasSubstr("needs " + format_bytes(e.host_bytes()) +
                                 " of host memory but 64.00 GiB are available"));
  EXPECT_THAT(message, HasSubstr("largest: snapshots"));
  EXPECT_THAT(message, HasSubstr("--reconstruction boundary"));
  EXPECT_THAT(message, HasSubstr("fewer snapshots (one per imaging step, every 2 steps"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("fewer shots"))) << "shots do not add up in migration";
}

TEST(MemoryBudget, HeadroomOfFivePercent) {
  const RunMemoryPlan plan = plan_for(200, 500);
  const uint64_t need = estimate_run_memory(plan).device_bytes();
  EXPECT_EQ(refusal(plan, uint64_t(double(need) / 0.95) + 1, 0), "");
  EXPECT_NE(refusal(plan, need, 0), "") << "no headroom left";
}

TEST(MemoryBudget, ModelingHintsAtFewerShots) {
  RunMemoryPlan plan = plan_for(100, 10000);
  plan.migration = false;
  plan.receivers = 10000;
  plan.shots = 1000; // 1000 gathers of 10000 x 10000 samples: 373 GiB held until written
  const std::string message = refusal(plan, 0, 64 * kGiB);
  EXPECT_THAT(message, HasSubstr("largest: shot gathers"));
  EXPECT_THAT(message, HasSubstr("model fewer shots per run"));
}

// The environment variable that stands in for a GPU's free memory (solvers/drivers/backend.h), set for
// the lifetime of one test.
class FakeFreeGpuBytes {
public:
  explicit FakeFreeGpuBytes(const char* value) { ::setenv("RTM_FAKE_FREE_GPU_BYTES", value, 1); }
  ~FakeFreeGpuBytes() { ::unsetenv("RTM_FAKE_FREE_GPU_BYTES"); }
};

std::string run_refusal(const RunMemoryPlan& plan, const std::string& backend, int ranks_on_node = 1) {
  BackendOptions options;
  options.backend = backend;
  try {
    check_run_memory(plan, options, ranks_on_node, "rtm migrate");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryBudget, MachineCheckRefusesAHugeRunOnTheHost) {
  // 1000^3 cells with a snapshot every step over 4000 steps: 14.6 TiB of snapshots, more than any
  // machine this runs on has available; the CPU backend checks no device.
  RunMemoryPlan plan = plan_for(1000, 4000);
  plan.storage = SourceWavefieldStorage::snapshots;
  const std::string message = run_refusal(plan, "cpu");
  RunMemoryPlan on_host = plan; // the CPU backend's fields are host memory too
  on_host.fields_on_host = true;
  EXPECT_THAT(message, HasSubstr("rtm migrate: this run needs " +
                                 format_bytes(estimate_run_memory(on_host).host_bytes()) +
                                 " of host memory but "));
  EXPECT_THAT(message, HasSubstr(format_bytes(host_available_bytes()) + " are available"));
  // The CPU backend stages no checkpoints in pinned memory: not counted for it.
  RunMemoryPlan staged = plan;
  staged.checkpoint_staging = true;
  EXPECT_EQ(run_refusal(staged, "cpu"), message);
  EXPECT_EQ(run_refusal(plan_for(50, 100), "cpu"), "") << "a small run fits";
  // Ranks on one node share its memory: each is given its share.
  const std::string shared = run_refusal(plan, "cpu", 4);
  EXPECT_THAT(shared, HasSubstr("rtm migrate (each of the 4 ranks on this node counted with its "
                                "share of the memory): this run needs"));
  EXPECT_THAT(shared, HasSubstr(format_bytes(host_available_bytes(4)) + " are available"));
}

TEST(MemoryBudget, MachineCheckUsesTheFakeGpuFigure) {
  EXPECT_EQ(free_device_bytes("cpu"), 0u) << "the CPU backend has no device to check";
  const FakeFreeGpuBytes fake("1073741824"); // 1 GiB free
  EXPECT_EQ(free_device_bytes("cpu"), kGiB);
  const RunMemoryPlan plan = plan_for(200, 2000); // 2 fields, image and a 2000-step boundary store
  ASSERT_GT(estimate_run_memory(plan).device_bytes(), kGiB);
  EXPECT_THAT(run_refusal(plan, "cpu"),
              HasSubstr("of GPU memory but 1.00 GiB are free on the device"));
  EXPECT_EQ(run_refusal(plan_for(50, 100), "cpu"), "");
}

TEST(MemoryBudget, FakeGpuFigureMustBeANumber) {
  for (const char* bad : {"lots", "-5", "0", "12GB", ""}) {
    SCOPED_TRACE(bad);
    const FakeFreeGpuBytes fake(bad);
    try {
      free_device_bytes("cuda");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("RTM_FAKE_FREE_GPU_BYTES"));
    }
  }
}

// TTI (solvers/contracts/tti.h): per propagator the two (p, q) pairs, pass 1's two-field scratch and
// five coefficient arrays besides v2dt2 (what kernels/cuda/tti/tti_device.cuh allocates), and the ring
// of both fields 8 cells thick with its cell list (cuda_tti_boundary_store.cu); a run that does not
// fit is refused with both numbers, as the acoustic one.
TEST(MemoryBudget, TtiCountsBothFieldsTheCoefficientsAndTheThickRing) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 0, 90};
  plan.physics = Physics::tti;
  const uint64_t padded = uint64_t(plan.layout.size);
  const MemoryEstimate e = estimate_run_memory(plan);
  EXPECT_EQ(item(e.device, "wavefields"), 2 * 2 * 2 * padded * 4); // 2 fields x 2 time levels x (p, q)
  EXPECT_EQ(item(e.device, "TTI coefficients and pass-1 scratch"), 2 * 13 * padded * 4);
  EXPECT_EQ(item(e.device, "v2dt2"), 2 * padded * 4);
  const uint64_t ring = 80ull * 80 * 90 - 64ull * 64 * 74; // cells less than 8 from a face
  ASSERT_EQ(ring, uint64_t(tti_ring_cells(plan.box)));
  EXPECT_EQ(item(e.device, "boundary store"), 2 * ring * 999 * 4 + 2 * ring * 8);
  plan = plan_for(600, 3000);
  plan.physics = Physics::tti;
  const uint64_t needed = estimate_run_memory(plan).device_bytes();
  ASSERT_GT(needed, 80 * kGiB);
  const std::string message = refusal(plan, 80 * kGiB, 1000 * kGiB);
  EXPECT_THAT(message, HasSubstr("this run needs " + format_bytes(needed) + " of GPU memory but 80.00 GiB are free"));
  // Only what TTI has: snapshots in host memory (of p), no half storage.
  EXPECT_THAT(message, HasSubstr("--reconstruction snapshots --snapshot-memory host"));
  EXPECT_THAT(message, Not(HasSubstr("fp16_storage")));
  EXPECT_THAT(message, HasSubstr("record a shorter time"));
  // The TTI kernels store float32.
  if (cuda_built()) {
    EXPECT_EQ(wavefield_element_bytes("tti-pipelined"), 4);
    EXPECT_EQ(wavefield_element_bytes("tti-naive"), 4);
  }
}

TEST(MemoryBudget, HalfPrecisionVariantsStoreTwoBytes) {
  EXPECT_EQ(wavefield_element_bytes("auto"), 4);
  EXPECT_EQ(wavefield_element_bytes("cpu"), 4);
  // The table knows fp16_storage only in a CUDA build; without it every name is float32.
  EXPECT_EQ(wavefield_element_bytes("fp16_storage"), cuda_built() ? 2 : 4);
  if (cuda_built()) {
    EXPECT_EQ(wavefield_element_bytes("naive_32x32"), 4);
  }
}

// half_v2dt2 and bfp16_model16 keep, besides the propagator's float32 v2dt2 (which the points, the
// ring and the imaging use), the copy their step kernel reads (kernels/cuda/fields/cuda_propagator.cu):
// the estimate counts it per propagator, and a variant without one adds nothing.
TEST(MemoryBudget, TheStepKernelsOwnModelCopyIsCounted) {
  EXPECT_EQ(kernel_model_copy_bytes("auto"), 0.0);
  EXPECT_EQ(kernel_model_copy_bytes("cpu"), 0.0);
  if (cuda_built()) {
    EXPECT_EQ(kernel_model_copy_bytes("half_v2dt2"), 2.0);
    EXPECT_EQ(kernel_model_copy_bytes("bfp16_model16"), 2.0 + 1.0 / 16);
    for (const char* none : {"tma_ring", "regqueue_vec4", "fp16_storage", "bfp16", "tti-pipelined"})
      EXPECT_EQ(kernel_model_copy_bytes(none), 0.0) << none;
  }
  RunMemoryPlan plan = plan_for(100, 1000);
  const uint64_t padded = uint64_t(plan.layout.size);
  const MemoryEstimate without = estimate_run_memory(plan);
  EXPECT_FALSE(has_item(without.device, "v2dt2 as the step kernel reads it"));
  plan.model_copy_bytes = 2;
  const MemoryEstimate with = estimate_run_memory(plan);
  EXPECT_EQ(item(with.device, "v2dt2 as the step kernel reads it"), 2 * padded * 2); // 2 propagators
  EXPECT_EQ(with.device_bytes() - without.device_bytes(), 2 * padded * 2);
  plan.migration = false; // modeling: one propagator
  EXPECT_EQ(item(estimate_run_memory(plan).device, "v2dt2 as the step kernel reads it"), padded * 2);
}

// bfp16 (block floating point): 2-byte mantissas plus an exponent byte per 16 elements in each
// wavefield, and a float32 v2dt2 (kernels/cuda/steps/bfp16.cu).
TEST(MemoryBudget, BlockFloatingPointCountsExponentsAndAFloatModel) {
  EXPECT_FALSE(wavefield_block_exponents("auto"));
  EXPECT_FALSE(wavefield_block_exponents("cpu"));
  EXPECT_EQ(wavefield_block_exponents("bfp16"), cuda_built());
  if (cuda_built()) {
    EXPECT_EQ(wavefield_element_bytes("bfp16"), 2);
    EXPECT_FALSE(wavefield_block_exponents("fp16_storage"));
    // What it does not offer is refused before the run, naming the variant.
    try {
      check_variant_operations("bfp16", true, false, Physics::acoustic, "rtm migrate");
      ADD_FAILURE() << "migration accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("--variant bfp16"));
      EXPECT_THAT(e.what(), HasSubstr("migration"));
    }
    EXPECT_THROW(check_variant_operations("bfp16_model16", false, true, Physics::acoustic, "rtm model"), InputError);
    EXPECT_NO_THROW(check_variant_operations("bfp16", false, false, Physics::acoustic, "rtm model"));
    EXPECT_NO_THROW(check_variant_operations("tma_ring", true, true, Physics::acoustic, "rtm migrate"));
  }
  RunMemoryPlan half = plan_for(100, 500);
  half.migration = false;
  half.field_bytes = 2;
  RunMemoryPlan bfp = half;
  bfp.block_exponents = true;
  const uint64_t padded = uint64_t(half.layout.size);
  const MemoryEstimate h = estimate_run_memory(half), b = estimate_run_memory(bfp);
  EXPECT_EQ(item(h.device, "wavefields"), 2 * padded * 2);
  EXPECT_EQ(item(b.device, "wavefields"), 2 * (padded * 2 + padded / 16));
  EXPECT_EQ(item(h.device, "v2dt2"), padded * 2);
  EXPECT_EQ(item(b.device, "v2dt2"), padded * 4);
}

TEST(MemoryBudget, SizesReadInGibOrInMibWhenSmall) {
  EXPECT_EQ(format_bytes(80 * kGiB), "80.00 GiB");
  EXPECT_EQ(format_bytes(kGiB / 100), "0.01 GiB");
  EXPECT_EQ(format_bytes(3 * (1ull << 20) + (1ull << 18)), "3.25 MiB");
}

// The CPU backend computes in host memory: its wavefields, each field's v2dt2 (the padded one it
// steps with and the dense copy of its setup), the C-PML's memory, the image sums and the boundary
// store are host items there (kernels/cpu/cpu_propagator.cpp allocates them), the upload staging is
// the CUDA backend's alone, and the driver's v2dt2 is its dense setup only. Before, a CPU run was
// estimated at its v2dt2 and gathers alone: an 1100^3 model passed a 24 GB machine's check and was
// killed by the out-of-memory killer.
TEST(MemoryBudget, TheCpuBackendsFieldsAreHostMemory) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 10, 90};
  plan.cpml = true;
  const uint64_t padded = uint64_t(plan.layout.size), interior = 1000000;
  const MemoryEstimate device = estimate_run_memory(plan);
  plan.fields_on_host = true;
  const MemoryEstimate cpu = estimate_run_memory(plan);
  EXPECT_EQ(cpu.device_bytes(), device.device_bytes()) << "the device list stays, for the fake GPU check";
  EXPECT_EQ(item(cpu.host, "wavefields (CPU backend)"), item(device.device, "wavefields"));
  EXPECT_EQ(item(cpu.host, "C-PML memory variables (CPU backend)"),
            item(device.device, "C-PML memory variables"));
  EXPECT_EQ(item(cpu.host, "boundary store (CPU backend)"), item(device.device, "boundary store"));
  EXPECT_EQ(item(cpu.host, "image and illumination (CPU backend)"),
            item(device.device, "image and illumination"));
  EXPECT_EQ(item(cpu.host, "v2dt2 of each field (CPU backend)"), 2 * (padded + interior) * 4);
  EXPECT_EQ(item(cpu.host, "v2dt2"), interior * 4) << "the driver's dense setup";
  EXPECT_FALSE(has_item(cpu.host, "upload staging (CPU backend)"));
  // Everything but the staging buffer and the host's padded v2dt2 moves over.
  EXPECT_EQ(cpu.host_bytes(), device.host_bytes() - padded * 4 + device.device_bytes() -
                                  item(device.device, "upload staging") + 2 * interior * 4);
  // A group's ranks: the same on each slab.
  plan.ranks_per_shot = 2;
  const MemoryEstimate slab = estimate_run_memory(plan);
  EXPECT_TRUE(has_item(slab.host, "wavefields (CPU backend)"));
  EXPECT_EQ(item(slab.host, "wavefields (CPU backend)"), item(slab.device, "wavefields"));
}

// What the command and the driver hold beside the propagators: the model as read and the
// simulation grid's copy of it (one rank per shot; with TTI each with its four anisotropy arrays),
// and every trace of the shot file a migration reads.
TEST(MemoryBudget, TheModelsCopiesAndTheShotFilesTracesAreCounted) {
  RunMemoryPlan plan = plan_for(100, 1000);
  plan.box = Box{10, 90, 10, 90, 10, 90};
  const uint64_t model = 80ull * 80 * 80;
  EXPECT_FALSE(has_item(estimate_run_memory(plan).host, "velocity model (2 copies)"));
  plan.model_copies = 2;
  EXPECT_EQ(item(estimate_run_memory(plan).host, "velocity model (2 copies)"), 2 * model * 4);
  plan.physics = Physics::tti;
  EXPECT_EQ(item(estimate_run_memory(plan).host, "velocity model (2 copies, with its anisotropy)"),
            2 * model * 5 * 4);
  plan.physics = Physics::acoustic;
  plan.input_trace_values = 12345;
  EXPECT_EQ(item(estimate_run_memory(plan).host, "the shot file's traces"), 12345u * 4);
  plan.ranks_per_shot = 2; // a group's ranks hold model planes ("model planes (hyperslab)")
  EXPECT_FALSE(has_item(estimate_run_memory(plan).host, "velocity model (2 copies)"));
  EXPECT_EQ(item(estimate_run_memory(plan).host, "the shot file's traces"), 12345u * 4);
}

// Under an address-space limit (ulimit -v, RLIMIT_AS) an allocation beyond it fails however much
// memory the machine has: what is left of the limit is what may still be allocated.
TEST(MemoryBudget, AnAddressSpaceLimitBoundsWhatIsAvailable) {
  std::istringstream status("Name:\trtm\nVmPeak:\t  300000 kB\nVmSize:\t  250000 kB\nVmRSS: 1000 kB\n");
  EXPECT_EQ(parse_vm_size(status), 250000ull * 1024);
  std::istringstream none("Name: rtm\n");
  EXPECT_EQ(parse_vm_size(none), 0u);
  const uint64_t unlimited = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(address_space_left(unlimited, 5 * kGiB), unlimited);
  EXPECT_EQ(address_space_left(8 * kGiB, 5 * kGiB), 3 * kGiB);
  EXPECT_EQ(address_space_left(4 * kGiB, 5 * kGiB), 0u) << "used up";
  // Checked on this process: the smaller of the two.
  std::ifstream meminfo("/proc/meminfo");
  const uint64_t mem_available = parse_mem_available(meminfo);
  EXPECT_LE(host_available_bytes(), mem_available);
}

TEST(MemoryBudget, MemAvailableIsReadFromMeminfo) {
  std::istringstream meminfo("MemTotal:       32780416 kB\nMemFree:         1234567 kB\n"
                             "MemAvailable:   24000000 kB\nBuffers:          100 kB\n");
  EXPECT_EQ(parse_mem_available(meminfo), 24000000ull * 1024);
  std::istringstream old_kernel("MemTotal: 100 kB\nMemFree: 50 kB\n");
  EXPECT_EQ(parse_mem_available(old_kernel), 0u);
  std::istringstream garbage("MemAvailable: lots\n");
  EXPECT_EQ(parse_mem_available(garbage), 0u);
  EXPECT_GT(host_available_bytes(), 0u) << "this test runs on Linux, which has /proc/meminfo";
}

// A group of ranks per shot: one rank's slab, the C-PML's z layers in the end slabs.
RunMemoryPlan split_plan(int ranks) {
  RunMemoryPlan plan = plan_for(200, 500);
  plan.box = Box{20, 180, 20, 180, 20, 180};
  plan.cpml = true;
  plan.ranks_per_shot = ranks;
  return plan;
}

TEST(MemoryBudget, AGroupOfRanksIsEstimatedPerRankForItsSlab) {
  const MemoryEstimate one = estimate_run_memory(split_plan(1));
  const MemoryEstimate two = estimate_run_memory(split_plan(2));
  // 200 planes as 100 + 100, each with 4 ghost planes: 104 local planes.
  const uint64_t local_padded = uint64_t(make_layout(200, 200, 104).size);
  EXPECT_EQ(item(two.device, "wavefields"), 2 * 2 * local_padded * 4);
  EXPECT_EQ(item(two.device, "v2dt2"), 2 * local_padded * 4);
  // The ring on planes 20..104 of slab 0: 4 full planes of 160^2, 80 planes of 160^2 - 152^2.
  const uint64_t ring = 4 * 25600 + 80 * (25600 - 23104);
  EXPECT_EQ(item(two.device, "boundary store (this slab's part)"), ring * 499 * 4 + ring * 8);
  // Own planes 20..100 of the image box.
  EXPECT_EQ(item(two.device, "image and illumination (own planes)"), 2 * 80 * 25600 * 4);
  EXPECT_LT(double(two.device_bytes()), 0.56 * double(one.device_bytes()));
  EXPECT_GT(double(two.device_bytes()), 0.5 * double(one.device_bytes()));
  // Host: the slab's model planes (84 of the box) and v2dt2, never the whole grid.
  EXPECT_EQ(item(two.host, "model planes (hyperslab)"), 84 * 25600 * 4);
  EXPECT_FALSE(has_item(two.host, "v2dt2"));
  // Too thin for the rank count: the decomposition's own refusal.
  EXPECT_THROW(estimate_run_memory(split_plan(26)), InputError);
}

TEST(MemoryBudget, ATtiGroupIsEstimatedWithItsEightPlaneHalosAndBothFields) {
  RunMemoryPlan plan = split_plan(2);
  plan.cpml = false; // TTI runs with the sponge
  plan.physics = Physics::tti;
  const MemoryEstimate two = estimate_run_memory(plan);
  // 200 planes as 100 + 100, each with 8 ghost planes (the TTI step's two passes): 108 local planes.
  const uint64_t local_padded = uint64_t(make_layout(200, 200, 108).size);
  EXPECT_EQ(item(two.device, "wavefields"), 2 * 2 * 2 * local_padded * 4); // p and q
  EXPECT_EQ(item(two.device, "TTI coefficients and pass-1 scratch"), 2 * 13 * local_padded * 4);
  // The 8-cell ring of p and q on planes 20..108 of slab 0: 8 full planes of 160^2, 80 planes of
  // 160^2 - 144^2.
  const uint64_t ring = 2 * (8 * 25600 + 80 * (25600 - 20736));
  EXPECT_EQ(item(two.device, "boundary store (this slab's part)"), ring * 499 * 4 + ring * 8);
  EXPECT_EQ(item(two.host, "TTI model planes (hyperslab)"), 4 * 88 * 25600 * 4);
  plan.ranks_per_shot = 1;
  const uint64_t one = estimate_run_memory(plan).device_bytes();
  EXPECT_LT(double(two.device_bytes()), 0.58 * double(one));
  EXPECT_GT(double(two.device_bytes()), 0.5 * double(one));
  // 16-plane slabs at the least: 200 planes go over 12 ranks, not 13 (the isotropic halo: 25).
  plan.ranks_per_shot = 12;
  EXPECT_NO_THROW(estimate_run_memory(plan));
  plan.ranks_per_shot = 13;
  EXPECT_THROW(estimate_run_memory(plan), InputError);
}

TEST(MemoryBudget, ARefusalNamesTheRanksPerShotThatFit) {
  RunMemoryPlan plan = split_plan(1);
  const uint64_t one = estimate_run_memory(plan).device_bytes();
  RunMemoryPlan three = split_plan(3);
  const uint64_t per_rank_of_three = estimate_run_memory(three).device_bytes();
  three.ranks_per_shot = 2;
  const uint64_t per_rank_of_two = estimate_run_memory(three).device_bytes();
  // A GPU between what two and three ranks per shot need: three is the fewest that fits.
  const uint64_t free = uint64_t((double(per_rank_of_two) + double(per_rank_of_three)) / 2 / 0.95);
  EXPECT_EQ(ranks_per_shot_that_fit(plan, free), 3);
  const std::string message = refusal(plan, free, 0);
  EXPECT_THAT(message, HasSubstr(format_bytes(one)));
  EXPECT_THAT(message, HasSubstr("with --ranks-per-shot 3 each GPU needs " +
                                 format_bytes(per_rank_of_three)));
  // A group already of two is refused per rank, with the same advice.
  plan.ranks_per_shot = 2;
  EXPECT_THAT(refusal(plan, free, 0), HasSubstr("per rank of a group of 2"));
  EXPECT_THAT(refusal(plan, free, 0), HasSubstr("--ranks-per-shot 3"));
  // Nothing fits: no rank count is named.
  EXPECT_EQ(ranks_per_shot_that_fit(plan, 1000), 0);
  EXPECT_THAT(refusal(plan, 1000, 0), Not(HasSubstr("with --ranks-per-shot")));
}

} // namespace
} // namespace rtm
