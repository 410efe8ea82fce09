// Checkpoints of a migration whose model is split over the ranks of a shot group
// (solvers/drivers/slab_checkpoint.h; docs/decomposition.md, "What each rank reads and holds"):
// each rank writes its own planes of the partial sums into the group's checkpoint file and reads
// back only its planes on resume. Run under the MPI launcher with 2, 3 and 4 ranks
// (tests/CMakeLists.txt). Checked, bit for bit: a run over every rank stopped after some shots and
// resumed equals the uninterrupted run; a one-rank checkpoint resumes on the slabs and a slab
// checkpoint resumes on one rank; with an even rank count, the checkpoints of two shot groups are
// merged plane by plane as one rank merges the whole arrays.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "io/atomic_file.h"
#include "io/checkpoint_file.h"
#include "io/velocity_model.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/mpi_test_main.h"
#include "tests/support/random_shots.h"
#include "tests/support/shared_temp_path.h"

namespace rtm::test {
namespace {
namespace fs = std::filesystem;

constexpr int kShots = 4;
constexpr int kStopAfter = 2; // shots finished before the stop

ShotFile make_shots(const VelocityModel& shape) {
  ShotFile shots = ricker_shot_file(40, 1e-3, 20);
  const double y = 0.5 * (shape.ny - 1) * shape.dy;
  for (int r = 0; r < 8; ++r) shots.receivers.push_back({20.0, y, (1 + r * (shape.nx - 3) / 7) * shape.dx});
  std::mt19937 random(11);
  for (int s = 0; s < kShots; ++s) {
    ShotGather g;
    g.id = s;
    g.source = {30.0, y, (2 + s * (shape.nx - 5) / (kShots - 1)) * shape.dx};
    g.data = random_traces(shots, random);
    shots.shots.push_back(g);
  }
  return shots;
}

MigrationParams params() {
  MigrationParams p;
  p.boundary.width = 4;
  p.backend.backend = "cpu";
  // The random traces as they are: the direct-wave mute would zero these short records and with
  // them the raw image.
  p.direct_wave = DirectWaveRemoval::none;
  return p;
}

// Stops at the (n+1)-th shot boundary: after n shots (every rank counts alike, so they agree).
std::function<int()> stop_after(int n) {
  auto boundaries = std::make_shared<int>(0);
  return [boundaries, n] { return ++*boundaries > n ? 15 : 0; };
}

struct Files {
  std::string dir, model;
};

class SlabCheckpoint : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    files_.dir = shared_temp_stem("rtm_slab_checkpoint_" + std::string(info->name()));
    files_.model = files_.dir + "/model.h5";
    if (world_rank() == 0) {
      fs::remove_all(files_.dir);
      fs::create_directories(files_.dir);
      // 24 planes and 4-cell layers: 32 compute planes, at least 8 per rank for up to 4 ranks.
      write_velocity_model(files_.model, layered_model({22, 12, 24, 10, 10, 10}, {90, 170},
                                                       {1800, 2300, 2800}));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(files_.dir);
  }
  std::string path(const std::string& name) const { return files_.dir + "/" + name; }
  Files files_;
};

// The model over the group's slabs, and what a migration needs with it.
struct SplitRun {
  SplitRun(const std::string& model_path, const ParallelContext& parallel_in)
      : parallel(parallel_in),
        part(read_slab_model(model_path, "vp", VelocityCheck::plausible, 0.0, params().boundary,
                             parallel.group_comm())),
        shots(make_shots(part.shape)) {}

  MigrationControl control(const std::string& output) const {
    MigrationControl c;
    c.parallel = &parallel;
    c.checkpoint_output = output;
    c.identity = migration_identity(part, parallel.group_comm(), shots, "shots.h5", params());
    return c;
  }
  MigrationResult migrate(const MigrationControl& control) const {
    std::ostringstream log;
    return migrate_shots(part, shots, params(), log, nullptr, control);
  }

  const ParallelContext& parallel;
  SlabModel part;
  ShotFile shots;
};

// The same on one rank with the whole model (world rank 0 alone).
struct WholeRun {
  explicit WholeRun(const std::string& model_path)
      : model(read_velocity_model(model_path)), shots(make_shots(model)) {}

  MigrationControl control(const std::string& output) const {
    MigrationControl c;
    c.checkpoint_output = output;
    c.identity = migration_identity(model, shots, "shots.h5", params());
    return c;
  }
  MigrationResult migrate(const MigrationControl& control) const {
    std::ostringstream log;
    return migrate_shots(model, shots, params(), log, nullptr, control);
  }

  VelocityModel model;
  ShotFile shots;
};

void expect_same_sums(const MigrationResult& a, const MigrationResult& b, const std::string& what) {
  EXPECT_EQ(a.image_z_first, b.image_z_first) << what;
  EXPECT_TRUE(a.raw_image == b.raw_image) << what << ": /image_raw differs";
  EXPECT_TRUE(a.illumination == b.illumination) << what << ": /illumination differs";
  EXPECT_TRUE(a.image == b.image) << what << ": /image differs";
}

// Each rank's planes of a one-rank result (on world rank 0) equal its own planes of `split`.
void expect_planes_of_one_rank(MigrationResult alone, const MigrationResult& split,
                               const VelocityModel& shape, const std::string& what) {
  const int cells = shape.nx * shape.ny * shape.nz;
  for (std::vector<float>* volume : {&alone.raw_image, &alone.illumination, &alone.image}) {
    volume->resize(size_t(cells));
    MPI_Bcast(volume->data(), cells, MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
  const size_t plane = size_t(shape.nx) * size_t(shape.ny);
  auto mine = [&](const std::vector<float>& whole, size_t values) {
    const auto first = whole.begin() + ptrdiff_t(size_t(split.image_z_first) * plane);
    return std::vector<float>(first, first + ptrdiff_t(values));
  };
  EXPECT_TRUE(mine(alone.raw_image, split.raw_image.size()) == split.raw_image) << what << ": /image_raw";
  EXPECT_TRUE(mine(alone.illumination, split.illumination.size()) == split.illumination)
      << what << ": /illumination";
  EXPECT_TRUE(mine(alone.image, split.image.size()) == split.image) << what << ": /image";
}

TEST_F(SlabCheckpoint, StoppedAndResumedOnSlabsEqualsUninterruptedBitwise) {
  const ParallelContext parallel(world_size()); // one group: the model over every rank
  const SplitRun run(files_.model, parallel);
  const MigrationResult whole = run.migrate(run.control(""));
  ASSERT_EQ(whole.stop_signal, 0);

  const std::string output = path("image.h5");
  MigrationControl control = run.control(output);
  control.stop_requested = stop_after(kStopAfter);
  EXPECT_EQ(run.migrate(control).stop_signal, 15);
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) {
    ASSERT_EQ(find_checkpoints(output).size(), 1u);
    // The file the ranks wrote by slabs reads as one whole checkpoint.
    const MigrationCheckpoint saved = read_checkpoint(checkpoint_path(output, 0));
    EXPECT_EQ(saved.finished, (std::vector<long long>{0, 1}));
    EXPECT_EQ(saved.nz, run.part.shape.nz);
    EXPECT_EQ(saved.identity.model_fingerprint, control.identity.model_fingerprint);
    EXPECT_FALSE(fs::exists(temporary_path_for(checkpoint_path(output, 0))));
  }

  control.stop_requested = nullptr;
  control.resume = true;
  const MigrationResult resumed = run.migrate(control);
  EXPECT_EQ(resumed.shots_migrated, kShots - kStopAfter);
  expect_same_sums(resumed, whole, "resumed on " + std::to_string(parallel.size()) + " ranks");

  // The split run's planes are the one-rank run's (world rank 0 runs it alone), and so is the
  // model's fingerprint.
  MPI_Barrier(MPI_COMM_WORLD);
  MigrationResult alone;
  if (parallel.is_root()) {
    const WholeRun one(files_.model);
    alone = one.migrate(one.control(""));
    EXPECT_EQ(one.control("").identity.model_fingerprint, control.identity.model_fingerprint);
    EXPECT_TRUE(std::any_of(alone.raw_image.begin(), alone.raw_image.end(),
                            [](float v) { return v != 0; }))
        << "the raw image should not vanish (the test would compare zeros)";
  }
  expect_planes_of_one_rank(alone, whole, run.part.shape, "the split run");
}

TEST_F(SlabCheckpoint, ResumesAcrossRankCounts) {
  const ParallelContext parallel(world_size());
  const SplitRun run(files_.model, parallel);
  const MigrationResult split_whole = run.migrate(run.control(""));

  // A one-rank checkpoint, resumed on the slabs.
  const std::string from_one = path("from_one.h5");
  if (parallel.is_root()) {
    const WholeRun one(files_.model);
    MigrationControl control = one.control(from_one);
    control.stop_requested = stop_after(kStopAfter);
    EXPECT_EQ(one.migrate(control).stop_signal, 15);
    EXPECT_EQ(find_checkpoints(from_one).size(), 1u);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MigrationControl control = run.control(from_one);
  control.resume = true;
  const MigrationResult resumed_split = run.migrate(control);
  EXPECT_EQ(resumed_split.shots_migrated, kShots - kStopAfter);
  expect_same_sums(resumed_split, split_whole, "a one-rank checkpoint resumed on the slabs");

  // A slab checkpoint, resumed on one rank.
  const std::string from_slabs = path("from_slabs.h5");
  control = run.control(from_slabs);
  control.stop_requested = stop_after(kStopAfter);
  EXPECT_EQ(run.migrate(control).stop_signal, 15);
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) {
    const WholeRun one(files_.model);
    const MigrationResult alone = one.migrate(one.control(""));
    MigrationControl resume = one.control(from_slabs);
    resume.resume = true;
    const MigrationResult resumed_one = one.migrate(resume);
    EXPECT_EQ(resumed_one.shots_migrated, kShots - kStopAfter);
    EXPECT_TRUE(resumed_one.raw_image == alone.raw_image);
    EXPECT_TRUE(resumed_one.illumination == alone.illumination);
    EXPECT_TRUE(resumed_one.image == alone.image);
  }
}

// Two shot groups of R/2 ranks leave two checkpoint files; resumed by one group of every rank,
// each rank merges its planes of both as one rank merges the whole arrays (a copy of the files
// resumed on world rank 0 alone), and the shots left run in the same order: bit for bit.
TEST_F(SlabCheckpoint, TwoGroupsCheckpointsMergeByPlanesAsOneRankMergesThem) {
  if (world_size() % 2 != 0 || world_size() < 4) GTEST_SKIP() << "needs 2 groups of 2 or more ranks";
  const std::string output = path("image.h5"), copy = path("copy.h5");
  {
    const ParallelContext groups(world_size() / 2);
    const SplitRun run(files_.model, groups);
    MigrationControl control = run.control(output);
    control.stop_requested = stop_after(1); // each group stops after its first shot
    EXPECT_EQ(run.migrate(control).stop_signal, 15);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    ASSERT_EQ(find_checkpoints(output).size(), 2u);
    for (int group : {0, 1}) fs::copy_file(checkpoint_path(output, group), checkpoint_path(copy, group));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const ParallelContext parallel(world_size());
  const SplitRun run(files_.model, parallel);
  MigrationControl control = run.control(output);
  control.resume = true;
  const MigrationResult resumed = run.migrate(control);
  EXPECT_EQ(resumed.shots_migrated, kShots - 2);
  MPI_Barrier(MPI_COMM_WORLD);
  MigrationResult alone;
  if (world_rank() == 0) {
    EXPECT_EQ(find_checkpoints(output).size(), 1u) << "the merged file alone stays";
    const WholeRun one(files_.model);
    MigrationControl resume = one.control(copy);
    resume.resume = true;
    alone = one.migrate(resume);
    EXPECT_EQ(alone.shots_migrated, kShots - 2);
  }
  expect_planes_of_one_rank(alone, resumed, run.part.shape, "two groups' checkpoints resumed");
}

} // namespace
} // namespace rtm::test

int main(int argc, char** argv) { return rtm::test::run_mpi_tests(argc, argv); }
