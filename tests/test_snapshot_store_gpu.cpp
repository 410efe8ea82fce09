// The CUDA snapshot store (kernels/cuda/fields/cuda_snapshot_store.cu) against the CPU's
// (solvers/contracts/wavefield.h, HostSnapshotStore): in device and in pinned host memory, float32
// and both 16-bit codes, every slot restores the CPU store's floats bit for bit, in the backward
// sweep's order (the host store's prefetch) and out of it; and a two-sweep migration on the GPU
// against the same on the CPU. Skipped where no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "solvers/drivers/backend.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/relative_l2.h"
#include "tests/support/two_layer_migration.h"

namespace rtm {
namespace {

const char* precision_name(RingPrecision p) {
  return p == RingPrecision::full ? "float32" : p == RingPrecision::half16 ? "float16" : "int16";
}

// Four slots of scaled copies of a random field (many magnitudes; a box of several blocks and a
// partial last one), restored in the order 3 2 1 0 1 3; the box values after each restore.
std::vector<std::vector<float>> restored_slots(const std::string& backend, const test::RtmProblem& p,
                                               const std::vector<float>& cur, RingPrecision precision,
                                               SnapshotPlace place) {
  BackendOptions options;
  options.backend = backend;
  options.variant = "regqueue_vec4";
  std::ostringstream log;
  std::unique_ptr<ShotFields> f = make_shot_fields(make_propagator_setup(p.sim), options, log);
  Wavefield& w = f->source();
  const std::vector<float> zero(cur.size(), 0.0f);
  std::vector<std::vector<float>> out;
  {
    const std::unique_ptr<SnapshotStore> store = w.make_snapshot_store(p.box, 4, precision, place);
    for (int s = 0; s < 4; ++s) {
      std::vector<float> scaled = cur;
      for (float& v : scaled) v *= float(1 + 3 * s);
      w.set_state(zero, scaled);
      store->save(s);
    }
    for (int s : {3, 2, 1, 0, 1, 3}) {
      w.set_state(zero, zero);
      store->restore(s);
      out.emplace_back();
      w.copy_current(p.box, out.back());
    }
  }
  return out;
}

TEST(SnapshotStoreGpu, RestoresTheCpuStoresValuesBitForBit) {
  SKIP_WITHOUT_GPU();
  const test::RtmProblem p = test::layered_problem(37, 29, 33, 8, 4);
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> cur(size_t(make_propagator_setup(p.sim).layout.size));
  for (size_t c = 0; c < cur.size(); ++c) cur[c] = u(rng) * std::pow(10.0f, float(c % 31) - 20.0f);
  for (const RingPrecision precision :
       {RingPrecision::full, RingPrecision::half16, RingPrecision::fixed16}) {
    const auto cpu = restored_slots("cpu", p, cur, precision, SnapshotPlace::host);
    for (const SnapshotPlace place : {SnapshotPlace::device, SnapshotPlace::host}) {
      const auto gpu = restored_slots("cuda", p, cur, precision, place);
      ASSERT_EQ(gpu.size(), cpu.size());
      size_t differ = 0, values = 0;
      for (size_t r = 0; r < cpu.size(); ++r) {
        ASSERT_EQ(gpu[r].size(), cpu[r].size());
        for (size_t c = 0; c < cpu[r].size(); ++c) differ += gpu[r][c] != cpu[r][c];
        values += cpu[r].size();
      }
      std::printf("%s snapshots in %s memory: %zu of %zu restored values differ from the CPU's\n",
                  precision_name(precision), snapshot_place_name(place), differ, values);
      EXPECT_EQ(differ, 0u) << precision_name(precision) << " " << snapshot_place_name(place);
    }
  }
}

// The whole two-sweep migration (int16 snapshots in device memory, then in host memory) on the
// GPU against the CPU's, and against the GPU's three-sweep image.
TEST(SnapshotStoreGpu, TwoSweepMigrationMatchesTheCpuAndTheThreeSweepImage) {
  SKIP_WITHOUT_GPU();
  test::TwoLayerMigration run;
  std::ostringstream log;
  const ShotFile shots = run.line_shots(log);
  run.params.reconstruction = Reconstruction::snapshots;
  run.params.backend.backend = "cpu";
  const MigrationResult cpu = migrate_shots(run.migration, shots, run.params, log);
  ASSERT_EQ(cpu.reconstruction, Reconstruction::snapshots);
  run.params.backend.backend = "cuda";
  for (const SnapshotMemory memory : {SnapshotMemory::device, SnapshotMemory::host}) {
    run.params.snapshot_memory = memory;
    const MigrationResult gpu = migrate_shots(run.migration, shots, run.params, log);
    const double e = relative_l2(gpu.image, cpu.image);
    std::printf("two-sweep migration, snapshots in %s memory: GPU vs CPU image %.3g\n",
                memory == SnapshotMemory::device ? "device" : "host", e);
    EXPECT_LE(e, 1e-4);
  }
  run.params.reconstruction = Reconstruction::boundary;
  const MigrationResult three = migrate_shots(run.migration, shots, run.params, log);
  run.params.reconstruction = Reconstruction::snapshots;
  run.params.snapshot_memory = SnapshotMemory::automatic;
  const MigrationResult two = migrate_shots(run.migration, shots, run.params, log);
  const double e = relative_l2(two.image, three.image);
  std::printf("GPU: two-sweep (int16 snapshots) vs three-sweep image %.3g\n", e);
  EXPECT_LE(e, 1e-3);
}

} // namespace
} // namespace rtm
