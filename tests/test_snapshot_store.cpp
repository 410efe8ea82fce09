// The snapshot store of two-sweep migration (solvers/contracts/wavefield.h, SnapshotStore) on the
// CPU: what a slot gives back (float32 exactly, 16 bits within the codec's bound of each block's
// largest value), the cells it leaves alone, its slots' independence and its refusals; and the
// choice of the source field's storage from the memory estimate (solvers/drivers/memory_budget.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "solvers/contracts/ring_codec.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/memory_budget.h"
#include "tests/rtm_test_problem.h"

namespace rtm {
namespace {

// A CPU wavefield whose current field is random over many magnitudes (fresh seed, printed on
// failure), and the box of the problem.
struct RandomField {
  test::RtmProblem p = test::layered_problem(23, 19, 21, 6, 4);
  std::unique_ptr<ShotFields> fields;
  std::vector<float> cur;

  explicit RandomField(uint64_t seed) {
    BackendOptions options;
    options.backend = "cpu";
    std::ostringstream log;
    fields = make_shot_fields(make_propagator_setup(p.sim), options, log);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    cur.resize(size_t(fields->source().layout().size));
    for (size_t c = 0; c < cur.size(); ++c) cur[c] = u(rng) * std::pow(10.0f, float(c % 13) - 6.0f);
  }
  Wavefield& w() { return fields->source(); }
  std::vector<float> box_values() {
    std::vector<float> dense;
    w().copy_current(p.box, dense);
    return dense;
  }
};

uint64_t fresh_seed() { return std::random_device{}(); }

bool inside_box(const Box& b, int i, int j, int k) {
  return i >= b.x0 && i < b.x1 && j >= b.y0 && j < b.y1 && k >= b.z0 && k < b.z1;
}

TEST(SnapshotStore, Float32SlotsGiveBackTheFieldExactlyAndLeaveTheRestAlone) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  RandomField f(seed);
  const std::vector<float> zero(f.cur.size(), 0.0f);
  f.w().set_state(zero, f.cur);
  const std::vector<float> expected = f.box_values();
  auto store = f.w().make_snapshot_store(f.p.box, 3, RingPrecision::full, SnapshotPlace::device);
  store->save(1);
  f.w().set_state(zero, zero);
  store->restore(1);
  EXPECT_EQ(f.box_values(), expected);
  std::vector<float> prev, cur;
  f.w().get_state(prev, cur);
  const GridLayout& g = f.w().layout();
  size_t outside_nonzero = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        if (!inside_box(f.p.box, i, j, k)) outside_nonzero += cur[size_t(g.index(i, j, k))] != 0.0f;
  EXPECT_EQ(outside_nonzero, 0u) << "restore wrote outside its box";
}

TEST(SnapshotStore, SixteenBitSlotsStayWithinTheCodecsBoundOfEachBlock) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const RingPrecision precision : {RingPrecision::half16, RingPrecision::fixed16}) {
    RandomField f(seed);
    const std::vector<float> zero(f.cur.size(), 0.0f);
    f.w().set_state(zero, f.cur);
    const std::vector<float> expected = f.box_values();
    auto store = f.w().make_snapshot_store(f.p.box, 2, precision, SnapshotPlace::device);
    store->save(0);
    f.w().set_state(zero, zero);
    store->restore(0);
    const std::vector<float> got = f.box_values();
    ASSERT_EQ(got.size(), expected.size());
    // A block (a row's cells, kRingBlock at a time from its start) keeps 11 significant bits of
    // each value (float16: error <= 2^-11 of the value, so of the block's largest) or 15 below its
    // largest (int16: <= 2^(E-16)); both within 2^-11 of it.
    const size_t row = size_t(f.p.box.nx());
    size_t worse = 0, rounded = 0;
    for (size_t r0 = 0; r0 < got.size(); r0 += row)
      for (size_t c0 = r0; c0 < r0 + row; c0 += kRingBlock) {
        const size_t c1 = std::min(r0 + row, c0 + kRingBlock);
        float largest = 0.0f;
        for (size_t c = c0; c < c1; ++c) largest = std::max(largest, std::abs(expected[c]));
        for (size_t c = c0; c < c1; ++c) {
          worse += std::abs(got[c] - expected[c]) > std::ldexp(largest, -11);
          rounded += got[c] != expected[c];
        }
      }
    EXPECT_EQ(worse, 0u) << (precision == RingPrecision::half16 ? "float16" : "int16");
    EXPECT_GT(rounded, 0u) << "the 16-bit codes were not used";
  }
}

TEST(SnapshotStore, SlotsAreIndependentAndRestoreInAnyOrder) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  RandomField f(seed);
  const std::vector<float> zero(f.cur.size(), 0.0f);
  auto store = f.w().make_snapshot_store(f.p.box, 3, RingPrecision::half16, SnapshotPlace::host);
  std::vector<std::vector<float>> kept(3);
  for (int s = 0; s < 3; ++s) {
    std::vector<float> scaled = f.cur;
    for (float& v : scaled) v *= float(s + 1);
    f.w().set_state(zero, scaled);
    store->save(s);
    store->restore(s);
    kept[size_t(s)] = f.box_values();
  }
  for (int s : {2, 0, 1, 1}) {
    f.w().set_state(zero, zero);
    store->restore(s);
    EXPECT_EQ(f.box_values(), kept[size_t(s)]) << "slot " << s;
  }
  EXPECT_THROW(store->save(3), std::out_of_range);
  EXPECT_THROW(store->restore(-1), std::out_of_range);
  EXPECT_THROW(f.w().make_snapshot_store(f.p.box, 0, RingPrecision::full, SnapshotPlace::device),
               std::invalid_argument);
}

// ---- the choice of automatic reconstruction ----------------------------------------------------

// A 200^3 grid, 1000 steps, snapshots every 5: 200 16-bit snapshots of the 176^3 box, 2.2 GB.
RunMemoryPlan gpu_plan() {
  RunMemoryPlan plan;
  plan.layout = make_layout(200, 200, 200);
  plan.box = Box{12, 188, 12, 188, 12, 188};
  plan.nt = 1000;
  plan.receivers = 100;
  plan.snapshot_interval = 5;
  plan.snapshot_precision = RingPrecision::half16;
  return plan;
}
constexpr uint64_t kGiB = uint64_t(1) << 30;

uint64_t device_bytes_with(RunMemoryPlan plan, SourceWavefieldStorage storage, SnapshotPlace place) {
  plan.storage = storage;
  plan.snapshot_place = place;
  return estimate_run_memory(plan).device_bytes();
}

TEST(SourceStorageChoice, SnapshotsOnTheDeviceWhereTheyFitThenTheHostThenBoundary) {
  const RunMemoryPlan plan = gpu_plan();
  const uint64_t with_device =
      device_bytes_with(plan, SourceWavefieldStorage::snapshots, SnapshotPlace::device);
  const uint64_t with_host = device_bytes_with(plan, SourceWavefieldStorage::snapshots, SnapshotPlace::host);
  // On the device: 200 slots; in host memory: 2 staging slots there.
  const uint64_t slot = uint64_t(coded_rows_bytes(176, 176LL * 176, RingPrecision::half16));
  EXPECT_EQ(with_device - with_host, 198 * slot);

  // Plenty of both.
  SourceStorageChoice c = choose_source_storage(plan, 80 * kGiB, 500 * kGiB, true);
  EXPECT_EQ(c.storage, SourceWavefieldStorage::snapshots);
  EXPECT_EQ(c.place, SnapshotPlace::device);
  // The device holds the run but not its snapshots: pinned host memory.
  const uint64_t tight = uint64_t(double(with_host) / kSnapshotDeviceShare) + kGiB / 8;
  ASSERT_LT(double(with_device), double(kSnapshotDeviceShare) * double(with_device + kGiB));
  c = choose_source_storage(plan, tight, 500 * kGiB, true);
  EXPECT_EQ(c.storage, SourceWavefieldStorage::snapshots);
  EXPECT_EQ(c.place, SnapshotPlace::host) << c.reason;
  // Neither: boundary saving, the reason naming both sizes.
  c = choose_source_storage(plan, tight, 2 * kGiB, true);
  EXPECT_EQ(c.storage, SourceWavefieldStorage::boundary_saving);
  EXPECT_NE(c.reason.find("host memory"), std::string::npos) << c.reason;
  // Not offered (TTI), or not allowed: boundary saving, or the other place.
  EXPECT_EQ(choose_source_storage(plan, 80 * kGiB, 500 * kGiB, false).storage,
            SourceWavefieldStorage::boundary_saving);
  c = choose_source_storage(plan, 80 * kGiB, 500 * kGiB, true, /*allow_device=*/false);
  EXPECT_EQ(c.place, SnapshotPlace::host);
  EXPECT_EQ(choose_source_storage(plan, tight, 500 * kGiB, true, true, /*allow_host=*/false).storage,
            SourceWavefieldStorage::boundary_saving);
  // Unknown host memory: no snapshots.
  EXPECT_EQ(choose_source_storage(plan, 80 * kGiB, 0, true).storage,
            SourceWavefieldStorage::boundary_saving);
}

TEST(SourceStorageChoice, TheCpuBackendKeepsThemInHostMemoryWhereTheyFit) {
  RunMemoryPlan plan = gpu_plan();
  plan.fields_on_host = true;
  SourceStorageChoice c = choose_source_storage(plan, 0, 64 * kGiB, true);
  EXPECT_EQ(c.storage, SourceWavefieldStorage::snapshots);
  c = choose_source_storage(plan, 0, 2 * kGiB, true);
  EXPECT_EQ(c.storage, SourceWavefieldStorage::boundary_saving) << c.reason;
}

} // namespace
} // namespace rtm
